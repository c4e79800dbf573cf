/**
 * The transitions of a job: the only code that changes a job record. The executor decides what
 * happens (allow, deny, fail, complete); these functions record it on the job and return the
 * change they made, naming the steps written and the events appended, and the store writes
 * exactly that change (docs/decisions.md, "Jobs and events").
 */
import type { CapabilityRisk } from '../capabilities/risk.js';
import type { Job, JobEvent, JobEventType, JobStep } from './job.js';
import type { JobChange } from './job-store.js';

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

/** How a step ended, as the executor decided it. */
export type StepEnd =
  | { readonly status: 'completed'; readonly result: unknown }
  | { readonly status: 'denied'; readonly reason: string; readonly risk: CapabilityRisk }
  | { readonly status: 'failed'; readonly error: string };

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

/**
 * Creates a job already started: nothing runs between the two, so one write records both
 * (`job.created` and `execution.started`), and the job is on record before any authorizer or
 * capability is called.
 */
export function createJob(plan: NewJob, id: string, at: string): { job: Job; change: JobChange } {
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
  const created = append(job, 'job.created', at, { goal: job.goal });
  job.status = 'executing';
  job.startedAt = at;
  const started = append(job, 'execution.started', at);
  return { job, change: { steps: steps.map((_, index) => index), events: [created, started] } };
}

/** The step is about to be invoked: `running`, with `capability.started`. */
export function startStep(job: Job, index: number, at: string): JobChange {
  const step = stepAt(job, index);
  step.status = 'running';
  step.startedAt = at;
  job.updatedAt = at;
  const event = append(job, 'capability.started', at, {
    stepId: step.id,
    capability: step.capability,
  });
  return { steps: [index], events: [event] };
}

/** The step ended: completed with its result, denied, or failed. */
export function endStep(job: Job, index: number, at: string, end: StepEnd): JobChange {
  const step = stepAt(job, index);
  step.completedAt = at;
  job.updatedAt = at;
  let event: JobEvent;
  if (end.status === 'completed') {
    step.status = 'completed';
    step.result = end.result;
    event = append(job, 'capability.completed', at, {
      stepId: step.id,
      capability: step.capability,
    });
  } else if (end.status === 'denied') {
    step.status = 'failed';
    step.error = end.reason;
    event = append(job, 'capability.denied', at, {
      stepId: step.id,
      capability: step.capability,
      risk: end.risk,
      reason: end.reason,
    });
  } else {
    step.status = 'failed';
    step.error = end.error;
    event = append(job, 'capability.failed', at, {
      stepId: step.id,
      capability: step.capability,
      error: end.error,
    });
  }
  return { steps: [index], events: [event] };
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
  return {
    steps: second.steps.length === 0 ? first.steps : [...first.steps, ...second.steps],
    events: [...first.events, ...second.events],
  };
}
