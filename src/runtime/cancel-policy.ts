/**
 * Who may cancel a job (docs/api.md, "runtime.cancelJob"): never a caller of another tenant;
 * its submitter (the same caller id and tenant); then a caller the cancel policy allows, asked
 * only within the job's tenant (src/callers/tenant-rules.ts), so no policy can cross tenants.
 * The default policy allows a caller holding the scope `warrant:cancel`. Fails closed: a policy
 * that throws, rejects or answers anything but `true` refuses.
 */
import type { ExecutionCaller } from '../callers/execution-caller.js';
import { askWithinTenant, isSubmitter } from '../callers/tenant-rules.js';
import type { Job } from '../jobs/job.js';
import type { CancelPolicy } from './runtime-options.js';

/** The scope that lets a caller cancel the jobs of its tenant (default policy). */
export const CANCEL_SCOPE = 'warrant:cancel';

/** The default cancel policy: the scope `warrant:cancel` (the tenant rule applies around it). */
export const defaultCancelPolicy: CancelPolicy = (caller) =>
  (caller.scopes ?? []).includes(CANCEL_SCOPE);

/** Whether `caller` may cancel `job`. */
export async function mayCancel(
  caller: ExecutionCaller,
  job: Job,
  policy: CancelPolicy = defaultCancelPolicy,
): Promise<boolean> {
  if (isSubmitter(caller, job.caller)) return true;
  return askWithinTenant(caller, job.caller, () => policy(caller, job));
}
