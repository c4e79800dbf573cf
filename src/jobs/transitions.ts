/**
 * The transitions of a job: the only code that changes a job record. The executor decides what
 * happens (allow, deny, fail, complete); these functions record it on the job and return the
 * change they made, naming the steps written and the events appended, and the store writes
 * exactly that change (docs/decisions.md, "Jobs and events").
 */
import type { ExecutionCaller } from '../authorization/authorizer.js';
import type { CapabilityRisk } from '../capabilities/risk.js';
import type { DecisionOutcome, Job, JobEvent, JobEventType, JobStep, StepDecision } from './job.js';
import type { JobChange } from './job-store.js';
import { recordValue, type RecordedValue } from './recorded-value.js';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** One step of a new job (an admitted step fits). */
export interface NewStep {
  readonly id: string;
  readonly capability: { readonly name: string };
  readonly capabilityVersion: string | undefined;
  readonly input: unknown;
  readonly reason: string | undefined;
  readonly idempotencyKey: string | undefined;
}

/** What a job is made from (an admitted plan fits). */
export interface NewJob {
  readonly id: string | undefined;
  readonly goal: string;
  readonly metadata: unknown;
  readonly idempotencyKey: string | undefined;
  readonly steps: readonly NewStep[];
}

/** A decision on a step, as the executor made it. */
export interface Decided {
  readonly outcome: DecisionOutcome;
  /** The deny reason or the authorizer's thrown message. */
  readonly reason: string | undefined;
  readonly authorizer: string | undefined;
  /** The registered version of the capability. */
  readonly capabilityVersion: string;
  readonly at: string;
  /** The input as authorized: the very object the authorizer saw... */
  readonly input: unknown;
  /** ...recorded (encoded and digested) before the authorizer was asked. */
  readonly recorded: RecordedValue;
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
  | { readonly status: 'failed'; readonly error: string; readonly decided?: Decided };

const NO_STEPS: readonly number[] = Object.freeze([]);

/**
 * Appends an event. Event ids are `<jobId>:<sequence>`: unique across jobs, ordered within one,
 * and free of a random draw.
 */
function append(
  job: Job,
  type: JobEventType,
  timestamp: string,
  data?: Record<string, unknown>,
): JobEvent {
  const event: Mutable<JobEvent> = {
    id: `${job.id}:${job.events.length + 1}`,
    jobId: job.id,
    type,
    timestamp,
  };
  if (data !== undefined) event.data = data;
  job.events.push(event);
  return event;
}

function stepAt(job: Job, index: number): JobStep {
  return job.steps[index] as JobStep;
}

/** Records a decision on its step and returns its input digest for the decision's event. */
function decide(step: JobStep, decided: Decided): string {
  const decision: Mutable<StepDecision> = {
    outcome: decided.outcome,
    inputDigest: decided.recorded.digest,
    capabilityVersion: decided.capabilityVersion,
    decidedAt: decided.at,
  };
  if (decided.reason !== undefined) decision.reason = decided.reason;
  if (decided.authorizer !== undefined) decision.authorizer = decided.authorizer;
  step.decision = Object.freeze(decision);
  if (decided.resolved) step.resolvedInput = decided.input;
  return decision.inputDigest;
}

/**
 * Creates a job already started: nothing runs between the two, so one write records both
 * (`job.created` and `execution.started`), and the job is on record before any authorizer or
 * capability is called.
 */
export function createJob(
  plan: NewJob,
  caller: ExecutionCaller | undefined,
  id: string,
  at: string,
): { job: Job; change: JobChange } {
  // Optional keys are set only when present (plain assignments: spreads were measurably slower).
  const steps: JobStep[] = plan.steps.map((step) => {
    const record: Mutable<JobStep> = {
      id: step.id,
      capability: step.capability.name,
      status: 'pending',
      createdAt: at,
    };
    if (step.capabilityVersion !== undefined) record.capabilityVersion = step.capabilityVersion;
    if (step.input !== undefined) record.input = step.input;
    if (step.reason !== undefined) record.reason = step.reason;
    if (step.idempotencyKey !== undefined) record.idempotencyKey = step.idempotencyKey;
    return record;
  });
  const job: Mutable<Job> = {
    id,
    goal: plan.goal,
    status: 'created',
    createdAt: at,
    updatedAt: at,
    steps,
    events: [],
  };
  if (plan.id !== undefined) job.planId = plan.id;
  if (plan.idempotencyKey !== undefined) job.idempotencyKey = plan.idempotencyKey;
  if (plan.metadata !== undefined) job.metadata = plan.metadata;
  if (caller !== undefined) job.caller = caller;
  const created = append(job, 'job.created', at, { goal: job.goal });
  job.status = 'executing';
  job.startedAt = at;
  const started = append(job, 'execution.started', at);
  return { job, change: { steps: steps.map((_, index) => index), events: [created, started] } };
}

/** The step was allowed and is about to be invoked: `running`, with `capability.started`. */
export function startStep(job: Job, index: number, at: string, decided: Decided): JobChange {
  const step = stepAt(job, index);
  const inputDigest = decide(step, decided);
  step.status = 'running';
  step.startedAt = at;
  job.updatedAt = at;
  const event = append(job, 'capability.started', at, {
    stepId: step.id,
    capability: step.capability,
    inputDigest,
  });
  return { steps: [index], decided: index, events: [event] };
}

/**
 * The step ended: completed with its result, denied, or failed. A failure carries the input
 * digest when a decision was made on the step, now (`end.decided`) or when it started.
 */
export function endStep(job: Job, index: number, at: string, end: StepEnd): JobChange {
  const step = stepAt(job, index);
  step.completedAt = at;
  job.updatedAt = at;
  if (end.status === 'completed') {
    step.status = 'completed';
    step.result = end.result;
    const event = append(job, 'capability.completed', at, {
      stepId: step.id,
      capability: step.capability,
      resultDigest: recordValue(end.result).digest,
    });
    return { steps: [index], events: [event] };
  }
  const inputDigest =
    end.decided === undefined ? step.decision?.inputDigest : decide(step, end.decided);
  step.status = 'failed';
  let event: JobEvent;
  if (end.status === 'denied') {
    step.error = end.reason;
    event = append(job, 'capability.denied', at, {
      stepId: step.id,
      capability: step.capability,
      risk: end.risk,
      reason: end.reason,
      inputDigest,
    });
  } else {
    step.error = end.error;
    const data: Record<string, unknown> = {
      stepId: step.id,
      capability: step.capability,
      error: end.error,
    };
    if (inputDigest !== undefined) data.inputDigest = inputDigest;
    event = append(job, 'capability.failed', at, data);
  }
  return end.decided === undefined
    ? { steps: [index], events: [event] }
    : { steps: [index], decided: index, events: [event] };
}

/** The job failed with `error`: every step not yet run is skipped. */
export function failJob(job: Job, at: string, error: string): JobChange {
  const skipped: number[] = [];
  job.steps.forEach((step, index) => {
    if (step.status === 'pending') {
      step.status = 'skipped';
      skipped.push(index);
    }
  });
  job.status = 'failed';
  job.outcome = 'failed';
  job.error = error;
  job.completedAt = at;
  job.updatedAt = at;
  return { steps: skipped, events: [append(job, 'job.failed', at, { error })] };
}

/** The job completed: its result is the one step's result, or the array of step results. */
export function completeJob(job: Job, at: string): JobChange {
  const { steps } = job;
  job.status = 'completed';
  job.outcome = 'success';
  job.result = steps.length === 1 ? steps[0]?.result : steps.map((step) => step.result);
  job.completedAt = at;
  job.updatedAt = at;
  return {
    steps: NO_STEPS,
    events: [append(job, 'job.completed', at, { stepCount: steps.length })],
  };
}

/** Two changes written as one (both land, or neither). */
export function joinChanges(first: JobChange, second: JobChange): JobChange {
  const joined: Mutable<JobChange> = {
    steps: second.steps.length === 0 ? first.steps : [...first.steps, ...second.steps],
    events: [...first.events, ...second.events],
  };
  const decided = first.decided ?? second.decided;
  if (decided !== undefined) joined.decided = decided;
  return joined;
}
