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

  /** Appends an event to the job; the caller persists it, then publishes it. */
  event(type: JobEventType, timestamp: string, data?: Record<string, unknown>): JobEvent {
    const event: JobEvent = {
      id: randomUUID(),
      jobId: this.#job.id,
      type,
      timestamp,
      ...(data !== undefined && { data }),
    };
    this.#job.events.push(event);
    return event;
  }

  /** Persists one change, then publishes its events in order (observers see recorded state). */
  async commit(change: JobChange): Promise<void> {
    try {
      const written = this.#deps.store.update(this.#job, change);
      if (written !== undefined) await written;
    } catch (error) {
      throw storeFailure(error);
    }
    await this.publish(change.events);
  }

  async publish(events: readonly JobEvent[]): Promise<void> {
    for (const event of events) {
      const delivered = this.#deps.bus.publish(event);
      if (delivered !== undefined) await delivered;
    }
  }
}

function now(): string {
  return new Date().toISOString();
}

function createJob(plan: AdmittedPlan, timestamp: string): Job {
  const steps: JobStep[] = plan.steps.map((step) => ({
    id: step.id,
    capability: step.capability.name,
    ...(step.capabilityVersion !== undefined && { capabilityVersion: step.capabilityVersion }),
    ...(step.input !== undefined && { input: step.input }),
    ...(step.reason !== undefined && { reason: step.reason }),
    ...(step.idempotencyKey !== undefined && { idempotencyKey: step.idempotencyKey }),
    status: 'pending',
    createdAt: timestamp,
  }));
  return {
    id: randomUUID(),
    goal: plan.goal,
    ...(plan.id !== undefined && { planId: plan.id }),
    ...(plan.idempotencyKey !== undefined && { idempotencyKey: plan.idempotencyKey }),
    ...(plan.metadata !== undefined && { metadata: plan.metadata }),
    status: 'created',
    createdAt: timestamp,
    updatedAt: timestamp,
    steps,
    events: [],
  };
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
  await run.commit({
    step: step.index,
    events: [
      run.event('capability.started', startedAt, { stepId: step.id, capability: capability.name }),
    ],
  });
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
  try {
    const written = deps.store.create(job);
    if (written !== undefined) await written;
  } catch (error) {
    throw storeFailure(error);
  }
  await run.publish([created]);

  const startedAt = now();
  job.status = 'executing';
  job.startedAt = startedAt;
  job.updatedAt = startedAt;
  await run.commit({ events: [run.event('execution.started', startedAt)] });

  const results: unknown[] = [];
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
      await run.commit({
        step: step.index,
        events: [
          run.event('capability.completed', endedAt, {
            stepId: step.id,
            capability: step.capability.name,
          }),
        ],
      });
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
    await run.commit({
      step: step.index,
      events: [
        run.event(outcome.type, endedAt, outcome.data),
        run.event('job.failed', endedAt, { error: outcome.error }),
      ],
    });
    return job;
  }
  const completedAt = now();
  job.status = 'completed';
  job.outcome = 'success';
  job.result = results.length === 1 ? results[0] : results;
  job.completedAt = completedAt;
  job.updatedAt = completedAt;
  await run.commit({
    events: [run.event('job.completed', completedAt, { stepCount: job.steps.length })],
  });
  return job;
}
