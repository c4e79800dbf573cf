/** The job record (docs/api.md, "Jobs and events"): the audit trail of one admitted plan. */
import type { ExecutionCaller } from '../callers/execution-caller.js';

/**
 * `awaiting_approval` only with the runtime's `approvals` option (docs/api.md, "Approvals");
 * `queued` for a job submitted with `submitPlan` and not started yet, `cancelled` (terminal) for a
 * job stopped by `cancelJob` (docs/api.md, "Queued jobs and cancellation").
 */
export type JobStatus =
  'created' | 'queued' | 'executing' | 'awaiting_approval' | 'completed' | 'failed' | 'cancelled';
/**
 * `interrupted`: a step whose process ended while it ran, found by recovery (docs/api.md,
 * "Recovery"): it may have run, and is not invoked again.
 */
export type JobStepStatus =
  | 'pending'
  | 'running'
  | 'awaiting_approval'
  | 'completed'
  | 'failed'
  | 'skipped'
  | 'cancelled'
  | 'interrupted';
export type JobOutcome = 'success' | 'failed';

export type JobEventType =
  | 'job.created'
  | 'execution.started'
  | 'capability.started'
  | 'capability.completed'
  | 'capability.denied'
  | 'capability.failed'
  | 'job.completed'
  | 'job.failed'
  | 'approval.requested'
  | 'approval.granted'
  | 'approval.rejected'
  | 'job.cancelled'
  | 'capability.retrying'
  | 'job.recovered'
  | 'step.interrupted';

export const JOB_EVENT_TYPES: readonly JobEventType[] = Object.freeze([
  'job.created',
  'execution.started',
  'capability.started',
  'capability.completed',
  'capability.denied',
  'capability.failed',
  'job.completed',
  'job.failed',
  'approval.requested',
  'approval.granted',
  'approval.rejected',
  'job.cancelled',
  'capability.retrying',
  'job.recovered',
  'step.interrupted',
]);

export interface JobEvent {
  readonly id: string;
  readonly jobId: string;
  readonly type: JobEventType;
  /** ISO 8601. */
  readonly timestamp: string;
  readonly data?: Readonly<Record<string, unknown>>;
}

/**
 * How a decision came out: `invalid` is a malformed answer, `error` an authorizer that threw or
 * rejected; `approval_required` a step stopped for approval (runtime option `approvals`).
 */
export type DecisionOutcome = 'allow' | 'deny' | 'invalid' | 'error' | 'approval_required';

/** The decision on one step, recorded on the step (docs/api.md, "The decision record"). */
export interface StepDecision {
  readonly outcome: DecisionOutcome;
  /** The deny reason, or the authorizer's thrown message. */
  readonly reason?: string;
  /** `'sha256:'` + 64 lowercase hex: the digest of the input as authorized, as recorded. */
  readonly inputDigest: string;
  /** The registered version of the capability that was authorized. */
  readonly capabilityVersion: string;
  /** ISO 8601. */
  readonly decidedAt: string;
  /** The authorizer object's own string `name`, when it has one. */
  readonly authorizer?: string;
  /**
   * The ids of the policies that determined the decision, in text order: present only for a
   * policy authorizer (`cedarAuthorizer`), empty when no policy permits.
   */
  readonly policies?: readonly string[];
  /** The name of the limit that denied the step (docs/api.md, "Limits"). */
  readonly limit?: string;
  /**
   * `'sha256:'` + 64 lowercase hex: the digest of the effect as authorized (the capability's
   * `prepare`, docs/api.md "Prepared effects"); absent for a capability without one.
   */
  readonly effectDigest?: string;
  /** An outbound MCP tool's definition digest, as decided (docs/api.md, "Pinned tools"). */
  readonly definitionDigest?: string;
  /**
   * The grant that covered an answer `require_approval` (docs/api.md, "Plan warrants"): the step
   * ran under the plan grant with this digest, given by this approver (id).
   */
  readonly approval?: DecisionApproval;
}

/** A plan grant that covered a step's decision (docs/api.md, "Plan warrants"). */
export interface DecisionApproval {
  readonly kind: 'plan';
  readonly planDigest: string;
  /** The approver's id. */
  readonly approver: string;
}

export interface JobStep {
  readonly id: string;
  readonly capability: string;
  readonly capabilityVersion?: string;
  /** The input as submitted (result references included). */
  readonly input?: unknown;
  /** A 2.0 step's bounds as submitted (docs/api.md, "Bounds"); absent when it has none. */
  readonly bounds?: Readonly<Record<string, unknown>>;
  readonly reason?: string;
  readonly idempotencyKey?: string;
  status: JobStepStatus;
  readonly createdAt: string;
  startedAt?: string;
  completedAt?: string;
  result?: unknown;
  error?: string;
  /** Absent when the step never reached authorization. */
  decision?: StepDecision;
  /** The input as authorized, references resolved: for steps with result references. */
  resolvedInput?: unknown;
  /**
   * Approved with edits (docs/api.md, "Approve with edits"): the input the request proposed (its
   * input as authorized then) and the approver's input, which the step then runs with. Present
   * only on a step an approver edited; `approval.granted { edited, inputDigest, proposedDigest }`
   * carries their digests.
   */
  proposedInput?: unknown;
  approvedInput?: unknown;
  /** The effect as authorized (docs/api.md, "Prepared effects"), when the capability prepares one. */
  effect?: unknown;
}

export interface Job {
  readonly id: string;
  readonly goal: string;
  readonly planId?: string;
  /** `'2.0'` for a 2.0 plan (docs/api.md, "Plan version 2.0"); absent for a 1.0 plan. */
  readonly planVersion?: string;
  readonly idempotencyKey?: string;
  readonly metadata?: unknown;
  /** The caller snapshot, when a caller was given. */
  readonly caller?: ExecutionCaller;
  status: JobStatus;
  outcome?: JobOutcome;
  readonly createdAt: string;
  updatedAt: string;
  startedAt?: string;
  completedAt?: string;
  readonly steps: JobStep[];
  /** One step: its result. Several: the array of step results. Set on success only. */
  result?: unknown;
  /** The failing step's error, on failure. */
  error?: string;
  readonly events: JobEvent[];
}

/** Filters of `runtime.listJobs()`; results are newest first. */
export interface JobListFilter {
  status?: JobStatus;
  /** Jobs with at least one step bound to this capability name. */
  capability?: string;
  /** Exact goal (after trimming, as recorded). */
  goal?: string;
  /** At most this many jobs (a non-negative integer). */
  limit?: number;
}

export function isFinished(job: Job): boolean {
  return job.status === 'completed' || job.status === 'failed' || job.status === 'cancelled';
}

/** True when a job matches every given filter. Shared by stores that filter in memory. */
export function matchesFilter(job: Job, filter: JobListFilter): boolean {
  if (filter.status !== undefined && job.status !== filter.status) return false;
  if (filter.goal !== undefined && job.goal !== filter.goal) return false;
  if (
    filter.capability !== undefined &&
    !job.steps.some((step) => step.capability === filter.capability)
  ) {
    return false;
  }
  return true;
}

/** A cancelled job's error: the same text on the record, in its replay and for the aborted step. */
export function cancelledJobError(reason: string | undefined): string {
  return reason === undefined ? 'Job cancelled' : `Job cancelled: ${reason}`;
}
