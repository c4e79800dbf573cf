/**
 * The step executor: the ONE code path through which Warrant invokes a capability (docs/decisions.md, "House rules",
 * "One governed path"). For each step, in order: resolve references (own properties only) →
 * check the resolved input → authorize (fail closed) → invoke → record (docs/api.md, "runtime.executePlan").
 * The same resolved input object goes to the authorizer and to the capability (docs/api.md, "runtime.executePlan").
 */
import { randomUUID } from 'node:crypto';
import { authorizerName } from '../authorization/authorizer-name.js';
import type { ExecutionAuthorizer, ExecutionCaller } from '../authorization/authorizer.js';
import { checkDecision } from '../authorization/check-decision.js';
import type { ExecutionContext, ExecutionLogger } from '../capabilities/capability.js';
import { checkInput } from '../capabilities/input-schema.js';
import { describeThrown } from '../errors/describe-value.js';
import { createError } from '../errors/warrant-error.js';
import type { EventBus } from '../events/event-bus.js';
import { isoNow as now } from '../jobs/clock.js';
import type { DecisionOutcome, Job, JobEvent } from '../jobs/job.js';
import type { JobChange, JobStore } from '../jobs/job-store.js';
import {
  completeJob,
  createJob,
  endStep,
  failJob,
  joinChanges,
  startStep,
  type Decided,
  type RunningJob,
  type StepEnd,
} from '../jobs/transitions.js';
import { recordValue } from '../jobs/recorded-value.js';
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

/** A store fault is the one failure that rejects `executePlan` after admission (docs/api.md, "Jobs and events"). */
function storeFailure(error: unknown): Error {
  return createError(
    Error,
    'JOB_STORE_FAILED',
    `The job store failed: ${describeThrown(error)}`,
    error,
  );
}

class JobRun {
  readonly running: RunningJob;
  readonly #deps: ExecutorDependencies;

  constructor(running: RunningJob, deps: ExecutorDependencies) {
    this.running = running;
    this.#deps = deps;
  }

  /**
   * Persists one change, then publishes its events in order (observers see recorded state).
   * Returns undefined when nothing had to be awaited (synchronous store, no observer), so the
   * common path allocates no promise.
   */
  commit(change: JobChange): Promise<void> | undefined {
    let written: void | Promise<void>;
    try {
      written = this.#deps.store.update(this.running.record, change);
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

/** Resolve → check → authorize → invoke for one step. Never throws; store faults aside. */
async function runStep(
  run: JobRun,
  step: AdmittedStep,
  results: readonly unknown[],
  caller: ExecutionCaller | undefined,
  deps: ExecutorDependencies,
): Promise<StepEnd> {
  const { capability } = step;
  const { running } = run;
  const jobId = running.job.id;
  let input: unknown;
  try {
    input = resolveInput(step.input, step.references, results);
  } catch (error) {
    return { status: 'failed', error: describeThrown(error) };
  }
  if (capability.schema.length > 0) {
    let problems;
    try {
      problems = checkInput(input, capability.schema);
    } catch (error) {
      return { status: 'failed', error: `Input validation failed: ${describeThrown(error)}` };
    }
    if (problems.length > 0) {
      return {
        status: 'failed',
        error: `Input validation failed: ${problems.map((problem) => problem.message).join('; ')}`,
      };
    }
  }
  // docs/api.md, "new OperatorRuntime": the authorizer sees the very object the capability will receive. What it is
  // asked about is recorded (encoded, digested) before it answers.
  const authorization = Object.freeze({
    jobId,
    stepId: step.id,
    capability: capability.identity,
    input,
    caller,
  });
  const recordedInput = recordValue(input, 'input');
  const decided = (outcome: DecisionOutcome, reason?: string): Decided => ({
    outcome,
    reason,
    authorizer: authorizerName(deps.authorizer),
    capabilityVersion: capability.version,
    at: now(),
    input,
    recorded: recordedInput,
    resolved: step.references.length > 0,
  });
  let decision: unknown;
  try {
    decision = deps.authorizer.authorize(authorization);
    if (typeof (decision as { then?: unknown } | null | undefined)?.then === 'function')
      decision = await decision;
  } catch (error) {
    const message = describeThrown(error);
    return { status: 'failed', error: message, decided: decided('error', message) };
  }
  const checked = checkDecision(decision);
  if (checked.kind === 'deny') {
    const reason = checked.reason ?? `${NOT_PERMITTED}${capability.name}`;
    return { status: 'denied', reason, risk: capability.risk, decided: decided('deny', reason) };
  }
  if (checked.kind !== 'allow')
    return { status: 'failed', error: INVALID_DECISION, decided: decided('invalid') };

  // The "started" record is durable before the capability runs (README, "Stores").
  const allowed = decided('allow');
  const recorded = run.commit(startStep(running, step.index, allowed.at, allowed));
  if (recorded !== undefined) await recorded;
  const context: ExecutionContext = {
    jobId,
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
    return { status: 'completed', result };
  } catch (error) {
    return { status: 'failed', error: describeThrown(error) };
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
  const { running, change: created } = createJob(plan, caller, randomUUID(), now());
  const run = new JobRun(running, deps);
  try {
    const written = deps.store.create(running.record);
    if (written !== undefined) await written;
  } catch (error) {
    throw storeFailure(error);
  }
  let pending = run.publish(created.events);
  if (pending !== undefined) await pending;

  const { job } = running;
  const results: unknown[] = [];
  const last = plan.steps.length - 1;
  for (const step of plan.steps) {
    const end = await runStep(run, step, results, caller, deps);
    const endedAt = now();
    let change = endStep(running, step.index, endedAt, end);
    if (end.status === 'completed') {
      results.push(end.result);
      // The last step's end and the job's end are one write: both land, or neither.
      if (step.index === last) change = joinChanges(change, completeJob(running, endedAt));
    } else {
      // One write for the step failure and the job failure: both land, or neither.
      const error = end.status === 'denied' ? end.reason : end.error;
      change = joinChanges(change, failJob(running, endedAt, error));
    }
    pending = run.commit(change);
    if (pending !== undefined) await pending;
    if (end.status !== 'completed' || step.index === last) return job;
  }
  // A plan without steps (admission refuses them, so only a direct caller of the executor).
  pending = run.commit(completeJob(running, now()));
  if (pending !== undefined) await pending;
  return job;
}
