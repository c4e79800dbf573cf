/**
 * The step executor: the ONE code path through which Warrant invokes a capability (ARCHITECTURE.md,
 * "One governed path"). For each step, in order: resolve references (own properties only) →
 * check the resolved input → authorize (fail closed) → invoke → record (spec §3 step 4).
 * The same resolved input object goes to the authorizer and to the capability (spec §3 step 5).
 */
import { randomUUID } from 'node:crypto';
import type { ExecutionAuthorizer, ExecutionCaller } from '../authorization/authorizer.js';
import { checkDecision } from '../authorization/check-decision.js';
import type { ExecutionContext, ExecutionLogger } from '../capabilities/capability.js';
import { checkInput } from '../capabilities/input-schema.js';
import { describeThrown } from '../errors/describe-value.js';
import { createError } from '../errors/warrant-error.js';
import type { EventBus } from '../events/event-bus.js';
import { isoNow as now } from '../jobs/clock.js';
import type { Job, JobEvent, JobEventType, JobStep } from '../jobs/job.js';
import type { JobChange, JobStore } from '../jobs/job-store.js';
import type { AdmittedPlan, AdmittedStep } from '../plan/admission.js';
import { resolveInput } from '../plan/references.js';

export interface ExecutorDependencies {
  readonly store: JobStore;
  readonly bus: EventBus;
  readonly authorizer: ExecutionAuthorizer;
  readonly logger: ExecutionLogger;
  /** Given to every capability context; only middleware (timeouts) derives aborting signals. */
  readonly signal: AbortSignal;
}

const NOT_PERMITTED = 'Capability not permitted: ';
const INVALID_DECISION = 'Invalid authorization decision';

/** A store fault is the one failure that rejects `executePlan` after admission (API.md §8). */
function storeFailure(error: unknown): Error {
  return createError(
    Error,
    'JOB_STORE_FAILED',
    `The job store failed: ${describeThrown(error)}`,
    error,
  );
}

class JobRun {
  readonly #job: Job;
  readonly #deps: ExecutorDependencies;

  constructor(job: Job, deps: ExecutorDependencies) {
    this.#job = job;
    this.#deps = deps;
  }

  /**
   * Appends an event to the job; the caller persists it, then publishes it. Event ids are
   * `<jobId>:<sequence>`: unique across jobs, ordered within one, and free of a random draw.
   */
  event(type: JobEventType, timestamp: string, data?: Record<string, unknown>): JobEvent {
    const job = this.#job;
    const event: { -readonly [K in keyof JobEvent]: JobEvent[K] } = {
      id: `${job.id}:${job.events.length + 1}`,
      jobId: job.id,
      type,
      timestamp,
    };
    if (data !== undefined) event.data = data;
    this.#job.events.push(event);
    return event;
  }

  /**
   * Persists one change, then publishes its events in order (observers see recorded state).
   * Returns undefined when nothing had to be awaited (synchronous store, no observer), so the
   * common path allocates no promise.
   */
  commit(change: JobChange): Promise<void> | undefined {
    let written: void | Promise<void>;
    try {
      written = this.#deps.store.update(this.#job, change);
    } catch (error) {
      throw storeFailure(error);
    }
    if (written === undefined) return this.publish(change.events);
    return written.then(
      () => this.publish(change.events),
      (error: unknown) => {
        throw storeFailure(error);
      },
    );
  }

  /**
   * Publishes events in order, each after the previous one's handlers settled. Synchronous (no
   * promise) as long as every handler returns synchronously.
   */
  publish(events: readonly JobEvent[]): Promise<void> | undefined {
    const bus = this.#deps.bus;
    if (bus.idle) return undefined;
    for (let index = 0; index < events.length; index++) {
      const delivered = bus.publish(events[index] as JobEvent);
      if (delivered !== undefined) return this.#publishAfter(delivered, events, index + 1);
    }
    return undefined;
  }

  async #publishAfter(
    delivered: Promise<void>,
    events: readonly JobEvent[],
    from: number,
  ): Promise<void> {
    await delivered;
    for (let index = from; index < events.length; index++) {
      const next = this.#deps.bus.publish(events[index] as JobEvent);
      if (next !== undefined) await next;
    }
  }
}

function createJob(plan: AdmittedPlan, timestamp: string): Job {
  // Optional keys are set only when present (plain assignments: spreads were measurably slower).
  type Mutable<T> = { -readonly [K in keyof T]: T[K] };
  const steps: JobStep[] = plan.steps.map((step) => {
    const record: Mutable<JobStep> = {
      id: step.id,
      capability: step.capability.name,
      status: 'pending',
      createdAt: timestamp,
    };
    if (step.capabilityVersion !== undefined) record.capabilityVersion = step.capabilityVersion;
    if (step.input !== undefined) record.input = step.input;
    if (step.reason !== undefined) record.reason = step.reason;
    if (step.idempotencyKey !== undefined) record.idempotencyKey = step.idempotencyKey;
    return record;
  });
  const job: Mutable<Job> = {
    id: randomUUID(),
    goal: plan.goal,
    status: 'created',
    createdAt: timestamp,
    updatedAt: timestamp,
    steps,
    events: [],
  };
  if (plan.id !== undefined) job.planId = plan.id;
  if (plan.idempotencyKey !== undefined) job.idempotencyKey = plan.idempotencyKey;
  if (plan.metadata !== undefined) job.metadata = plan.metadata;
  return job;
}

type StepOutcome =
  | { readonly ok: true; readonly result: unknown }
  | {
      readonly ok: false;
      readonly type: 'capability.denied' | 'capability.failed';
      readonly error: string;
      readonly data: Record<string, unknown>;
    };

/** Resolve → check → authorize → invoke for one step. Never throws; store faults aside. */
async function runStep(
  run: JobRun,
  job: Job,
  step: AdmittedStep,
  results: readonly unknown[],
  caller: ExecutionCaller | undefined,
  deps: ExecutorDependencies,
): Promise<StepOutcome> {
  const { capability } = step;
  const failed = (error: string): StepOutcome => ({
    ok: false,
    type: 'capability.failed',
    error,
    data: { stepId: step.id, capability: capability.name, error },
  });
  let input: unknown;
  try {
    input = resolveInput(step.input, step.references, results);
  } catch (error) {
    return failed(describeThrown(error));
  }
  if (capability.schema.length > 0) {
    let problems;
    try {
      problems = checkInput(input, capability.schema);
    } catch (error) {
      return failed(`Input validation failed: ${describeThrown(error)}`);
    }
    if (problems.length > 0) {
      return failed(
        `Input validation failed: ${problems.map((problem) => problem.message).join('; ')}`,
      );
    }
  }
  // API.md §7: the authorizer sees the very object the capability will receive.
  const authorization = Object.freeze({
    jobId: job.id,
    stepId: step.id,
    capability: capability.identity,
    input,
    caller,
  });
  let decision: unknown;
  try {
    decision = deps.authorizer.authorize(authorization);
    if (typeof (decision as { then?: unknown } | null | undefined)?.then === 'function')
      decision = await decision;
  } catch (error) {
    return failed(describeThrown(error));
  }
  const checked = checkDecision(decision);
  if (checked.kind === 'deny') {
    const reason = checked.reason ?? `${NOT_PERMITTED}${capability.name}`;
    return {
      ok: false,
      type: 'capability.denied',
      error: reason,
      data: { stepId: step.id, capability: capability.name, risk: capability.risk, reason },
    };
  }
  if (checked.kind !== 'allow') return failed(INVALID_DECISION);

  const jobStep = job.steps[step.index] as JobStep;
  const startedAt = now();
  jobStep.status = 'running';
  jobStep.startedAt = startedAt;
  job.updatedAt = startedAt;
  // The "started" record is durable before the capability runs (API.md §10).
  const recorded = run.commit({
    step: step.index,
    events: [
      run.event('capability.started', startedAt, { stepId: step.id, capability: capability.name }),
    ],
  });
  if (recorded !== undefined) await recorded;
  const context: ExecutionContext = {
    jobId: job.id,
    stepId: step.id,
    caller,
    logger: deps.logger,
    signal: deps.signal,
  };
  try {
    // The function and `this` were captured at registration: later edits to the object do nothing.
    const result: unknown = await Reflect.apply(capability.execute, capability.target, [
      input,
      context,
    ]);
    return { ok: true, result };
  } catch (error) {
    return failed(describeThrown(error));
  }
}

/**
 * Materializes a job from an admitted plan, runs it and returns it. Rejects only when the store
 * fails (JOB_STORE_FAILED); every other failure is a returned job with `status: 'failed'`.
 */
export async function executeAdmittedPlan(
  plan: AdmittedPlan,
  caller: ExecutionCaller | undefined,
  deps: ExecutorDependencies,
): Promise<Job> {
  const createdAt = now();
  const job = createJob(plan, createdAt);
  const run = new JobRun(job, deps);
  const created = run.event('job.created', createdAt, { goal: job.goal });
  // Nothing runs between creating the job and starting it, so one write records both: a durable
  // store pays one transaction, not two, and a crash still leaves the job on disk before any
  // authorizer or capability is called.
  job.status = 'executing';
  job.startedAt = createdAt;
  const started = run.event('execution.started', createdAt);
  try {
    const written = deps.store.create(job);
    if (written !== undefined) await written;
  } catch (error) {
    throw storeFailure(error);
  }
  let pending = run.publish([created, started]);
  if (pending !== undefined) await pending;

  const results: unknown[] = [];
  const last = plan.steps.length - 1;
  for (const step of plan.steps) {
    const outcome = await runStep(run, job, step, results, caller, deps);
    const jobStep = job.steps[step.index] as JobStep;
    const endedAt = now();
    jobStep.completedAt = endedAt;
    job.updatedAt = endedAt;
    if (outcome.ok) {
      jobStep.status = 'completed';
      jobStep.result = outcome.result;
      results.push(outcome.result);
      const events = [
        run.event('capability.completed', endedAt, {
          stepId: step.id,
          capability: step.capability.name,
        }),
      ];
      // The last step's end and the job's end are one write: both land, or neither.
      if (step.index === last) events.push(completeJob(run, job, results, endedAt));
      pending = run.commit({ step: step.index, events });
      if (pending !== undefined) await pending;
      if (step.index === last) return job;
      continue;
    }
    jobStep.status = 'failed';
    jobStep.error = outcome.error;
    for (let later = step.index + 1; later < job.steps.length; later++) {
      (job.steps[later] as JobStep).status = 'skipped';
    }
    job.status = 'failed';
    job.outcome = 'failed';
    job.error = outcome.error;
    job.completedAt = endedAt;
    // One write for the step failure and the job failure: both land, or neither.
    pending = run.commit({
      step: step.index,
      events: [
        run.event(outcome.type, endedAt, outcome.data),
        run.event('job.failed', endedAt, { error: outcome.error }),
      ],
    });
    if (pending !== undefined) await pending;
    return job;
  }
  // A plan without steps (admission refuses them, so only a direct caller of the executor).
  pending = run.commit({ events: [completeJob(run, job, results, now())] });
  if (pending !== undefined) await pending;
  return job;
}

/** Marks the job completed and returns its `job.completed` event (not yet recorded). */
function completeJob(
  run: JobRun,
  job: Job,
  results: readonly unknown[],
  completedAt: string,
): JobEvent {
  job.status = 'completed';
  job.outcome = 'success';
  job.result = results.length === 1 ? results[0] : results;
  job.completedAt = completedAt;
  job.updatedAt = completedAt;
  return run.event('job.completed', completedAt, { stepCount: job.steps.length });
}
