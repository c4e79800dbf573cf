/**
 * Plan requests (docs/api.md, "Plan warrants"): the one approval request of a plan submitted
 * with `approval: 'plan'`, as `listApprovals` answers it and the approver policy sees it, and the
 * arguments of a decision on it (`decideApproval({ kind: 'plan', ... })`), read once and checked.
 */
import type { ExecutionCaller } from '../callers/execution-caller.js';
import type { Job, JobStep } from '../jobs/job.js';
import type { PlanRequestStep, RecordedPlanRequest } from '../jobs/plan-grant.js';

/** One step of a pending plan request, with its input as recorded (references included). */
export interface PlanApprovalStep extends PlanRequestStep {
  /** The input as submitted and recorded: `{ "$ref": ... }` where it waits on a result. */
  readonly input?: unknown;
}

/** A pending plan request. */
export interface PlanApprovalRequest {
  readonly kind: 'plan';
  readonly jobId: string;
  /** What the approver approves: pass it to decideApproval. */
  readonly planDigest: string;
  readonly goal: string;
  /** Every step of the plan, in order, with its preview. */
  readonly steps: readonly PlanApprovalStep[];
  /** The caller who submitted the plan. */
  readonly caller?: ExecutionCaller;
  /** ISO 8601. */
  readonly requestedAt: string;
  /** ISO 8601. */
  readonly expiresAt: string;
}

/** A detached copy (not frozen yet) of the plan request recorded in the job. */
export function planRequestOf(job: Job, recorded: RecordedPlanRequest): PlanApprovalRequest {
  const steps = recorded.steps.map((step, index) => {
    const copy = structuredClone(step) as unknown as Record<string, unknown>;
    const planned = job.steps[index] as JobStep | undefined;
    if (planned?.id === step.id && 'input' in planned) copy.input = structuredClone(planned.input);
    return copy as unknown as PlanApprovalStep;
  });
  const request: Record<string, unknown> = {
    kind: 'plan',
    jobId: job.id,
    planDigest: recorded.planDigest,
    goal: job.goal,
    steps,
  };
  if (job.caller !== undefined) request.caller = structuredClone(job.caller);
  request.requestedAt = recorded.requestedAt;
  request.expiresAt = recorded.expiresAt;
  return request as unknown as PlanApprovalRequest;
}

/** Arguments of `runtime.decideApproval()` on a plan request. */
export interface PlanApprovalDecision {
  kind: 'plan';
  jobId: string;
  /** The request's digest, as `listApprovals` gave it: the approver approves exactly that plan. */
  planDigest: string;
  /** Who decides: a caller (JSON data) with a string `id`. */
  approver: ExecutionCaller;
  decision: 'approve' | 'reject';
  comment?: string;
}

/** A decision on a plan request, read once and checked. */
export interface CheckedPlanDecision {
  readonly kind: 'plan';
  readonly jobId: string;
  readonly planDigest: string;
  readonly approver: ExecutionCaller & { readonly id: string };
  readonly decision: 'approve' | 'reject';
  readonly comment: string | undefined;
}
