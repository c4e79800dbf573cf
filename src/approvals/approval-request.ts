/**
 * Approval requests as the job record holds them (docs/api.md, "Approvals"): a step waiting
 * with status `awaiting_approval`, its decision `approval_required`, and the job's last
 * `approval.requested` event for it. Nothing is kept beside the record, so every store holds
 * requests durably and any process with the same store finds them.
 */
import type { ExecutionCaller } from '../callers/execution-caller.js';
import type { CapabilityRisk } from '../capabilities/risk.js';
import type { Job, JobStep } from '../jobs/job.js';
import { lastPlanRequest } from '../jobs/plan-grant.js';
import { planRequestOf, type PlanApprovalRequest } from './plan-request.js';

/** A pending request on one step, as `listApprovals` answers it and the approver policy sees it. */
export interface StepApprovalRequest {
  readonly kind: 'step';
  readonly jobId: string;
  readonly stepId: string;
  readonly capability: string;
  readonly capabilityVersion: string;
  readonly risk: CapabilityRisk;
  /** The input as authorized, as recorded. */
  readonly input: unknown;
  readonly inputDigest: string;
  /** The effect as authorized, when the capability prepares one (docs/api.md, "Prepared effects"). */
  readonly effect?: unknown;
  /** Its digest: the approval covers this effect only. */
  readonly effectDigest?: string;
  readonly reason?: string;
  /** The caller who submitted the plan. */
  readonly caller?: ExecutionCaller;
  /** ISO 8601. */
  readonly requestedAt: string;
  /** ISO 8601. */
  readonly expiresAt: string;
}

/**
 * A pending request: on one step, or on a whole plan (docs/api.md, "Plan warrants"). The
 * approver policy sees either; `kind` tells them apart.
 */
export type ApprovalRequest = StepApprovalRequest | PlanApprovalRequest;

/** The step a request is held by: its own, or for a plan request the plan's first step. */
export function requestStepId(request: ApprovalRequest): string {
  return request.kind === 'plan' ? (request.steps[0]?.id ?? '') : request.stepId;
}

/** The digest a decision on the request names: its input's, or its plan's. */
export function requestDigest(request: ApprovalRequest): string {
  return request.kind === 'plan' ? request.planDigest : request.inputDigest;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  }
  return value;
}

/**
 * The request of the step at `index`, when it waits for approval; a detached, frozen copy of
 * what is recorded.
 */
export function requestOf(job: Job, index: number): ApprovalRequest | undefined {
  const step = job.steps[index] as JobStep | undefined;
  if (step?.status !== 'awaiting_approval') return undefined;
  // A plan request is held by the plan's first step, on which no decision was made.
  if (step.decision === undefined) {
    const plan = lastPlanRequest(job);
    if (
      plan === undefined ||
      plan.stepId !== step.id ||
      requestPosition(job, step.id) !== plan.position
    )
      return undefined;
    return deepFreeze(planRequestOf(job, plan));
  }
  let requested: Readonly<Record<string, unknown>> | undefined;
  let requestedAt = '';
  for (let at = job.events.length - 1; at >= 0; at--) {
    const event = job.events[at];
    if (event?.type === 'approval.requested' && event.data?.stepId === step.id) {
      requested = event.data;
      requestedAt = event.timestamp;
      break;
    }
  }
  if (requested === undefined || requested.kind === 'plan') return undefined;
  const input = 'resolvedInput' in step ? step.resolvedInput : step.input;
  const request: Record<string, unknown> = {
    kind: 'step',
    jobId: job.id,
    stepId: step.id,
    capability: step.capability,
    capabilityVersion: step.decision.capabilityVersion,
    risk: requested.risk,
    input: structuredClone(input),
    inputDigest: step.decision.inputDigest,
  };
  if (step.decision.effectDigest !== undefined) {
    request.effect = structuredClone(step.effect);
    request.effectDigest = step.decision.effectDigest;
  }
  if (step.decision.reason !== undefined) request.reason = step.decision.reason;
  if (job.caller !== undefined) request.caller = structuredClone(job.caller);
  request.requestedAt = requestedAt;
  request.expiresAt = requested.expiresAt;
  return deepFreeze(request as unknown as ApprovalRequest);
}

/** Indexes of the job's steps that wait for approval. */
export function waitingSteps(job: Job): number[] {
  const found: number[] = [];
  job.steps.forEach((step, index) => {
    if (step.status === 'awaiting_approval') found.push(index);
  });
  return found;
}

/** The index of the step's last `approval.requested` event in the job's events; -1 when none. */
export function requestPosition(job: Job, stepId: string): number {
  for (let at = job.events.length - 1; at >= 0; at--) {
    const event = job.events[at];
    if (event?.type === 'approval.requested' && event.data?.stepId === stepId) return at;
  }
  return -1;
}

/** True once the request is past its `expiresAt` at time `nowMs`. */
export function isExpired(request: ApprovalRequest, nowMs: number): boolean {
  const expires = Date.parse(request.expiresAt);
  return !(nowMs < expires);
}
