/**
 * The transitions of a job: the only code that changes a job. The executor decides what happens
 * (allow, deny, fail, complete); these functions record it and return the change they made,
 * naming the steps written and the events appended, and the store writes exactly that change
 * (docs/decisions.md, "Jobs and events").
 *
 * A running job has two faces. `job` is what `executePlan` returns: inputs, results, metadata
 * and the caller as given, by identity. `record` is what stores keep: each value encoded once
 * (`toJsonSafe`), when it happens, and never again, so nothing done to a value afterwards (by a
 * later step, the caller or anyone) changes what was recorded (docs/decisions.md, "The decision
 * record"). Both share the event objects, which hold JSON data only and are frozen.
 */
import type { ExecutionCaller } from '../callers/execution-caller.js';
import { actingFor } from '../callers/actor-chain.js';
import type { CapabilityRisk } from '../capabilities/risk.js';
import {
  cancelledJobError,
  type DecisionOutcome,
  type Job,
  type JobEvent,
  type JobEventType,
  type JobStatus,
  type JobStep,
  type JobStepStatus,
  type DecisionApproval,
  type StepDecision,
} from './job.js';
import type { PlanRequestStep } from './plan-grant.js';
import type { JobChange } from './job-store.js';
import { keptFlat } from '../json/canonical-json.js';
import { creationDigest } from './record-fields.js';
import { toJsonSafe } from '../json/json-value.js';
import {
  recordWithLazyDigest,
  sameRecordedValue,
  setDigestField,
  setDigestOnRead,
  setEffectDigestField,
  type RecordedValue,
} from './recorded-value.js';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** One step of a new job (an admitted step fits). */
export interface NewStep {
  readonly id: string;
  readonly capability: { readonly name: string };
  readonly capabilityVersion: string | undefined;
  readonly input: unknown;
  /** A 2.0 step's bounds (docs/api.md, "Bounds"): recorded only when present. */
  readonly bounds?: unknown;
  readonly reason: string | undefined;
  readonly idempotencyKey: string | undefined;
}

/** What a job is made from (an admitted plan fits). */
export interface NewJob {
  /** The plan version; only a version other than `'1.0'` is recorded. */
  readonly version?: string;
  readonly id: string | undefined;
  readonly goal: string;
  readonly metadata: unknown;
  readonly idempotencyKey: string | undefined;
  readonly steps: readonly NewStep[];
}

/** A job while it runs: the job returned to the caller and the record stores keep. */
export interface RunningJob {
  /** Values as given, by identity. */
  readonly job: Job;
  /** Values as recorded: JSON data, each encoded when it happened. */
  readonly record: Job;
}

/**
 * What the authorizer was asked about, recorded before it answered: the input, and the effect
 * the capability prepared when it has `prepare` (docs/api.md, "Prepared effects").
 */
export interface RecordedAsk extends RecordedValue {
  readonly effect?: RecordedValue;
}

/** A decision on a step, as the executor made it. */
export interface Decided {
  readonly outcome: DecisionOutcome;
  /** The deny reason or the authorizer's thrown message. */
  readonly reason: string | undefined;
  readonly authorizer: string | undefined;
  /** A policy authorizer's determining policy ids, in text order (docs/api.md, "Policy as code: Cedar"). */
  readonly policies?: readonly string[] | undefined;
  /** The limit that denied the step (docs/api.md, "Limits"). */
  readonly limit?: string | undefined;
  /** An outbound MCP tool's definition digest, checked against its pin (docs/api.md, "Pinned tools"). */
  readonly definitionDigest?: string | undefined;
  /** The plan grant that covered a `require_approval` (docs/api.md, "Plan warrants"). */
  readonly approval?: DecisionApproval | undefined;
  /** The registered version of the capability. */
  readonly capabilityVersion: string;
  readonly at: string;
  /** The input as authorized: the very object the authorizer saw... */
  readonly input: unknown;
  /** ...recorded (encoded and digested) before the authorizer was asked, with its effect. */
  readonly recorded: RecordedAsk;
  /** The step had result references: its input as authorized is kept apart from the input as submitted. */
  readonly resolved: boolean;
}

/** How a step ended, as the executor decided it; `decided` when the end is the decision. */
export type StepEnd =
  | { readonly status: 'completed'; readonly result: unknown }
  | {
      readonly status: 'denied';
      readonly reason: string;
      readonly risk: CapabilityRisk;
      readonly decided: Decided;
    }
  | { readonly status: 'failed'; readonly error: string; readonly decided?: Decided }
  | {
      readonly status: 'awaiting_approval';
      readonly risk: CapabilityRisk;
      readonly decided: Decided;
      readonly expiresAt: string;
    };

const NO_STEPS: readonly number[] = Object.freeze([]);

/**
 * The positions a change wrote, as shared frozen arrays for the first steps of a plan: an array
 * per change was a tenth of what a step allocated (docs/decisions.md, "The record nearly free").
 */
const SHARED_POSITIONS = 1024;
const onlyStepAt: (readonly number[])[] = [];
const firstSteps: (readonly number[])[] = [];

function onlyStep(index: number): readonly number[] {
  if (index >= SHARED_POSITIONS) return [index];
  return (onlyStepAt[index] ??= Object.freeze([index]));
}

function allSteps(count: number): readonly number[] {
  if (count > SHARED_POSITIONS) return Array.from({ length: count }, (_, index) => index);
  return (firstSteps[count] ??= Object.freeze(Array.from({ length: count }, (_, index) => index)));
}

/** A job's end on one of its faces. */
function finish(
  face: Mutable<Job>,
  status: 'completed' | 'failed',
  at: string,
  error: string | undefined,
): void {
  face.status = status;
  face.outcome = status === 'completed' ? 'success' : 'failed';
  if (error !== undefined) face.error = error;
  face.completedAt = at;
  face.updatedAt = at;
}

/**
 * Appends an event to both faces. Event ids are `<jobId>:<sequence>`: unique across jobs,
 * ordered within one, and free of a random draw. Frozen: the record shares the object.
 */
function append(
  running: RunningJob,
  type: JobEventType,
  timestamp: string,
  data?: Record<string, unknown>,
): JobEvent {
  const { job, record } = running;
  const id = keptFlat(`${job.id}:${job.events.length + 1}`);
  // One literal each way: `data` added afterwards would take a property array of its own, an
  // extra object kept with every event (docs/decisions.md, "Allocation on the hot path").
  const event: JobEvent =
    data === undefined
      ? { id, jobId: job.id, type, timestamp }
      : { id, jobId: job.id, type, timestamp, data: Object.freeze(data) };
  Object.freeze(event);
  job.events.push(event);
  record.events.push(event);
  return event;
}

/** Sets a key of a record only when the encoded value is present (JSON has no undefined). */
function setRecorded(target: object, key: string, value: unknown): void {
  if (value !== undefined) (target as Record<string, unknown>)[key] = value;
}

/**
 * The record face of a job and of its steps, kept by the memory store: made by a constructor, so
 * V8 keeps in the object itself the fields a record gains as it runs (times, decision, result,
 * outcome), where an object literal puts them in a second array (docs/decisions.md, "The record
 * nearly free"). The fields are the literal's, in the same order; readers get plain copies (the
 * memory store's snapshots) or the stores' encodings.
 */
class RecordedJob {
  declare id: string;
  declare goal: string | undefined;
  declare status: JobStatus;
  declare createdAt: string;
  declare updatedAt: string;
  declare startedAt: string;
  declare steps: JobStep[];
  declare events: JobEvent[];

  constructor(id: string, goal: string | undefined, at: string, steps: JobStep[]) {
    this.id = id;
    this.goal = goal;
    this.status = 'executing';
    this.createdAt = at;
    this.updatedAt = at;
    this.startedAt = at;
    this.steps = steps;
    this.events = [];
  }
}

class RecordedStep {
  declare id: string;
  declare capability: string;
  declare status: JobStepStatus;
  declare createdAt: string;

  constructor(id: string, capability: string, at: string) {
    this.id = id;
    this.capability = capability;
    this.status = 'pending';
    this.createdAt = at;
  }
}

/**
 * Creates a job already started: nothing runs between the two, so one write records both
 * (`job.created` and `execution.started`), and the job is on record before any authorizer or
 * capability is called. The submitted inputs, the metadata and the caller are recorded now.
 */
export function createJob(
  plan: NewJob,
  caller: ExecutionCaller | undefined,
  givenId: string,
  at: string,
  /** The caller as recorded, when the caller of this function has it already (a snapshot). */
  recordedCaller: unknown = caller === undefined ? undefined : toJsonSafe(caller, 'caller'),
  /** Submitted to the queue (`submitPlan`): recorded `queued`, not started. */
  queued = false,
): { running: RunningJob; change: JobChange } {
  // Kept by every retained record (and in each event id): one flat string, not a chain of parts.
  const id = keptFlat(givenId);
  // Optional keys are set only when present (plain assignments: spreads were measurably slower).
  // Both arrays are made at their final length: grown by push, a 1-step job kept room for 17.
  const count = plan.steps.length;
  const steps = new Array<JobStep>(count);
  const recordedSteps = new Array<JobStep>(count);
  for (let index = 0; index < count; index++) {
    const step = plan.steps[index] as NewStep;
    const name = step.capability.name;
    const live: Mutable<JobStep> = {
      id: step.id,
      capability: name,
      status: 'pending',
      createdAt: at,
    };
    const recorded = new RecordedStep(step.id, name, at) as Mutable<JobStep>;
    if (step.capabilityVersion !== undefined) {
      live.capabilityVersion = step.capabilityVersion;
      recorded.capabilityVersion = step.capabilityVersion;
    }
    if (step.input !== undefined) {
      live.input = step.input;
      setRecorded(recorded, 'input', toJsonSafe(step.input, 'input'));
    }
    // A step without bounds is recorded exactly as before (docs/api.md, "Bounds").
    if (step.bounds !== undefined) {
      live.bounds = step.bounds as Readonly<Record<string, unknown>>;
      setRecorded(recorded, 'bounds', toJsonSafe(step.bounds, 'bounds'));
    }
    if (step.reason !== undefined) {
      live.reason = step.reason;
      recorded.reason = step.reason;
    }
    if (step.idempotencyKey !== undefined) {
      live.idempotencyKey = step.idempotencyKey;
      recorded.idempotencyKey = step.idempotencyKey;
    }
    steps[index] = live;
    recordedSteps[index] = recorded;
  }
  const { goal } = plan;
  const job: Mutable<Job> = {
    id,
    goal,
    status: 'executing',
    createdAt: at,
    updatedAt: at,
    startedAt: at,
    steps,
    events: [],
  };
  const record = new RecordedJob(id, goal, at, recordedSteps) as Mutable<Job>;
  if (plan.id !== undefined) job.planId = record.planId = plan.id;
  if (plan.idempotencyKey !== undefined)
    job.idempotencyKey = record.idempotencyKey = plan.idempotencyKey;
  if (plan.metadata !== undefined) {
    job.metadata = plan.metadata;
    setRecorded(record, 'metadata', toJsonSafe(plan.metadata, 'metadata'));
  }
  if (caller !== undefined) {
    job.caller = caller;
    setRecorded(record, 'caller', recordedCaller);
  }
  const running: RunningJob = { job, record };
  // A 1.0 job is recorded exactly as before; a newer version is on the record and in the chain.
  const version = plan.version;
  if (version !== undefined && version !== '1.0') job.planVersion = record.planVersion = version;
  const created = append(running, 'job.created', at, createdData(record));
  if (queued) {
    // Submitted, not started: `execution.started` comes when the queue starts it (startQueuedJob).
    job.status = record.status = 'queued';
    delete job.startedAt;
    delete record.startedAt;
    return {
      running,
      change: { steps: allSteps(count), events: [created] },
    };
  }
  const started = append(running, 'execution.started', at);
  return {
    running,
    change: { steps: allSteps(count), events: [created, started] },
  };
}

/**
 * A queued job starts: `executing`, with `execution.started`. A job put back on the queue by an
 * approval keeps the `startedAt` of its first start.
 */
export function startQueuedJob(running: RunningJob, at: string): JobChange {
  for (const face of [running.job, running.record]) {
    face.status = 'executing';
    face.startedAt ??= at;
    face.updatedAt = at;
  }
  return { steps: NO_STEPS, events: [append(running, 'execution.started', at)] };
}

/**
 * A started step's invocation threw or timed out and will be tried again (docs/api.md,
 * "Retries"): `capability.retrying { stepId, attempt, error }`, `attempt` the number of the
 * invocation to come. The step stays `running`; it is authorized again before that invocation.
 */
export function retryStep(
  running: RunningJob,
  index: number,
  at: string,
  attempt: number,
  error: string,
): JobChange {
  touch(running, at);
  const step = running.record.steps[index] as JobStep;
  const event = append(running, 'capability.retrying', at, { stepId: step.id, attempt, error });
  return { steps: NO_STEPS, events: [event] };
}

/** Who cancelled a job, and why (docs/api.md, "Queued jobs and cancellation"). */
export interface CancelRequest {
  /** The cancelling caller's id. */
  readonly by: string | undefined;
  readonly reason: string | undefined;
}

/**
 * The job is cancelled: the step at `index` (the one running when the cancel came, or awaiting
 * approval; none for a job that had not started a step) becomes `cancelled`, keeping a result it
 * still returned; every step not yet run is skipped; `job.cancelled { by, reason? }`. One change.
 */
export function cancelJob(
  running: RunningJob,
  at: string,
  cancel: CancelRequest,
  index?: number,
  end?: Exclude<StepEnd, { readonly status: 'awaiting_approval' }>,
): JobChange {
  const { job, record } = running;
  let stepChange: JobChange = { steps: NO_STEPS, events: [] };
  if (index !== undefined) {
    if (end !== undefined) stepChange = endStep(running, index, at, end);
    else {
      const step = job.steps[index] as JobStep;
      step.completedAt = (record.steps[index] as JobStep).completedAt = at;
      stepChange = { steps: onlyStep(index), events: [] };
    }
    setStatus(running, index, 'cancelled');
  }
  const skipped: number[] = [];
  job.steps.forEach((step, position) => {
    if (step.status === 'pending') {
      setStatus(running, position, 'skipped');
      skipped.push(position);
    }
  });
  const error = cancelledJobError(cancel.reason);
  for (const face of [job, record]) {
    face.status = 'cancelled';
    face.error = error;
    face.completedAt = at;
    face.updatedAt = at;
  }
  const data: Record<string, unknown> = {};
  if (cancel.by !== undefined) data.by = cancel.by;
  if (cancel.reason !== undefined) data.reason = cancel.reason;
  // The step cancelled, so the chain proves which one it was (docs/api.md, "runtime.verifyJob").
  if (index !== undefined) data.stepId = (job.steps[index] as JobStep).id;
  const event = append(running, 'job.cancelled', at, data);
  keepEventsAsIs(record);
  return joinChanges(stepChange, { steps: skipped, events: [event] });
}

/**
 * What `job.created` carries, so the chain proves what a reader sees of the new job
 * (docs/api.md, "runtime.verifyJob"): the goal and the caller as recorded, and `record`, the
 * digest of the rest of what was recorded at creation (plan id, idempotency key, metadata, and
 * each step as created, in order: id, capability, version, input, reason, idempotency key, as
 * pending and stamped with the job's creation), computed as `verifyJob` computes it.
 */
function createdData(record: Job): Record<string, unknown> {
  const data: Record<string, unknown> = { goal: record.goal };
  if (record.planVersion !== undefined) data.planVersion = record.planVersion;
  if (record.caller !== undefined) data.caller = record.caller;
  // On first read, from the record's creation fields, which no transition changes: the same
  // text as at creation (docs/decisions.md, "The record nearly free").
  setDigestOnRead(data, 'record', record, creationDigest);
  return data;
}

/**
 * The decision fields an event carries beside the input digest and the version authorized (which
 * each caller sets in its literal, docs/api.md "runtime.verifyJob"), so the decision a step shows
 * is proven by its events: the authorizer's name, its policies, the limit, the tool's definition
 * digest, and the time of the decision when the event is not stamped with it (a step's end).
 */
function decisionData(data: Record<string, unknown>, decided: Decided, ended: boolean): void {
  if (decided.authorizer !== undefined) data.authorizer = decided.authorizer;
  if (decided.policies !== undefined) data.policies = decided.policies;
  if (decided.limit !== undefined) data.limit = decided.limit;
  if (decided.definitionDigest !== undefined) data.definitionDigest = decided.definitionDigest;
  if (decided.approval !== undefined) data.approval = decided.approval;
  if (ended) data.decidedAt = decided.at;
  if (decided.recorded.effect !== undefined)
    setEffectDigestField(data, 'effectDigest', decided.recorded as Required<RecordedAsk>);
}

/**
 * Records a decision on its step. The input as authorized is kept apart from the input as
 * submitted when the step had references, or when the submitted input was changed after it was
 * recorded (by an earlier step that held the same object, or by the caller): the digest always
 * covers what the authorizer saw. The decision's `inputDigest`, as its event's (set by each
 * caller with setDigestField), is read from `decided.recorded`: computed on first read, of the
 * encoding made before the authorizer was asked (docs/decisions.md, "The record nearly free").
 */
function decide(running: RunningJob, index: number, decided: Decided): void {
  const step = running.job.steps[index] as JobStep;
  const recorded = running.record.steps[index] as JobStep;
  // `inputDigest` is added by setDigestField, after the literal.
  const decision = {
    outcome: decided.outcome,
    capabilityVersion: decided.capabilityVersion,
    decidedAt: decided.at,
  } as Mutable<StepDecision>;
  setDigestField(decision, 'inputDigest', decided.recorded);
  if (decided.reason !== undefined) decision.reason = decided.reason;
  if (decided.authorizer !== undefined) decision.authorizer = decided.authorizer;
  if (decided.policies !== undefined) decision.policies = decided.policies;
  if (decided.limit !== undefined) decision.limit = decided.limit;
  const effect = decided.recorded.effect;
  if (effect !== undefined) {
    setEffectDigestField(decision, 'effectDigest', decided.recorded as Required<RecordedAsk>);
    step.effect = recorded.effect = effect.value;
  } else if (recorded.effect !== undefined) {
    // Decided again without an effect: the one of an earlier decision is not this one's.
    delete step.effect;
    delete recorded.effect;
  }
  if (decided.definitionDigest !== undefined) decision.definitionDigest = decided.definitionDigest;
  if (decided.approval !== undefined) decision.approval = decided.approval;
  step.decision = recorded.decision = Object.freeze(decision);
  if (decided.resolved || !sameRecordedValue(decided.recorded.value, recorded.input)) {
    step.resolvedInput = decided.input;
    recorded.resolvedInput = decided.recorded.value === undefined ? null : decided.recorded.value;
  }
}

/** Sets a field on the step of both faces (a value JSON holds as it is). */
function setStatus(running: RunningJob, index: number, status: JobStep['status']): void {
  (running.job.steps[index] as JobStep).status = status;
  (running.record.steps[index] as JobStep).status = status;
}

function touch(running: RunningJob, at: string): void {
  running.job.updatedAt = at;
  running.record.updatedAt = at;
}

/** The step was allowed and is about to be invoked: `running`, with `capability.started`. */
export function startStep(
  running: RunningJob,
  index: number,
  at: string,
  decided: Decided,
): JobChange {
  decide(running, index, decided);
  setStatus(running, index, 'running');
  (running.job.steps[index] as JobStep).startedAt = at;
  (running.record.steps[index] as JobStep).startedAt = at;
  touch(running, at);
  const step = running.record.steps[index] as JobStep;
  // Every field it always has in the literal: one added later costs the object a second array.
  const data: Record<string, unknown> = {
    stepId: step.id,
    capability: step.capability,
    capabilityVersion: decided.capabilityVersion,
  };
  setDigestField(data, 'inputDigest', decided.recorded);
  decisionData(data, decided, false);
  const event = append(running, 'capability.started', at, data);
  return { steps: onlyStep(index), decided: index, events: [event] };
}

/**
 * The step ended: completed with its result (recorded now), denied, or failed. A failure carries
 * the input digest when a decision was made on the step, now (`end.decided`) or when it started.
 */
export function endStep(
  running: RunningJob,
  index: number,
  at: string,
  end: Exclude<StepEnd, { readonly status: 'awaiting_approval' }>,
): JobChange {
  const step = running.job.steps[index] as JobStep;
  const recorded = running.record.steps[index] as JobStep;
  step.completedAt = recorded.completedAt = at;
  touch(running, at);
  if (end.status === 'completed') {
    setStatus(running, index, 'completed');
    step.result = end.result;
    // The result digest is read on first use: only this event carries it.
    const data: Record<string, unknown> = { stepId: step.id, capability: step.capability };
    setRecorded(
      recorded,
      'result',
      recordWithLazyDigest(end.result, 'result', data, 'resultDigest'),
    );
    const event = append(running, 'capability.completed', at, data);
    return { steps: onlyStep(index), events: [event] };
  }
  if (end.decided !== undefined) decide(running, index, end.decided);
  setStatus(running, index, 'failed');
  let event: JobEvent;
  if (end.status === 'denied') {
    step.error = recorded.error = end.reason;
    const data: Record<string, unknown> = {
      stepId: step.id,
      capability: step.capability,
      risk: end.risk,
      reason: end.reason,
      outcome: end.decided.outcome,
      capabilityVersion: end.decided.capabilityVersion,
    };
    setDigestField(data, 'inputDigest', end.decided.recorded);
    decisionData(data, end.decided, true);
    event = append(running, 'capability.denied', at, data);
  } else {
    step.error = recorded.error = end.error;
    const data: Record<string, unknown> = {
      stepId: step.id,
      capability: step.capability,
      error: end.error,
    };
    // The digest of the decision made now, or of the one made when the step started.
    if (end.decided !== undefined) setDigestField(data, 'inputDigest', end.decided.recorded);
    else if (recorded.decision !== undefined) data.inputDigest = recorded.decision.inputDigest;
    // The effect of the decision made when it started or was requested, as its input digest.
    const effectDigest = end.decided === undefined ? recorded.decision?.effectDigest : undefined;
    if (effectDigest !== undefined) data.effectDigest = effectDigest;
    if (end.decided !== undefined) {
      // The decision made now (an authorizer that threw, or answered what is not a decision).
      data.outcome = end.decided.outcome;
      if (end.decided.reason !== undefined) data.reason = end.decided.reason;
      data.capabilityVersion = end.decided.capabilityVersion;
      decisionData(data, end.decided, true);
    }
    event = append(running, 'capability.failed', at, data);
  }
  return end.decided === undefined
    ? { steps: onlyStep(index), events: [event] }
    : { steps: onlyStep(index), decided: index, events: [event] };
}

/** The job failed with `error`: every step not yet run is skipped. */
export function failJob(running: RunningJob, at: string, error: string): JobChange {
  const { job, record } = running;
  const skipped: number[] = [];
  job.steps.forEach((step, index) => {
    if (step.status === 'pending') {
      setStatus(running, index, 'skipped');
      skipped.push(index);
    }
  });
  finish(job, 'failed', at, error);
  finish(record, 'failed', at, error);
  const event = append(running, 'job.failed', at, { error });
  keepEventsAsIs(record);
  return { steps: skipped, events: [event] };
}

/**
 * A finished record keeps its events in an array of their number: grown by push, the array of a
 * 1-step job kept room for 17 events, for as long as the store keeps the job.
 */
function keepEventsAsIs(record: Job): void {
  (record as Mutable<Job>).events = record.events.slice();
}

/**
 * The job completed: its result is the one step's result, or the array of step results. The
 * record's is built from the recorded step results, so it is what the steps recorded.
 */
export function completeJob(running: RunningJob, at: string): JobChange {
  const { job, record } = running;
  const { steps } = job;
  job.result = steps.length === 1 ? steps[0]?.result : steps.map((step) => step.result);
  setRecorded(
    record,
    'result',
    record.steps.length === 1
      ? record.steps[0]?.result
      : record.steps.map((step) => (step.result === undefined ? null : step.result)),
  );
  finish(job, 'completed', at, undefined);
  finish(record, 'completed', at, undefined);
  const event = append(running, 'job.completed', at, { stepCount: steps.length });
  keepEventsAsIs(record);
  return { steps: NO_STEPS, events: [event] };
}

/** Two changes written as one (both land, or neither). */
export function joinChanges(first: JobChange, second: JobChange): JobChange {
  const joined: Mutable<JobChange> = {
    steps: second.steps.length === 0 ? first.steps : [...first.steps, ...second.steps],
    events: [...first.events, ...second.events],
  };
  const decided = first.decided ?? second.decided;
  if (decided !== undefined) joined.decided = decided;
  const claims = first.claims ?? second.claims;
  if (claims !== undefined) joined.claims = claims;
  return joined;
}

/**
 * The authorizer asked for approval: the step and the job wait (`awaiting_approval`), with
 * `approval.requested`. Nothing was invoked (docs/api.md, "Approvals"). The request is stamped
 * with its decision's time, the time `expiresAt` counts from: `requestedAt` is then exactly
 * `ttlMs` before it, whatever the clock did since.
 */
export function awaitApproval(
  running: RunningJob,
  index: number,
  end: Extract<StepEnd, { readonly status: 'awaiting_approval' }>,
): JobChange {
  const at = end.decided.at;
  decide(running, index, end.decided);
  setStatus(running, index, 'awaiting_approval');
  running.job.status = running.record.status = 'awaiting_approval';
  touch(running, at);
  const step = running.record.steps[index] as JobStep;
  const data: Record<string, unknown> = {
    stepId: step.id,
    capability: step.capability,
    capabilityVersion: end.decided.capabilityVersion,
    risk: end.risk,
    inputDigest: end.decided.recorded.digest,
  };
  if (end.decided.reason !== undefined) data.reason = end.decided.reason;
  if (end.decided.authorizer !== undefined) data.authorizer = end.decided.authorizer;
  // A policy authorizer's determining policies, as the decision records them (verify proves them).
  if (end.decided.policies !== undefined) data.policies = end.decided.policies;
  // The effect the approver is asked about (docs/api.md, "Prepared effects").
  if (end.decided.recorded.effect !== undefined)
    setEffectDigestField(data, 'effectDigest', end.decided.recorded as Required<RecordedAsk>);
  if (end.decided.definitionDigest !== undefined)
    data.definitionDigest = end.decided.definitionDigest;
  data.expiresAt = end.expiresAt;
  Object.assign(data, actingFor(running.record.caller));
  const event = append(running, 'approval.requested', at, data);
  return { steps: onlyStep(index), decided: index, events: [event] };
}

/**
 * A waiting step was approved: it is pending again and the job executing, with
 * `approval.granted` (and the approver's comment). The step then runs through the executor like
 * any other. With `queued` (a runtime with a queue engine, docs/api.md, "Workers") the job goes
 * back on the queue instead: `queued`, with `approval.granted { queued: true }`, and a worker
 * starts it again from that step. With `edit`, the approver's input: the step runs with it.
 */
export function grantApproval(
  running: RunningJob,
  index: number,
  at: string,
  approverId: string,
  comment?: string,
  queued = false,
  edit?: ApprovedEdit,
): JobChange {
  setStatus(running, index, 'pending');
  running.job.status = running.record.status = queued ? 'queued' : 'executing';
  touch(running, at);
  const step = running.record.steps[index] as JobStep;
  const data: Record<string, unknown> = { stepId: step.id, approver: approverId };
  if (edit !== undefined) keepEdit(running, index, edit, data);
  if (comment !== undefined) data.comment = comment;
  if (queued) data.queued = true;
  const event = append(running, 'approval.granted', at, data);
  // An edit is written with the step's decision (its column in SQL), so it lasts until the step runs.
  return edit === undefined
    ? { steps: onlyStep(index), claims: index, events: [event] }
    : { steps: onlyStep(index), claims: index, decided: index, events: [event] };
}

/** The approver's input for a step (docs/api.md, "Approve with edits"), as checked. */
export interface ApprovedEdit {
  /** The input the step runs with: the capability contract's output, as checked. */
  readonly input: unknown;
  /** ...recorded (encoded and digested). */
  readonly recorded: RecordedValue;
}

/**
 * Keeps the proposed and the approved input on the step and their digests in the grant's data:
 * the step's decision stays the request's until the step is authorized again with the approved one.
 */
function keepEdit(
  running: RunningJob,
  index: number,
  edit: ApprovedEdit,
  data: Record<string, unknown>,
): void {
  const live = running.job.steps[index] as JobStep;
  const recorded = running.record.steps[index] as JobStep;
  live.proposedInput = Object.hasOwn(live, 'resolvedInput') ? live.resolvedInput : live.input;
  recorded.proposedInput =
    (Object.hasOwn(recorded, 'resolvedInput') ? recorded.resolvedInput : recorded.input) ?? null;
  live.approvedInput = edit.input;
  recorded.approvedInput = edit.recorded.value ?? null;
  data.edited = true;
  data.inputDigest = edit.recorded.digest;
  data.proposedDigest = recorded.decision?.inputDigest;
}

/**
 * A waiting step was rejected: `approval.rejected`, the step fails with `Approval rejected`
 * (and the comment), later steps are skipped and the job fails; one change.
 */
export function rejectApproval(
  running: RunningJob,
  index: number,
  at: string,
  approverId: string,
  comment: string | undefined,
): JobChange {
  const step = running.record.steps[index] as JobStep;
  const data: Record<string, unknown> = { stepId: step.id, approver: approverId };
  if (comment !== undefined) data.comment = comment;
  const event = append(running, 'approval.rejected', at, data);
  const error = comment === undefined ? 'Approval rejected' : `Approval rejected: ${comment}`;
  const failed = endStep(running, index, at, { status: 'failed', error });
  const change = joinChanges({ steps: [], claims: index, events: [event] }, failed);
  return joinChanges(change, failJob(running, at, error));
}

/** A waiting step's request expired: the step fails with `Approval expired`, so does the job. */
export function expireApproval(running: RunningJob, index: number, at: string): JobChange {
  const error = 'Approval expired';
  return joinChanges(
    { ...endStep(running, index, at, { status: 'failed', error }), claims: index },
    failJob(running, at, error),
  );
}

/**
 * A runtime took up the job after its owner was gone (docs/api.md, "Recovery"):
 * `job.recovered { by, worker? }`, `by` the recovering owner's id, `worker` the id of the worker
 * that took it up, when a worker did. Nothing else changes.
 */
export function recoverJob(
  running: RunningJob,
  at: string,
  by: string,
  worker?: string,
): JobChange {
  touch(running, at);
  const data = worker === undefined ? { by } : { by, worker };
  return { steps: NO_STEPS, events: [append(running, 'job.recovered', at, data)] };
}

/**
 * A step started and never ended, its process gone: it may have run. `interrupted`, with
 * `step.interrupted { stepId, capability }`; it is never invoked again without an approval.
 */
export function interruptStep(running: RunningJob, index: number, at: string): JobChange {
  const step = running.job.steps[index] as JobStep;
  setStatus(running, index, 'interrupted');
  touch(running, at);
  const event = append(running, 'step.interrupted', at, {
    stepId: step.id,
    capability: step.capability,
  });
  return { steps: onlyStep(index), events: [event] };
}

/*
 * Plan warrants (docs/api.md, "Plan warrants"): one request for the whole plan, held by its first
 * step, decided once; the steps then run, each authorized again at its turn.
 */

/** The step that holds a plan request: the plan's first, nothing has run before it. */
export const PLAN_REQUEST_STEP = 0;

/**
 * The plan waits for one approval before any step runs: its first step and the job are
 * `awaiting_approval` (the step without a decision: none was made), with `approval.requested
 * { kind: 'plan', stepId, planDigest, steps, expiresAt }`.
 */
export function awaitPlanApproval(
  running: RunningJob,
  at: string,
  planDigest: string,
  steps: readonly PlanRequestStep[],
  expiresAt: string,
): JobChange {
  const index = PLAN_REQUEST_STEP;
  setStatus(running, index, 'awaiting_approval');
  running.job.status = running.record.status = 'awaiting_approval';
  touch(running, at);
  const step = running.record.steps[index] as JobStep;
  const event = append(running, 'approval.requested', at, {
    kind: 'plan',
    stepId: step.id,
    planDigest,
    steps,
    expiresAt,
  });
  return { steps: onlyStep(index), events: [event] };
}

/**
 * The plan was approved: its first step is pending again and the job executing (or `queued`, with
 * a queue engine), with `approval.granted { kind: 'plan', stepId, approver, planDigest, expiresAt,
 * comment?, queued? }`, `expiresAt` the end of the grant. A job submitted to the queue and never
 * started is stamped started now.
 */
export function grantPlanApproval(
  running: RunningJob,
  at: string,
  approverId: string,
  planDigest: string,
  expiresAt: string,
  comment: string | undefined,
  queued: boolean,
): JobChange {
  const index = PLAN_REQUEST_STEP;
  setStatus(running, index, 'pending');
  for (const face of [running.job, running.record]) {
    face.status = queued ? 'queued' : 'executing';
    if (!queued) face.startedAt ??= at;
  }
  touch(running, at);
  const step = running.record.steps[index] as JobStep;
  const data: Record<string, unknown> = {
    kind: 'plan',
    stepId: step.id,
    approver: approverId,
    planDigest,
    expiresAt,
  };
  if (comment !== undefined) data.comment = comment;
  if (queued) data.queued = true;
  const event = append(running, 'approval.granted', at, data);
  return { steps: onlyStep(index), claims: index, events: [event] };
}

/**
 * The plan was rejected: `approval.rejected { kind: 'plan', stepId, approver, planDigest,
 * comment? }`, its first step fails with `Approval rejected` (and the comment), the others are
 * skipped and the job fails; one change.
 */
export function rejectPlanApproval(
  running: RunningJob,
  at: string,
  approverId: string,
  planDigest: string,
  comment: string | undefined,
): JobChange {
  const index = PLAN_REQUEST_STEP;
  const step = running.record.steps[index] as JobStep;
  const data: Record<string, unknown> = {
    kind: 'plan',
    stepId: step.id,
    approver: approverId,
    planDigest,
  };
  if (comment !== undefined) data.comment = comment;
  const event = append(running, 'approval.rejected', at, data);
  const error = comment === undefined ? 'Approval rejected' : `Approval rejected: ${comment}`;
  const failed = endStep(running, index, at, { status: 'failed', error });
  const change = joinChanges({ steps: [], claims: index, events: [event] }, failed);
  return joinChanges(change, failJob(running, at, error));
}
