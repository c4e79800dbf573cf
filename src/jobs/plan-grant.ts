/**
 * A plan warrant as the job record holds it (docs/api.md, "Plan warrants"): the plan request is
 * the `approval.requested { kind: 'plan', stepId, planDigest, steps, expiresAt }` event of the
 * plan's first step (which waits for it), the grant its `approval.granted { kind: 'plan',
 * planDigest, approver, expiresAt }`. Nothing is kept beside the record: every process with the
 * store finds the grant, and `verifyJob` computes the digest again from what it reads.
 */
import type { Job, JobEvent } from './job.js';
import { digestRecorded } from './recorded-value.js';

/** One step of a plan request: what the approver approves of it. */
export interface PlanRequestStep {
  readonly id: string;
  readonly capability: string;
  /** The registered version the preview asked about; the grant covers that version only. */
  readonly capabilityVersion: string;
  /** The preview's outcome (`runtime.previewPlan`). */
  readonly outcome: string;
  /** The preview's reason, when it gave one. */
  readonly reason?: string;
  /** For a step without result references: the digest of its input as the preview checked it. */
  readonly inputDigest?: string;
  /** The step's bounds as recorded, when it has any. */
  readonly bounds?: Readonly<Record<string, unknown>>;
}

/** The plan request recorded in a job's events. */
export interface RecordedPlanRequest {
  /** The index of its `approval.requested` event in the job's events. */
  readonly position: number;
  /** The step that holds it (the plan's first). */
  readonly stepId: string;
  readonly planDigest: string;
  readonly steps: readonly PlanRequestStep[];
  /** ISO 8601. */
  readonly requestedAt: string;
  /** ISO 8601. */
  readonly expiresAt: string;
}

/** A plan grant recorded in a job's events, with the request it granted. */
export interface RecordedPlanGrant {
  /** The index of its `approval.granted` event in the job's events. */
  readonly position: number;
  readonly planDigest: string;
  /** The approver's id. */
  readonly approver: string;
  /** ISO 8601. */
  readonly grantedAt: string;
  /** ISO 8601: the grant covers nothing from then on. */
  readonly expiresAt: string;
  readonly request: RecordedPlanRequest;
}

/** True for an event of a plan warrant (`data.kind === 'plan'`). */
export function isPlanEvent(event: JobEvent | undefined): boolean {
  return event?.data?.kind === 'plan';
}

/**
 * The digest a plan request binds: `'sha256:'` + hex SHA-256 of the RFC 8785 JSON of the plan as
 * recorded (version, goal, each step's id, capability, pinned version, input with its references
 * and bounds), the caller as recorded and the request's steps. Never the job id or a time, so the
 * same plan from the same caller with the same preview has the same digest.
 */
export function planWarrantDigest(record: Job, steps: readonly PlanRequestStep[]): string {
  return digestRecorded({
    version: record.planVersion ?? '1.0',
    goal: record.goal,
    // Absent keys are dropped, as every digest of the record drops them.
    steps: record.steps.map((step) => ({
      id: step.id,
      capability: step.capability,
      capabilityVersion: step.capabilityVersion,
      input: step.input,
      bounds: step.bounds,
    })),
    caller: record.caller,
    request: steps,
  });
}

function isText(value: unknown): value is string {
  return typeof value === 'string';
}

/** The plan request of the event at `position`, when it is one (well formed). */
export function planRequestAt(job: Job, position: number): RecordedPlanRequest | undefined {
  const event = job.events[position];
  if (event?.type !== 'approval.requested' || !isPlanEvent(event)) return undefined;
  const data = event.data as Readonly<Record<string, unknown>>;
  const { stepId, planDigest, steps, expiresAt } = data;
  if (!isText(stepId) || !isText(planDigest) || !isText(expiresAt) || !Array.isArray(steps))
    return undefined;
  return {
    position,
    stepId,
    planDigest,
    steps: steps as readonly PlanRequestStep[],
    requestedAt: event.timestamp,
    expiresAt,
  };
}

/** The last plan request in the job's events before `end` (default: all of them). */
export function lastPlanRequest(
  job: Job,
  end: number = job.events.length,
): RecordedPlanRequest | undefined {
  for (let at = end - 1; at >= 0; at--) {
    const event = job.events[at] as JobEvent;
    if (event.type === 'approval.requested' && isPlanEvent(event)) return planRequestAt(job, at);
  }
  return undefined;
}

/**
 * The job's plan grant: its last `approval.granted { kind: 'plan' }` and the plan request before
 * it, when both are well formed and name the same digest; undefined otherwise (nothing covered).
 */
export function planGrantOf(job: Job): RecordedPlanGrant | undefined {
  for (let at = job.events.length - 1; at >= 0; at--) {
    const event = job.events[at] as JobEvent;
    if (event.type !== 'approval.granted' || !isPlanEvent(event)) continue;
    const { planDigest, approver, expiresAt } = event.data as Readonly<Record<string, unknown>>;
    const request = lastPlanRequest(job, at);
    if (
      request === undefined ||
      !isText(planDigest) ||
      !isText(approver) ||
      !isText(expiresAt) ||
      request.planDigest !== planDigest
    )
      return undefined;
    return {
      position: at,
      planDigest,
      approver,
      grantedAt: event.timestamp,
      expiresAt,
      request,
    };
  }
  return undefined;
}
