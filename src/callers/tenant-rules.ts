/**
 * The rules about callers that no policy can widen (docs/api.md, "Reading and tenants"): tenants
 * never cross, and the submitter of a job is the caller with its id and tenant; the subject and
 * the actors of a job's caller are its parties (they read it). Every policy
 * (read, cancel, approver, notifications) is asked only inside these rules, through
 * `askWithinTenant`, so a custom policy decides among the callers of the job's tenant and never
 * beyond it.
 */
import type { ExecutionCaller } from './execution-caller.js';
import { actorsOf } from './actor-chain.js';

/** A caller's tenant: its own string `tenant` field, else none. */
export function tenantOf(caller: ExecutionCaller | undefined): string | undefined {
  const tenant = caller?.tenant;
  return typeof tenant === 'string' ? tenant : undefined;
}

/** True when `caller` and the recorded caller of a job have the same tenant (or both none). */
export function sameTenant(
  caller: ExecutionCaller | undefined,
  recorded: ExecutionCaller | undefined,
): boolean {
  return tenantOf(caller) === tenantOf(recorded);
}

/**
 * True when `caller` submitted the job whose recorded caller is `recorded`: the same id (a job
 * submitted without an id has no submitter) and the same tenant.
 */
export function isSubmitter(
  caller: ExecutionCaller | undefined,
  recorded: ExecutionCaller | undefined,
): boolean {
  const id = recorded?.id;
  return id !== undefined && caller?.id === id && sameTenant(caller, recorded);
}

/**
 * True when `caller` is a party to the job whose recorded caller is `recorded`: its submitter
 * (`isSubmitter`: the subject), or one of the actors of its chain (docs/api.md, "Callers: acting
 * for someone"), with the job's tenant.
 */
export function isParty(
  caller: ExecutionCaller | undefined,
  recorded: ExecutionCaller | undefined,
): boolean {
  if (isSubmitter(caller, recorded)) return true;
  const id = caller?.id;
  return (
    typeof id === 'string' &&
    sameTenant(caller, recorded) &&
    actorsOf(recorded).some((actor) => actor.id === id)
  );
}

/**
 * Asks `policy` about a job of `recorded`'s tenant, only when `caller` is of that tenant. Fails
 * closed: another tenant, a throw, a rejection or any answer but `true` is no.
 */
export async function askWithinTenant(
  caller: ExecutionCaller,
  recorded: ExecutionCaller | undefined,
  policy: () => unknown,
): Promise<boolean> {
  if (!sameTenant(caller, recorded)) return false;
  try {
    return (await policy()) === true;
  } catch {
    return false;
  }
}
