/**
 * The step executor: the ONE code path through which Warrant invokes a capability (docs/decisions.md, "House rules",
 * "One governed path"). For each step, in order: resolve references (own properties only) →
 * check the resolved input → authorize (fail closed) → invoke → record (docs/api.md, "runtime.executePlan").
 * The same resolved input object goes to the authorizer and to the capability (docs/api.md, "runtime.executePlan");
 * in a 2.0 plan, a deep-frozen copy to the authorizer and a fresh one to the capability (docs/api.md,
 * "Plan version 2.0").
 */
import { ErrorCode } from '../errors/error-codes.js';
import { authorizerName } from '../authorization/authorizer-name.js';
import type {
  ApprovalGrant,
  CapabilityAuthorizationContext,
  ExecutionAuthorizer,
  ExecutionCaller,
} from '../authorization/authorizer.js';
import { checkDecision } from '../authorization/check-decision.js';
import { decisionPolicies } from '../authorization/decision-policies.js';
import type { ExecutionContext, ExecutionLogger } from '../capabilities/capability.js';
import { checkStepInput } from '../capabilities/step-input.js';
import { stepLogger } from '../capabilities/host-logger.js';
import { silentLogger } from '../capabilities/lifecycle-logging-middleware.js';
import { describeThrown } from '../errors/describe-value.js';
import { createError } from '../errors/warrant-error.js';
import type { EventBus } from '../events/event-bus.js';
import { isoNow as now } from '../jobs/clock.js';
import { newJobId } from '../jobs/job-id.js';
import type { DecisionOutcome, Job, JobEvent } from '../jobs/job.js';
import type { JobChange, JobStore } from '../jobs/job-store.js';
import { hasQueue } from '../jobs/store-parts.js';
import {
  awaitApproval,
  cancelJob,
  completeJob,
  createJob,
  endStep,
  failJob,
  joinChanges,
  retryStep,
  startQueuedJob,
  startStep,
  type CancelRequest,
  type Decided,
  type RecordedAsk,
  type RunningJob,
  type StepEnd,
} from '../jobs/transitions.js';
import {
  recordLazily,
  setDigestField,
  setEffectDigestField,
  type RecordedValue,
} from '../jobs/recorded-value.js';
import { lazyField, setLazyField } from '../values/lazy-field.js';
import type { AdmittedPlan, AdmittedStep } from '../plan/admission.js';
import { resolveInput } from '../plan/references.js';
import {
  cloneGoverned,
  copyGoverned,
  governedField,
  type GovernedCopy,
} from '../plan/governed-value.js';
import { checkLimits, type LimitDenial } from '../limits/limit-check.js';
import type { CheckedLimit } from '../limits/limit-options.js';
import { prepareEffect } from './prepare-effect.js';
import { queuedResume, type QueuedResume } from './queued-grants.js';
import { coverByPlanGrant, warrantChange, type PlanWarrantStart } from './plan-warrant.js';
import { recordedCaller } from './recorded-caller.js';
import { pinnedDefinition } from './pinned-definition.js';
import {
  startJobTelemetry,
  telemetryLoading,
  type JobTelemetry,
} from '../telemetry/job-telemetry.js';

export interface ExecutorDependencies {
  readonly store: JobStore;
  readonly bus: EventBus;
  readonly authorizer: ExecutionAuthorizer;
  readonly logger: ExecutionLogger;
  /** Given to every capability context; only middleware (timeouts) derives aborting signals. */
  readonly signal: AbortSignal;
  /** Present when the runtime has approvals on: how long a request waits (ms). */
  readonly approvals?: { readonly ttlMs: number };
  /** Present when the runtime has limits (docs/api.md, "Limits"): checked after each allow. */
  readonly limits?: readonly CheckedLimit[];
}

/**
 * A job this runtime may cancel while it runs (docs/api.md, "Queued jobs and cancellation"): its
 * own signal, given to each of its steps, and the cancel once one is requested. The executor
 * checks `cancel` after each step settles and before starting the next.
 */
export interface JobControl {
  /**
   * Made on first use (`controlSignal`, `abortControl`): most jobs never read their signal, and an
   * AbortController per job was a sixth of a 1-step job's cost (BENCHMARKS.md, "Governed overhead
   * per step").
   */
  controller: AbortController | undefined;
  cancel: CancelRequest | undefined;
  /** The job's id, set by the executor when it creates the job. */
  jobId: string | undefined;
}

/** The job's signal, given to each of its steps' contexts; its controller is made now if needed. */
export function controlSignal(control: JobControl): AbortSignal {
  return (control.controller ??= new AbortController()).signal;
}

/** A context's `signal` field: the job's signal, made when first read (src/values/lazy-field.ts). */
const SIGNAL_FIELD = lazyField(controlSignal);

/** Aborts the job's signal (a cancel): whoever reads it later finds it aborted with `reason`. */
export function abortControl(control: JobControl, reason: Error): void {
  (control.controller ??= new AbortController()).abort(reason);
}

/** A granted approval for one step, as the resumed run checks it (docs/api.md, "Approvals"). */
export interface StepApproval {
  readonly grant: ApprovalGrant;
  /** The registered version the request was made for. */
  readonly capabilityVersion: string;
  /** With `grant.edited`: the approved input, which the step runs with (docs/api.md, "Approve with edits"). */
  readonly input?: unknown;
}

const NOT_PERMITTED = 'Capability not permitted: ';
const INVALID_DECISION = 'Invalid authorization decision';
const APPROVAL_NOT_ENOUGH = 'Approval required again after approval was granted';
const CANCELLED_BEFORE_INVOKE = 'Job cancelled before the capability was invoked';
const CANCELLED_WAITING = 'Job cancelled while the step awaited approval';

/**
 * A store fault is the one failure that rejects `executePlan` after admission (docs/api.md, "Jobs
 * and events"). Before the job exists (`jobId` undefined), a store that stayed unavailable through
 * its retries rejects as STORE_UNAVAILABLE, as it is: nothing was recorded, the plan can be sent
 * again. Once the job exists, JOB_STORE_FAILED names it (`jobId`, docs/api.md, "Store outages").
 */
function storeFailure(error: unknown, jobId?: string): Error {
  if (
    jobId === undefined &&
    (error as { code?: unknown } | null)?.code === ErrorCode.STORE_UNAVAILABLE
  )
    return error as Error;
  const failure = createError(
    Error,
    ErrorCode.JOB_STORE_FAILED,
    `The job store failed: ${describeThrown(error)}`,
    error,
  );
  if (jobId !== undefined)
    Object.defineProperty(failure, 'jobId', { value: jobId, enumerable: true });
  return failure;
}

class JobRun {
  readonly running: RunningJob;
  /** The run's spans; undefined when nothing records them (docs/api.md, "OpenTelemetry"). */
  readonly telemetry: JobTelemetry | undefined;
  /** Present for a job the runtime can cancel. */
  readonly control: JobControl | undefined;
  readonly #deps: ExecutorDependencies;

  constructor(
    running: RunningJob,
    deps: ExecutorDependencies,
    telemetry?: JobTelemetry,
    control?: JobControl,
  ) {
    this.running = running;
    this.telemetry = telemetry;
    this.control = control;
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
      throw storeFailure(error, this.running.job.id);
    }
    if (written === undefined) return this.publish(change.events);
    return written.then(
      () => this.publish(change.events),
      (error: unknown) => {
        throw storeFailure(error, this.running.job.id);
      },
    );
  }

  /**
   * Persists a change that takes the job out of `queued` only while it is still stored so
   * (`store.updateWhileQueued`, a conditional write; a store without it writes it as any
   * change), then publishes its events. False when another process changed the job first:
   * nothing written, nothing published.
   */
  async commitWhileQueued(change: JobChange): Promise<boolean> {
    const { store } = this.#deps;
    try {
      if (!hasQueue(store)) await store.update(this.running.record, change);
      else if (!(await store.updateWhileQueued(this.running.record, change))) return false;
    } catch (error) {
      throw storeFailure(error, this.running.job.id);
    }
    const published = this.publish(change.events);
    if (published !== undefined) await published;
    return true;
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

/**
 * The decision on a step as the executor made it, stamped now. A module function, not a closure
 * made per step: one object fewer for every step (docs/decisions.md, "Allocation on the hot path").
 */
function decidedNow(
  outcome: DecisionOutcome,
  reason: string | undefined,
  step: AdmittedStep,
  asked: CapabilityAuthorizationContext,
  recorded: RecordedValue,
  deps: ExecutorDependencies,
  policies?: readonly string[],
): Decided {
  return {
    outcome,
    reason,
    authorizer: authorizerName(deps.authorizer),
    policies,
    capabilityVersion: step.capability.version,
    at: now(),
    input: asked.input,
    recorded,
    resolved: step.references.length > 0,
    definitionDigest: asked.definitionDigest,
  };
}

/** A denial of the step, with its decision. */
function denied(
  reason: string,
  step: AdmittedStep,
  asked: CapabilityAuthorizationContext,
  recorded: RecordedValue,
  deps: ExecutorDependencies,
  policies: readonly string[] | undefined,
): StepEnd {
  const decided = decidedNow('deny', reason, step, asked, recorded, deps, policies);
  return { status: 'denied', reason, risk: step.capability.risk, decided };
}

/** A denial by a limit (docs/api.md, "Limits"): `decision.limit` names it; no policy decided it. */
function limited(
  over: LimitDenial,
  step: AdmittedStep,
  asked: CapabilityAuthorizationContext,
  recorded: RecordedValue,
  deps: ExecutorDependencies,
): StepEnd {
  const decided: Decided = {
    ...decidedNow('deny', over.reason, step, asked, recorded, deps),
    limit: over.limit,
  };
  return { status: 'denied', reason: over.reason, risk: step.capability.risk, decided };
}

const NOT_GOVERNED = 'Value is not a supported governed representation';

/** The step error of a 2.0 input outside the value domain, naming where and what. */
function notGoverned(copied: GovernedCopy & { ok: false }): StepEnd {
  const { path, what } = copied.problem;
  return { status: 'failed', error: `${NOT_GOVERNED}: ${governedField(path)} is ${what}` };
}

/** A step's input ready to authorize: the input itself and the record of it. */
interface ReadyInput {
  readonly input: unknown;
  readonly recorded: RecordedAsk;
}

/**
 * The input a step runs with: its references resolved (or an approver's edit), in a 2.0 plan a
 * deep-frozen plain-data copy, and checked by the capability's input contract (whose output it
 * is from here on); or the step's end when it cannot be.
 */
async function stepInput(
  step: AdmittedStep,
  results: readonly unknown[],
  approval: StepApproval | undefined,
  governed: boolean,
): Promise<ReadyInput | StepEnd> {
  const { capability } = step;
  let input: unknown;
  try {
    // An approver's edit replaces the step's own input, references and all.
    input =
      approval?.grant.edited === true
        ? approval.input
        : resolveInput(step.input, step.references, results);
  } catch (error) {
    return { status: 'failed', error: describeThrown(error) };
  }
  // A 2.0 input without references is the frozen copy made at capture; anything else is walked.
  if (governed && input !== step.input) {
    const copied = copyGoverned(input);
    if (!copied.ok) return notGoverned(copied);
    input = copied.value;
  }
  // The schema's output is the input from here on: the authorizer and the capability get it.
  let valid = checkStepInput(capability, input);
  if (valid instanceof Promise) valid = await valid;
  if (!valid.ok) return { status: 'failed', error: valid.error };
  if (governed && valid.value !== input) {
    const copied = copyGoverned(valid.value);
    if (!copied.ok) return notGoverned(copied);
    input = copied.value;
  } else {
    input = valid.value;
  }
  // docs/api.md, "new OperatorRuntime": the authorizer sees the very object the capability will
  // receive. What it is asked about is recorded (encoded, digested) before it answers.
  // Its digest is computed when first read (docs/decisions.md, "The record nearly free").
  return { input, recorded: recordLazily(input, 'input') };
}

/**
 * What the authorizer is asked about one step (its context, not frozen yet) and the record of
 * it: the input, an approval bound to the exact action (the same version, the same input as
 * authorized), an outbound MCP tool's pinned definition and a prepared effect; or the step's
 * end when the action is no longer the one approved or cannot be prepared.
 */
async function askFor(
  run: JobRun,
  step: AdmittedStep,
  ready: ReadyInput,
  caller: ExecutionCaller | undefined,
  deps: ExecutorDependencies,
  approval: StepApproval | undefined,
): Promise<{ asked: CapabilityAuthorizationContext; recorded: RecordedAsk } | StepEnd> {
  const { capability } = step;
  const { running } = run;
  let recorded = ready.recorded;
  const asked: CapabilityAuthorizationContext = {
    jobId: running.job.id,
    stepId: step.id,
    capability: capability.identity,
    input: ready.input,
    caller,
  };
  if (approval !== undefined) {
    if (capability.version !== approval.capabilityVersion) {
      return {
        status: 'failed',
        error: `Capability version changed since approval was requested: ${capability.name}@${approval.capabilityVersion} is now ${capability.version}`,
      };
    }
    if (recorded.digest !== approval.grant.inputDigest)
      return { status: 'failed', error: 'Input changed since approval was requested' };
    (asked as { approval?: ApprovalGrant }).approval = approval.grant;
  }
  // An outbound MCP tool is asked about, and runs, as defined now if that matches its pin
  // (docs/api.md, "Pinned tools"); an approved step, as it was when approval was requested.
  const pinning = pinnedDefinition(
    capability,
    approval && running.record.steps[step.index]?.decision?.definitionDigest,
  );
  if (pinning !== undefined) {
    const pinned = await pinning;
    if ('error' in pinned) return { status: 'failed', error: pinned.error };
    (asked as { definitionDigest?: string }).definitionDigest = pinned.digest;
  }
  // The effect is prepared (and held to the approved one) before the authorizer is asked
  // (docs/api.md, "Prepared effects").
  if (capability.prepare !== undefined || approval !== undefined) {
    let prepared = prepareEffect(
      running,
      step,
      asked,
      recorded,
      deps.signal,
      run.control,
      // An approver's edit is a new input, so a new effect: authorized again, not held to the
      // proposed one (docs/decisions.md, "An approval covers one effect").
      approval !== undefined && approval.grant.edited !== true,
    );
    if (prepared instanceof Promise) prepared = await prepared;
    if ('status' in prepared) return prepared;
    recorded = prepared;
  }
  // The authorizer gets the digests when it reads them (computed once, of the records made before).
  setDigestField(asked, 'inputDigest', recorded);
  if (recorded.effect !== undefined)
    setEffectDigestField(asked, 'effectDigest', recorded as Required<RecordedAsk>);
  return { asked, recorded };
}

/**
 * Resolve → check → authorize → invoke for one step. Never throws; store faults aside.
 * `governed` (a 2.0 plan, docs/api.md "Plan version 2.0"): the input the authorizer sees is a
 * deep-frozen plain-data copy, and the capability gets a fresh mutable copy made after an allow.
 */
async function runStep(
  run: JobRun,
  step: AdmittedStep,
  results: readonly unknown[],
  caller: ExecutionCaller | undefined,
  deps: ExecutorDependencies,
  approval: StepApproval | undefined,
  governed: boolean,
): Promise<StepEnd> {
  const { capability } = step;
  const { running } = run;
  const jobId = running.job.id;
  const ready = await stepInput(step, results, approval, governed);
  if ('status' in ready) return ready;
  const { input } = ready;
  const prepared = await askFor(run, step, ready, caller, deps, approval);
  if ('status' in prepared) return prepared;
  const { asked, recorded: recordedInput } = prepared;
  const authorization = Object.freeze(asked);
  // One pass per invocation: a retry (docs/api.md, "Retries") is authorized again first.
  for (let attempt = 1; ; attempt++) {
    let decision: unknown;
    try {
      decision = deps.authorizer.authorize(authorization);
      if (typeof (decision as { then?: unknown } | null | undefined)?.then === 'function')
        decision = await decision;
    } catch (error) {
      const message = describeThrown(error);
      return {
        status: 'failed',
        error: message,
        decided: decidedNow('error', message, step, authorization, recordedInput, deps),
      };
    }
    const checked = checkDecision(decision, deps.approvals !== undefined);
    // A policy authorizer's determining policies (docs/api.md, "Policy as code: Cedar").
    const policies = decisionPolicies(decision);
    // A plan grant may cover the answer (docs/api.md, "Plan warrants"): asked here, never stored.
    const planned =
      checked.kind === 'require_approval' && approval === undefined
        ? coverByPlanGrant(running.record, step, input, recordedInput.digest, Date.now())
        : undefined;
    if (checked.kind === 'require_approval' && planned?.covered !== true) {
      if (approval !== undefined || attempt > 1) {
        // Asked again with the approval and still no: a denial, never a second request.
        return denied(
          checked.reason ?? APPROVAL_NOT_ENOUGH,
          step,
          authorization,
          recordedInput,
          deps,
          policies,
        );
      }
      const ttlMs = (deps.approvals as { ttlMs: number }).ttlMs;
      const requested = decidedNow(
        'approval_required',
        planned?.reason ?? checked.reason,
        step,
        authorization,
        recordedInput,
        deps,
        policies,
      );
      const expiresAt = new Date(Date.parse(requested.at) + ttlMs).toISOString();
      return { status: 'awaiting_approval', risk: capability.risk, decided: requested, expiresAt };
    }
    if (checked.kind === 'deny') {
      const reason = checked.reason ?? `${NOT_PERMITTED}${capability.name}`;
      return denied(reason, step, authorization, recordedInput, deps, policies);
    }
    if (checked.kind !== 'allow' && planned?.covered !== true)
      return {
        status: 'failed',
        error: INVALID_DECISION,
        decided: decidedNow('invalid', undefined, step, authorization, recordedInput, deps),
      };
    // Limits are counted after the allow and before the invocation, each attempt (docs/api.md, "Limits").
    if (deps.limits !== undefined) {
      let over = checkLimits(deps.limits, deps.store, capability, caller, Date.now());
      if (over instanceof Promise) over = await over;
      if (over !== undefined) return limited(over, step, authorization, recordedInput, deps);
    }

    // The "started" record is durable before the capability runs (docs/guide/stores.md, "Which
    // store").
    let allowed = decidedNow(
      'allow',
      undefined,
      step,
      authorization,
      recordedInput,
      deps,
      policies,
    );
    if (planned?.covered === true) allowed = { ...allowed, approval: planned.approval };
    const recorded = run.commit(startStep(running, step.index, allowed.at, allowed));
    if (recorded !== undefined) await recorded;
    const { control } = run;
    // Cancelled while the start was written: the capability is not entered.
    if (control?.cancel !== undefined) return { status: 'failed', error: CANCELLED_BEFORE_INVOKE };
    const context: ExecutionContext = {
      jobId,
      stepId: step.id,
      caller,
      // Lines a capability writes carry its job and step (docs/api.md, "Loggers"); nothing is
      // built for the default silent logger.
      logger: deps.logger === silentLogger ? silentLogger : stepLogger(deps.logger, jobId, step.id),
      idempotencyKey: step.idempotencyKey ?? `${jobId}:${step.id}`,
    } as ExecutionContext;
    // The job's AbortController is made only for a capability that reads its signal.
    if (control === undefined) (context as { signal: AbortSignal }).signal = deps.signal;
    else setLazyField(context, 'signal', SIGNAL_FIELD, control);
    const effect = recordedInput.effect;
    if (effect !== undefined) (context as { effect: unknown }).effect = cloneGoverned(effect.value);
    try {
      // The function and `this` were captured at registration: later edits to the object do nothing.
      // A 2.0 capability gets its own copy: nothing it does reaches the authorizer's or the record.
      const result: unknown = await Reflect.apply(capability.execute, capability.target, [
        governed ? cloneGoverned(input) : input,
        context,
      ]);
      return { status: 'completed', result };
    } catch (error) {
      const message = describeThrown(error);
      const retry = capability.retry;
      if (retry === undefined || attempt >= retry.attempts || control?.cancel !== undefined)
        return { status: 'failed', error: message };
      const retrying = run.commit(retryStep(running, step.index, now(), attempt + 1, message));
      if (retrying !== undefined) await retrying;
      if (retry.backoffMs > 0) await pause(retry.backoffMs, control && controlSignal(control));
      if (control?.cancel !== undefined) return { status: 'failed', error: message };
    }
  }
}

/** Waits `ms` between two attempts; a cancel ends the wait. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * Materializes a job from an admitted plan, runs it and returns it. Rejects only when the store
 * fails (JOB_STORE_FAILED); every other failure is a returned job with `status: 'failed'`.
 */
export function executeAdmittedPlan(
  plan: AdmittedPlan,
  caller: ExecutionCaller | undefined,
  deps: ExecutorDependencies,
  control?: JobControl,
  /** The job's id when the runtime drew it already (an idempotency claim names it). */
  jobId?: string,
  /** A plan submitted with `approval: 'plan'`: what its preview decided (plan-warrant.ts). */
  warrant?: PlanWarrantStart,
): Promise<Job> {
  // The first job waits once for @opentelemetry/api to load (docs/decisions.md, "Light import").
  const loading = telemetryLoading();
  if (loading !== undefined)
    return loading.then(() => executeAdmittedPlan(plan, caller, deps, control, jobId, warrant));
  const { running, change: created } = createJob(
    plan,
    caller,
    jobId ?? newJobId(),
    now(),
    recordedCaller(caller),
  );
  if (control !== undefined) control.jobId = running.job.id;
  const telemetry = startJobTelemetry(running.job);
  const run = new JobRun(running, deps, telemetry, control);
  // The closure only where telemetry wraps the run: without it, no function is made per job.
  if (telemetry === undefined) return startJob(run, created, plan, caller, deps, warrant);
  return telemetry.job(() => startJob(run, created, plan, caller, deps, warrant));
}

/**
 * Writes the new job, publishes its creation, then runs its steps. Not an async function: a
 * synchronous store and no observer add no promise before the steps' own.
 */
function startJob(
  run: JobRun,
  created: JobChange,
  plan: AdmittedPlan,
  caller: ExecutionCaller | undefined,
  deps: ExecutorDependencies,
  warrant: PlanWarrantStart | undefined,
): Promise<Job> {
  let written: void | Promise<void>;
  try {
    written = deps.store.create(run.running.record);
  } catch (error) {
    return Promise.reject(storeFailure(error));
  }
  if (written === undefined) return runCreated(run, created, plan, caller, deps, warrant);
  return written.then(
    () => runCreated(run, created, plan, caller, deps, warrant),
    (error: unknown) => {
      throw storeFailure(error);
    },
  );
}

/** Publishes a written job's creation, then runs its steps. */
function runCreated(
  run: JobRun,
  created: JobChange,
  plan: AdmittedPlan,
  caller: ExecutionCaller | undefined,
  deps: ExecutorDependencies,
  warrant: PlanWarrantStart | undefined,
): Promise<Job> {
  const pending = run.publish(created.events);
  if (warrant !== undefined) {
    const start = () => startUnderWarrant(run, plan, caller, deps, warrant);
    return pending === undefined ? start() : pending.then(start);
  }
  if (pending === undefined) return runSteps(run, plan, 0, [], caller, deps, undefined);
  return pending.then(() => runSteps(run, plan, 0, [], caller, deps, undefined));
}

/**
 * A plan submitted with `approval: 'plan'` starts as its preview decided (docs/api.md, "Plan
 * warrants"): refused, waiting for its plan request, or run as usual.
 */
async function startUnderWarrant(
  run: JobRun,
  plan: AdmittedPlan,
  caller: ExecutionCaller | undefined,
  deps: ExecutorDependencies,
  warrant: PlanWarrantStart,
): Promise<Job> {
  const change = warrantChange(run.running, warrant, plan, deps);
  if (change === undefined) return runSteps(run, plan, 0, [], caller, deps, undefined);
  const pending = run.commit(change);
  if (pending !== undefined) await pending;
  if (warrant.kind === 'request' && run.control?.cancel !== undefined)
    return cancelRun(run, 0, undefined);
  return run.running.job;
}

/**
 * Runs the plan's steps from `from` on, `results` holding the results of the steps before it;
 * `approval` is the granted approval of step `from`. Stops at the first step that does not
 * complete, or that waits for approval.
 */
async function runSteps(
  run: JobRun,
  plan: AdmittedPlan,
  from: number,
  results: unknown[],
  caller: ExecutionCaller | undefined,
  deps: ExecutorDependencies,
  approval: StepApproval | undefined,
): Promise<Job> {
  const { running } = run;
  const { job } = running;
  const last = plan.steps.length - 1;
  const governed = plan.version === '2.0';
  let pending: Promise<void> | undefined;
  for (let index = from; index <= last; index++) {
    // Cancelled between steps: no further step starts.
    if (run.control?.cancel !== undefined) return cancelRun(run, undefined, undefined);
    const step = plan.steps[index] as AdmittedStep;
    const stepApproval = index === from ? approval : undefined;
    const telemetry = run.telemetry;
    const end = await (telemetry === undefined
      ? runStep(run, step, results, caller, deps, stepApproval, governed)
      : telemetry.step(step, () =>
          runStep(run, step, results, caller, deps, stepApproval, governed),
        ));
    if (end.status === 'awaiting_approval') {
      pending = run.commit(awaitApproval(running, step.index, end));
      if (pending !== undefined) await pending;
      if (run.control?.cancel !== undefined) return cancelRun(run, step.index, undefined);
      return job;
    }
    // A cancel while the step ran: it is `cancelled` (keeping what it returned), not its outcome.
    if (run.control?.cancel !== undefined && end.status !== 'denied')
      return cancelRun(run, step.index, end);
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

/** Records the cancel of a run: the step at `index` (if any) cancelled, the rest skipped. */
async function cancelRun(
  run: JobRun,
  index: number | undefined,
  end: Exclude<StepEnd, { readonly status: 'awaiting_approval' }> | undefined,
): Promise<Job> {
  const { running } = run;
  const pending = run.commit(
    cancelJob(running, now(), run.control?.cancel as CancelRequest, index, end),
  );
  if (pending !== undefined) await pending;
  return running.job;
}

/**
 * Creates the job of an admitted plan `queued` (docs/api.md, "runtime.submitPlan"), writes it and
 * publishes `job.created`. It runs later, through `runQueuedJob`.
 */
export async function queueAdmittedPlan(
  plan: AdmittedPlan,
  caller: ExecutionCaller | undefined,
  deps: ExecutorDependencies,
  jobId: string = newJobId(),
): Promise<RunningJob> {
  const { running, change } = createJob(plan, caller, jobId, now(), recordedCaller(caller), true);
  try {
    const written = deps.store.create(running.record);
    if (written !== undefined) await written;
  } catch (error) {
    throw storeFailure(error);
  }
  const pending = new JobRun(running, deps).publish(change.events);
  if (pending !== undefined) await pending;
  return running;
}

/**
 * Starts a queued job (`execution.started`) and runs its steps through the one step path; a job
 * cancelled while queued is recorded `cancelled` and runs nothing.
 */
export async function runQueuedJob(
  running: RunningJob,
  plan: AdmittedPlan,
  caller: ExecutionCaller | undefined,
  deps: ExecutorDependencies,
  control: JobControl,
): Promise<Job> {
  const loading = telemetryLoading();
  if (loading !== undefined) await loading;
  const telemetry = startJobTelemetry(running.job);
  const run = new JobRun(running, deps, telemetry, control);
  if (control.cancel !== undefined) return cancelRun(run, undefined, undefined);
  const resume = queuedResume(running.record);
  const started = run.commit(startQueuedJob(running, now()));
  if (started !== undefined) await started;
  const steps = () => runQueuedSteps(run, plan, caller, deps, resume);
  return telemetry === undefined ? steps() : telemetry.job(steps);
}

/**
 * The steps of a queued job once started: from the first, or for one an approval put back on
 * the queue, from the approved step with its grant (docs/api.md, "Workers").
 */
function runQueuedSteps(
  run: JobRun,
  plan: AdmittedPlan,
  caller: ExecutionCaller | undefined,
  deps: ExecutorDependencies,
  resume: QueuedResume | undefined,
): Promise<Job> {
  if (resume === undefined) return runSteps(run, plan, 0, [], caller, deps, undefined);
  return runSteps(run, plan, resume.from, resume.results, caller, deps, resume.approval);
}

/**
 * Takes up a job a worker dequeued from the shared queue (docs/api.md, "Workers"): it starts
 * (`execution.started`), or with a cancel already in `control` is recorded `cancelled`, by a
 * conditional write that only a job still stored `queued` takes; then its steps run through the
 * one step path. Resolves undefined, having written and run nothing, when a cancel from another
 * process (or another taker) changed the job first: a job cancelled while queued never starts.
 */
export async function runDequeuedJob(
  running: RunningJob,
  plan: AdmittedPlan,
  caller: ExecutionCaller | undefined,
  deps: ExecutorDependencies,
  control: JobControl,
): Promise<Job | undefined> {
  const loading = telemetryLoading();
  if (loading !== undefined) await loading;
  const taking = new JobRun(running, deps, undefined, control);
  if (control.cancel !== undefined) {
    const cancelled = cancelJob(running, now(), control.cancel);
    return (await taking.commitWhileQueued(cancelled)) ? running.job : undefined;
  }
  const resume = queuedResume(running.record);
  if (!(await taking.commitWhileQueued(startQueuedJob(running, now())))) return undefined;
  const telemetry = startJobTelemetry(running.job);
  const run = new JobRun(running, deps, telemetry, control);
  const steps = () => runQueuedSteps(run, plan, caller, deps, resume);
  return telemetry === undefined ? steps() : telemetry.job(steps);
}

/**
 * Records `change` of a queued job that runs nowhere (its cancel, or its failure on a worker)
 * only while the job is still stored `queued`: false, nothing written, when a worker started it
 * or another process recorded it first.
 */
export function commitWhileQueued(
  running: RunningJob,
  change: JobChange,
  deps: ExecutorDependencies,
): Promise<boolean> {
  return new JobRun(running, deps).commitWhileQueued(change);
}

/** Records the cancel of a job that runs nowhere (queued, or awaiting approval at `index`). */
export async function recordCancel(
  running: RunningJob,
  cancel: CancelRequest,
  deps: ExecutorDependencies,
  awaiting: number | undefined,
): Promise<Job> {
  // A waiting step ends as a rejected one does (`capability.failed` with its input digest), then
  // is marked cancelled: its decision stays bound to its events.
  const change = cancelJob(
    running,
    now(),
    cancel,
    awaiting,
    awaiting === undefined ? undefined : { status: 'failed', error: CANCELLED_WAITING },
  );
  // Cancelling a request consumes it, as a decision would: only while it still waits.
  const pending = new JobRun(running, deps).commit(
    awaiting === undefined ? change : { ...change, claims: awaiting },
  );
  if (pending !== undefined) await pending;
  return running.job;
}

/**
 * Goes on with a job whose step `from` was approved (its `approval.granted` change already
 * written): the step runs through the same path as every other, then the rest of the plan.
 */
export function resumeApprovedJob(
  running: RunningJob,
  plan: AdmittedPlan,
  from: number,
  results: unknown[],
  caller: ExecutionCaller | undefined,
  deps: ExecutorDependencies,
  /** Undefined for a job whose plan was approved (docs/api.md, "Plan warrants"). */
  approval: StepApproval | undefined,
): Promise<Job> {
  const loading = telemetryLoading();
  if (loading !== undefined) {
    return loading.then(() =>
      resumeApprovedJob(running, plan, from, results, caller, deps, approval),
    );
  }
  const telemetry = startJobTelemetry(running.job);
  const run = new JobRun(running, deps, telemetry);
  const resumed = () => runSteps(run, plan, from, results, caller, deps, approval);
  return telemetry === undefined ? resumed() : telemetry.job(resumed);
}

/** Writes one change of a job outside a run (a decision on an approval), then publishes it. */
export async function commitChange(
  running: RunningJob,
  change: JobChange,
  deps: ExecutorDependencies,
): Promise<void> {
  const pending = new JobRun(running, deps).commit(change);
  if (pending !== undefined) await pending;
}

/**
 * Goes on with a recovered job (docs/api.md, "Recovery") from step `from`, `results` holding the
 * results of the steps before it: every step runs through the same path as every other,
 * authorized again; `approval` is a grant recorded for step `from` before the crash, given to
 * the new decision as `context.approval` and nothing more. Cancellable through `control`.
 */
export async function resumeRecoveredJob(
  running: RunningJob,
  plan: AdmittedPlan,
  from: number,
  results: unknown[],
  caller: ExecutionCaller | undefined,
  deps: ExecutorDependencies,
  control: JobControl,
  approval: StepApproval | undefined,
): Promise<Job> {
  const loading = telemetryLoading();
  if (loading !== undefined) await loading;
  const telemetry = startJobTelemetry(running.job);
  const run = new JobRun(running, deps, telemetry, control);
  const resumed = () => runSteps(run, plan, from, results, caller, deps, approval);
  return telemetry === undefined ? resumed() : telemetry.job(resumed);
}
