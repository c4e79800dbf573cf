/**
 * Deciding a plan request (docs/api.md, "Plan warrants"), with the rules of every decision
 * (docs/api.md, "runtime.decideApproval"): the digest the approver saw, no self-approval, the
 * approver policy within the tenant, APPROVAL_CANNOT_RUN before anything is consumed, expiry
 * checked again inside the consuming write, and one decision only (the desk's claim, then the
 * store's conditional write and its ledger of consumed approvals). A granted plan then runs from
 * its first step, each step authorized at its turn (executor.ts, plan-warrant.ts).
 */
import { isExpired, requestOf, type ApprovalRequest } from '../approvals/approval-request.js';
import { askApprover, type ApprovalsConfig } from '../approvals/approver-policy.js';
import type { CheckedPlanDecision, PlanApprovalRequest } from '../approvals/plan-request.js';
import { snapshotCaller } from '../callers/caller-snapshot.js';
import { askWithinTenant } from '../callers/tenant-rules.js';
import { describeThrown } from '../errors/describe-value.js';
import { ErrorCode } from '../errors/error-codes.js';
import { createError } from '../errors/warrant-error.js';
import { isoNow } from '../jobs/clock.js';
import type { Job } from '../jobs/job.js';
import { lastPlanRequest } from '../jobs/plan-grant.js';
import {
  endStep,
  failJob,
  grantPlanApproval,
  joinChanges,
  PLAN_REQUEST_STEP,
  rejectPlanApproval,
  type RunningJob,
} from '../jobs/transitions.js';
import type { AdmittedPlan } from '../plan/admission.js';
import { commitChange, resumeApprovedJob, type ExecutorDependencies } from './executor.js';
import { admitRecorded, loadRunningJob, type CapabilityLookup } from './stored-job.js';

/** What deciding a plan needs of the runtime (the approval desk's host). */
export interface PlanDecisionHost {
  readonly deps: ExecutorDependencies;
  readonly lookup: CapabilityLookup;
  readonly requeue?: ((jobId: string, entryId: string) => Promise<void>) | undefined;
}

/** What the approval desk lends a plan decision: its policy, its claims, its expiry and queue. */
export interface PlanDesk {
  readonly config: ApprovalsConfig;
  /** Runs `write` holding the claim on the request held by `stepId`; undefined when taken. */
  readonly withClaim: <T>(
    jobId: string,
    stepId: string,
    write: () => Promise<T>,
  ) => Promise<T | undefined>;
  /** Fails an expired request's step and job, unless another decision consumed it first. */
  readonly expire: (host: PlanDecisionHost, request: ApprovalRequest) => Promise<void>;
  /** With a queue engine: puts the granted job back on the queue; resolves it as recorded. */
  readonly requeue: (host: PlanDecisionHost, running: RunningJob) => Promise<Job>;
}

function refusal(code: ErrorCode, message: string): Error {
  return createError(Error, code, message);
}

function causeCode(error: unknown): unknown {
  return (error as { cause?: { code?: unknown } } | null)?.cause?.code;
}

/** The job's pending plan request, if it has one. */
function pendingPlan(job: Job): PlanApprovalRequest | undefined {
  const request = requestOf(job, PLAN_REQUEST_STEP);
  return request?.kind === 'plan' ? request : undefined;
}

/** The capabilities the plan was approved at that this runtime does not register so. */
function missingForPlan(request: PlanApprovalRequest, lookup: CapabilityLookup): string[] {
  const needs = new Set<string>();
  for (const step of request.steps) {
    if (lookup(step.capability)?.version !== step.capabilityVersion)
      needs.add(`${step.capability}@${step.capabilityVersion}`);
  }
  return [...needs];
}

/** Decides one plan request; resolves with the job at its next stop. */
export async function decidePlan(
  desk: PlanDesk,
  host: PlanDecisionHost,
  args: CheckedPlanDecision,
): Promise<Job> {
  const job = await host.deps.store.get(args.jobId);
  const named = `job ${JSON.stringify(args.jobId)}`;
  if (job === undefined || lastPlanRequest(job) === undefined)
    throw refusal(ErrorCode.APPROVAL_NOT_FOUND, `No plan approval request for ${named}`);
  const request = pendingPlan(job);
  if (request === undefined)
    throw refusal(ErrorCode.APPROVAL_NOT_PENDING, `The plan of ${named} does not await approval`);
  const expired = () =>
    refusal(
      ErrorCode.APPROVAL_EXPIRED,
      `The plan approval request of ${named} expired at ${request.expiresAt}`,
    );
  if (isExpired(request, Date.now())) {
    await desk.expire(host, request);
    throw expired();
  }
  if (args.planDigest !== request.planDigest)
    throw refusal(
      ErrorCode.APPROVAL_DIGEST_MISMATCH,
      `The digest ${JSON.stringify(args.planDigest)} is not the planDigest requested for ${named}`,
    );
  if (job.caller?.id !== undefined && job.caller.id === args.approver.id)
    throw refusal(
      ErrorCode.APPROVAL_SELF_APPROVAL,
      `The caller who submitted ${named} cannot decide its approval`,
    );
  // Never across tenants, whatever the approver policy says (docs/api.md, "Reading and tenants").
  if (
    !(await askWithinTenant(args.approver, job.caller, () =>
      askApprover(desk.config.approver, args.approver, request),
    ))
  )
    throw refusal(
      ErrorCode.APPROVAL_FORBIDDEN,
      `Approver ${JSON.stringify(args.approver.id)} may not decide this request`,
    );
  if (args.decision === 'approve') {
    const needs = missingForPlan(request, host.lookup);
    if (needs.length > 0)
      throw refusal(
        ErrorCode.APPROVAL_CANNOT_RUN,
        `This runtime cannot run ${named}: it does not register ${needs.join(', ')}; approve it from a process that does (the same --module flags as the one that ran it), nothing was decided`,
      );
  }
  const stepId = request.steps[0]?.id ?? '';
  const consumed = await desk.withClaim(args.jobId, stepId, () => consume(host, args));
  if (consumed === undefined || consumed === 'lost')
    throw refusal(
      ErrorCode.APPROVAL_NOT_PENDING,
      `The plan of ${named} does not await approval (another decision consumed it)`,
    );
  if (consumed === 'expired') {
    // The approver policy (or the store) took until past expiresAt: no decision lands late.
    await desk.expire(host, request);
    throw expired();
  }
  if (args.decision === 'reject') return consumed.job;
  if (host.requeue !== undefined) return desk.requeue(host, consumed);
  return resumePlan(host, consumed);
}

/** The one write that consumes the plan request: granted, or rejected (the job fails). */
async function consume(
  host: PlanDecisionHost,
  args: CheckedPlanDecision,
): Promise<RunningJob | 'lost' | 'expired'> {
  const { deps } = host;
  const running = await loadRunningJob(deps, args.jobId);
  const request = running === undefined ? undefined : pendingPlan(running.record);
  if (running === undefined || request === undefined || request.planDigest !== args.planDigest)
    return 'lost';
  // Checked again as the decision is written (the store checks it once more in its write).
  if (isExpired(request, Date.now())) return 'expired';
  const at = isoNow();
  const ttlMs = deps.approvals?.ttlMs ?? 0;
  // The grant lasts as long as a request waits, from its decision (docs/decisions.md).
  const until = new Date(Date.parse(at) + ttlMs).toISOString();
  const change =
    args.decision === 'approve'
      ? grantPlanApproval(
          running,
          at,
          args.approver.id,
          args.planDigest,
          until,
          args.comment,
          host.requeue !== undefined,
        )
      : rejectPlanApproval(running, at, args.approver.id, args.planDigest, args.comment);
  try {
    await commitChange(running, change, deps);
  } catch (error) {
    const code = causeCode(error);
    if (code === ErrorCode.APPROVAL_NOT_PENDING) return 'lost';
    if (code === ErrorCode.APPROVAL_EXPIRED) return 'expired';
    throw error;
  }
  return running;
}

/** Runs the approved plan from its first step, in this process. */
async function resumePlan(host: PlanDecisionHost, running: RunningJob): Promise<Job> {
  const { record } = running;
  let plan: AdmittedPlan;
  try {
    plan = admitRecorded(record, host.lookup);
  } catch (error) {
    const at = isoNow();
    const message = `The approved plan can no longer run: ${describeThrown(error)}`;
    const failed = endStep(running, PLAN_REQUEST_STEP, at, { status: 'failed', error: message });
    await commitChange(running, joinChanges(failed, failJob(running, at, message)), host.deps);
    return running.job;
  }
  const caller = snapshotCaller(record.caller);
  return resumeApprovedJob(running, plan, PLAN_REQUEST_STEP, [], caller, host.deps, undefined);
}
