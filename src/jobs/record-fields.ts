/**
 * The fields a reader sees, proven by the events (docs/api.md, "runtime.verifyJob"). The events
 * are replayed: `job.created` gives the goal, the caller and the digest of what was recorded at
 * creation (plan id, idempotency key, metadata, each step's id, capability, version, input,
 * reason and idempotency key, in order); each step's status, error and decision (outcome, reason,
 * authorizer, version, decidedAt, input digest) follow from its events; the job's status and
 * error from its last events. Every field of the record is then compared with what the replay
 * expects. The chain (or, without one, nothing) proves the events themselves.
 */
import {
  cancelledJobError,
  type Job,
  type JobEvent,
  type JobStatus,
  type JobStep,
  type JobStepStatus,
} from './job.js';
import { digestRecorded, sameRecordedValue } from './recorded-value.js';

/** Why a record does not match its events. */
export interface FieldFailure {
  readonly reason: string;
  readonly eventIndex?: number;
  readonly stepId?: string;
}

interface ExpectedStep {
  status: JobStepStatus;
  error: string | undefined;
  decision: Record<string, unknown> | undefined;
  /** The event the decision came from. */
  decidedBy: number | undefined;
}

function failure(reason: string, eventIndex?: number, stepId?: string): FieldFailure {
  const found: { -readonly [K in keyof FieldFailure]: FieldFailure[K] } = { reason };
  if (eventIndex !== undefined) found.eventIndex = eventIndex;
  if (stepId !== undefined) found.stepId = stepId;
  return found;
}

/** True when the job's events carry every field (its `job.created` has the `record` digest). */
export function provesFields(job: Job): boolean {
  const first = job.events[0];
  return first?.type === 'job.created' && typeof first.data?.record === 'string';
}

/**
 * The digest `job.created` carries, from the fields a record's steps had when created (which never
 * change): computed again by verify from the record as stored, and by `createJob` when first read.
 */
export function creationDigest(job: Job): string {
  return digestRecorded({
    planId: job.planId,
    idempotencyKey: job.idempotencyKey,
    metadata: job.metadata,
    steps: job.steps.map((step) => ({
      id: step.id,
      capability: step.capability,
      status: 'pending',
      createdAt: step.createdAt,
      capabilityVersion: step.capabilityVersion,
      input: step.input,
      // Absent keys are dropped: a step without bounds digests as before.
      bounds: step.bounds,
      reason: step.reason,
      idempotencyKey: step.idempotencyKey,
    })),
  });
}

/** The decision an event records: the outcome given, the rest from the event's data. */
function decisionOf(event: JobEvent, outcome: unknown, reason: unknown): Record<string, unknown> {
  const data = event.data ?? {};
  const decision: Record<string, unknown> = {
    outcome,
    inputDigest: data.inputDigest,
    capabilityVersion: data.capabilityVersion,
    decidedAt: data.decidedAt ?? event.timestamp,
  };
  if (reason !== undefined) decision.reason = reason;
  if (data.authorizer !== undefined) decision.authorizer = data.authorizer;
  if (data.policies !== undefined) decision.policies = data.policies;
  if (data.limit !== undefined) decision.limit = data.limit;
  if (data.effectDigest !== undefined) decision.effectDigest = data.effectDigest;
  if (data.definitionDigest !== undefined) decision.definitionDigest = data.definitionDigest;
  if (data.approval !== undefined) decision.approval = data.approval;
  return decision;
}

function checkCreated(job: Job): FieldFailure | undefined {
  const created = job.events[0] as JobEvent;
  const data = created.data ?? {};
  if (data.goal !== job.goal) return failure("the job's goal does not match its events", 0);
  if (data.planVersion !== job.planVersion)
    return failure("the job's plan version does not match its events", 0);
  if (!sameRecordedValue(data.caller, job.caller))
    return failure("the job's caller does not match its events", 0);
  if (created.timestamp !== job.createdAt)
    return failure("the job's creation time does not match its events", 0);
  if (creationDigest(job) !== data.record) {
    return failure(
      "the job's plan id, idempotency key, metadata or steps (ids, order, capabilities, versions, inputs, reasons) do not match its events",
      0,
    );
  }
  return undefined;
}

/** Replays the events: the status, error and decision each step and the job must show. */
function replay(
  job: Job,
  expected: Map<string, ExpectedStep>,
): { status: JobStatus; error: string | undefined } | FieldFailure {
  // Submitted through the queue, a job is `queued` until `execution.started`.
  let status: JobStatus = 'queued';
  let error: string | undefined;
  for (let index = 1; index < job.events.length; index++) {
    const event = job.events[index] as JobEvent;
    const data = event.data ?? {};
    if (event.type === 'execution.started') {
      status = 'executing';
      continue;
    }
    if (event.type === 'job.completed') {
      status = 'completed';
      continue;
    }
    if (event.type === 'job.cancelled') {
      // The step running or awaiting approval is cancelled; every step not yet run is skipped.
      status = 'cancelled';
      error = cancelledJobError(typeof data.reason === 'string' ? data.reason : undefined);
      const cancelled = typeof data.stepId === 'string' ? expected.get(data.stepId) : undefined;
      if (cancelled !== undefined) cancelled.status = 'cancelled';
      for (const step of expected.values()) if (step.status === 'pending') step.status = 'skipped';
      continue;
    }
    if (event.type === 'job.failed') {
      status = 'failed';
      error = data.error as string;
      for (const step of expected.values()) if (step.status === 'pending') step.status = 'skipped';
      continue;
    }
    // A recovery changes nothing a reader sees by itself; what it decides follows as events.
    if (event.type === 'job.created' || event.type === 'job.recovered') continue;
    const stepId = data.stepId;
    const step = typeof stepId === 'string' ? expected.get(stepId) : undefined;
    if (step === undefined)
      return failure(`event ${index} (${event.type}) names no step of the job`, index);
    switch (event.type) {
      case 'capability.started':
        step.status = 'running';
        step.decision = decisionOf(event, 'allow', undefined);
        step.decidedBy = index;
        break;
      case 'capability.completed':
        step.status = 'completed';
        break;
      case 'capability.denied':
        step.status = 'failed';
        step.error = data.reason as string;
        step.decision = decisionOf(event, data.outcome, data.reason);
        step.decidedBy = index;
        break;
      case 'capability.failed':
        step.status = 'failed';
        step.error = data.error as string;
        if (data.outcome !== undefined) {
          step.decision = decisionOf(event, data.outcome, data.reason);
          step.decidedBy = index;
        }
        break;
      case 'approval.requested':
        step.status = 'awaiting_approval';
        status = 'awaiting_approval';
        // A plan request (docs/api.md, "Plan warrants") is held by a step no decision was made on.
        if (data.kind === 'plan') break;
        step.decision = decisionOf(event, 'approval_required', data.reason);
        step.decidedBy = index;
        break;
      case 'approval.granted':
        step.status = 'pending';
        // With a queue engine the granted job goes back on the queue (docs/api.md, "Workers").
        status = data.queued === true ? 'queued' : 'executing';
        break;
      case 'step.interrupted':
        // Started, never ended, and its process gone: it may have run (docs/api.md, "Recovery").
        step.status = 'interrupted';
        break;
      default:
        // approval.rejected: its step's end and the job's follow in the same change;
        // capability.retrying: the step stays running, its next attempt is decided again.
        break;
    }
  }
  return { status, error };
}

/**
 * Checks every field a reader sees against the job's events; the first difference is reported.
 * Only for a job whose events carry them (`provesFields`).
 */
export function checkFields(job: Job): FieldFailure | undefined {
  const created = checkCreated(job);
  if (created !== undefined) return created;
  const expected = new Map<string, ExpectedStep>();
  for (const step of job.steps) {
    expected.set(step.id, {
      status: 'pending',
      error: undefined,
      decision: undefined,
      decidedBy: undefined,
    });
  }
  const replayed = replay(job, expected);
  if ('reason' in replayed) return replayed;
  const last = job.events.length - 1;
  if (job.status !== replayed.status)
    return failure(`the job is ${String(job.status)} but its events say ${replayed.status}`, last);
  if (job.error !== replayed.error)
    return failure("the job's error does not match its events", last);
  const outcome =
    replayed.status === 'completed'
      ? 'success'
      : replayed.status === 'failed'
        ? 'failed'
        : undefined;
  if (job.outcome !== outcome) return failure("the job's outcome does not match its events", last);
  for (const step of job.steps as JobStep[]) {
    const wanted = expected.get(step.id) as ExpectedStep;
    if (step.status !== wanted.status) {
      return failure(
        `step ${step.id} is ${String(step.status)} but its events say ${wanted.status}`,
        undefined,
        step.id,
      );
    }
    if (step.error !== wanted.error)
      return failure(`the error of step ${step.id} does not match its events`, undefined, step.id);
    if (!sameRecordedValue(step.decision, wanted.decision)) {
      return failure(
        `the decision of step ${step.id} does not match its events`,
        wanted.decidedBy,
        step.id,
      );
    }
  }
  return undefined;
}
