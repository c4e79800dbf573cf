/**
 * Who may read a job (docs/api.md, "Reading and tenants"): never across tenants; its submitter
 * (the same caller id and tenant), every actor of its caller's chain, and every approver who decided one of its requests (recorded in
 * its `approval.granted` / `approval.rejected` events); then the read policy, whose default allows a caller holding
 * the scope `warrant:audit`, and a caller the approver policy lets decide one of the job's
 * pending requests. Fails closed: a policy that throws, rejects or answers anything but `true`
 * refuses.
 */
import { askApprover, type ApprovalsConfig } from '../approvals/approver-policy.js';
import { isExpired, requestOf, waitingSteps } from '../approvals/approval-request.js';
import { selfApproval } from '../approvals/self-approval.js';
import type { ExecutionCaller } from '../callers/execution-caller.js';
import { askWithinTenant, isParty, sameTenant } from '../callers/tenant-rules.js';
import type { Job } from '../jobs/job.js';
import type { ReadPolicy } from './runtime-options.js';

/** The scope that lets a caller read every job of its tenant (default policy). */
export const AUDIT_SCOPE = 'warrant:audit';

/** True when the approver policy lets `caller` decide one of `job`'s pending requests. */
export async function mayDecideOne(
  caller: ExecutionCaller,
  job: Job,
  approvals: ApprovalsConfig | undefined,
): Promise<boolean> {
  if (approvals === undefined || job.status !== 'awaiting_approval') return false;
  // Self-approval is refused before the policy is asked: whoever acted reads as a party.
  if (selfApproval(caller, job.caller) !== undefined) return false;
  const now = Date.now();
  for (const index of waitingSteps(job)) {
    const request = requestOf(job, index);
    if (request === undefined || isExpired(request, now)) continue;
    if (await askApprover(approvals.approver, caller, request)) return true;
  }
  return false;
}

/** The default read policy of a runtime with these approvals (undefined: approvals off). */
export function defaultReadPolicy(approvals: ApprovalsConfig | undefined): ReadPolicy {
  return (caller, job) =>
    (caller.scopes ?? []).includes(AUDIT_SCOPE) || mayDecideOne(caller, job, approvals);
}

/**
 * True when `job` records a decision (`approval.granted` or `approval.rejected`) by an approver
 * with `caller`'s id. The recorded approver has the job's tenant (no approver decides across
 * tenants), so the caller must have it too: `mayRead` checks that first.
 */
export function decidedBy(caller: ExecutionCaller, job: Job): boolean {
  return (
    caller.id !== undefined &&
    job.events.some(
      (event) =>
        (event.type === 'approval.granted' || event.type === 'approval.rejected') &&
        event.data?.approver === caller.id,
    )
  );
}

/**
 * Whether `caller` may read `job`: same tenant, then the submitter, the actors of its chain and
 * the approvers who decided
 * (docs/decisions.md, "The operator token and approvers' reads"), then `policy`.
 */
export async function mayRead(
  caller: ExecutionCaller,
  job: Job,
  policy: ReadPolicy,
): Promise<boolean> {
  if (!sameTenant(caller, job.caller)) return false;
  if (isParty(caller, job.caller) || decidedBy(caller, job)) return true;
  return askWithinTenant(caller, job.caller, () => policy(caller, job));
}
