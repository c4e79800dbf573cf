/**
 * Who may cancel a job (docs/api.md, "runtime.cancelJob"): its submitter (the same caller id and
 * tenant), or a caller the cancel policy allows; the default policy allows a caller holding the
 * scope `warrant:cancel` in the job's tenant. Fails closed: a policy that throws, rejects or
 * answers anything but `true` refuses.
 */
import type { ExecutionCaller } from '../callers/execution-caller.js';
import type { Job } from '../jobs/job.js';
import type { CancelPolicy } from './runtime-options.js';

/** The scope that lets a caller cancel the jobs of its tenant (default policy). */
export const CANCEL_SCOPE = 'warrant:cancel';

/** A caller's tenant: its own string `tenant` field, else none. */
export function tenantOf(caller: ExecutionCaller | undefined): string | undefined {
  const tenant = caller?.tenant;
  return typeof tenant === 'string' ? tenant : undefined;
}

/** The default cancel policy: the scope `warrant:cancel`, in the job's tenant. */
export const defaultCancelPolicy: CancelPolicy = (caller, job) =>
  tenantOf(caller) === tenantOf(job.caller) && (caller.scopes ?? []).includes(CANCEL_SCOPE);

/** True when `caller` submitted `job`: the same id (a job without one has no submitter) and tenant. */
export function isSubmitter(caller: ExecutionCaller, job: Job): boolean {
  const id = job.caller?.id;
  return id !== undefined && caller.id === id && tenantOf(caller) === tenantOf(job.caller);
}

/** Whether `caller` may cancel `job`. */
export async function mayCancel(
  caller: ExecutionCaller,
  job: Job,
  policy: CancelPolicy = defaultCancelPolicy,
): Promise<boolean> {
  if (isSubmitter(caller, job)) return true;
  try {
    return (await policy(caller, job)) === true;
  } catch {
    return false;
  }
}
