import { ErrorCode } from '../errors/error-codes.js';
import type { ApprovalRequest } from '../approvals/approval-request.js';
import type { ApprovalsConfig } from '../approvals/approver-policy.js';
import type { ApprovalDecision } from '../approvals/decision-arguments.js';
import { ApprovalDesk } from './approval-desk.js';
import type { ExecutionAuthorizer, ExecutionCaller } from '../authorization/authorizer.js';
import { defaultApprovalAuthorizer, defaultAuthorizer } from '../authorization/default-policy.js';
import { previewAdmittedPlan, type PlanPreview } from '../policy/preview.js';
import type {
  CapabilityDescriptor,
  CapabilityModule,
  ExecutionLogger,
} from '../capabilities/capability.js';
import { describeCapability, listCapabilities } from '../capabilities/descriptors.js';
import { capabilityInventory, registerModule } from '../capabilities/inventory.js';
import { describeThrown, describeValue } from '../errors/describe-value.js';
import { readField } from '../values/hostile-reads.js';
import { processGlobal } from '../process/process-global.js';
import { createError } from '../errors/warrant-error.js';
import { EventBus, type ObserverErrorHandler } from '../events/event-bus.js';
import type { RuntimeEventHandler } from '../events/runtime-event.js';
import type { Job, JobEventType, JobListFilter } from '../jobs/job.js';
import type { JobStore } from '../jobs/job-store.js';
import { openStore } from '../jobs/open-store.js';
import { verifyRecord, type JobVerification } from '../jobs/verify-record.js';
import type { CheckpointHead } from '../jobs/checkpoint.js';
import type { EvidenceBundle } from '../jobs/evidence.js';
import { exportJobOf, parseHead, verifyStoreOf } from '../jobs/store-audit.js';
import type { StoreVerification } from '../jobs/verify-store.js';
import { admitPlan } from '../plan/admission.js';
import { captureSubmission } from '../plan/capture.js';
import type { ExecutionPlan, PlanVersion } from '../plan/execution-plan.js';
import { snapshotCaller } from '../callers/caller-snapshot.js';
import { checkApprovalFilter, checkJobFilter } from './list-filters.js';
import { executeAdmittedPlan, type ExecutorDependencies } from './executor.js';
import {
  checkRuntimeOptions,
  GIVEN_STORE,
  type InternalOptions,
  type OperatorRuntimeOptions,
} from './runtime-options.js';

export type { OperatorRuntimeOptions } from './runtime-options.js';

/** Filter of `runtime.listApprovals()`. */
export interface ApprovalListFilter {
  jobId?: string;
}

/** Options of one `executePlan` call. */
export interface ExecutePlanOptions {
  /** Who submits the plan; snapshotted (frozen) for the whole job. */
  caller?: ExecutionCaller;
}

/** A runtime on a store object it is given (and closes with itself). Internal: tests use it. */
export function runtimeOnStore(
  store: JobStore,
  options: OperatorRuntimeOptions = {},
): OperatorRuntime {
  const internal: InternalOptions = { ...options, [GIVEN_STORE]: store };
  return new OperatorRuntime(internal);
}

const warnObserverError: ObserverErrorHandler = (error, event) => {
  const message = describeThrown(error).replace(/\s+/g, ' ');
  console.warn(`warrant: observer of ${event.type} failed (ignored): ${message}`);
};

/**
 * Reads `executePlan` options once. Options that are not an object, or whose `caller` cannot be
 * read (a throwing getter or proxy trap), are EXECUTE_OPTIONS_INVALID.
 */
/** `executePlan(plan)` without options: nothing to read. */
const NO_OPTIONS: ExecutePlanOptions = Object.freeze({});

/** The caller option of `executePlan`, read once. */
function readCaller(options: unknown): unknown {
  if (options === NO_OPTIONS) return undefined;
  if (typeof options !== 'object' || options === null) {
    throw createError(
      TypeError,
      ErrorCode.EXECUTE_OPTIONS_INVALID,
      `executePlan() options must be an object, got ${describeValue(options)}`,
    );
  }
  return readField(options, 'caller', (problem) =>
    createError(
      TypeError,
      ErrorCode.EXECUTE_OPTIONS_INVALID,
      `executePlan() options.caller ${problem}`,
    ),
  );
}

/**
 * Admits and runs plans under governance, and answers what is registered. A facade over the
 * plan admission, the step executor, the job store and the observer bus (docs/decisions.md, "House rules").
 */
export class OperatorRuntime {
  readonly #authorizer: ExecutionAuthorizer;
  readonly #storeOption: string | undefined;
  readonly #maxJobs: number;
  readonly #maxPlanSteps: number;
  readonly #planVersions: readonly PlanVersion[];
  readonly #auditKey: string | undefined;
  readonly #approvals: ApprovalsConfig | undefined;
  readonly #desk: ApprovalDesk | undefined;
  readonly #logger: ExecutionLogger;
  readonly #bus: EventBus;
  // The runtime never cancels a step itself; TimeoutMiddleware derives its own aborting signal.
  readonly #signal = new AbortController().signal;
  #store: JobStore | undefined;
  /** A durable store being opened (its module loading), until it is in `#store`. */
  #opening: Promise<JobStore> | undefined;
  #dependencies: ExecutorDependencies | undefined;
  #closed = false;
  #closing: Promise<void> | undefined;
  /** Jobs and decisions admitted and not yet ended: close() waits for them to end. */
  #active = 0;
  /** Called when `#active` falls to 0 while close() waits. */
  #drained: (() => void) | undefined;
  readonly #ended = (): void => {
    if (--this.#active === 0) this.#drained?.();
  };

  /** @throws TypeError (RUNTIME_OPTIONS_INVALID) for a malformed option. Opens nothing. */
  constructor(options: OperatorRuntimeOptions = {}) {
    const settings = checkRuntimeOptions(options);
    this.#auditKey = settings.auditKey;
    this.#approvals = settings.approvals;
    this.#desk = this.#approvals === undefined ? undefined : new ApprovalDesk(this.#approvals);
    this.#authorizer =
      settings.authorizer ??
      (this.#approvals === undefined ? defaultAuthorizer : defaultApprovalAuthorizer);
    this.#storeOption = settings.store;
    this.#store = settings.givenStore;
    this.#maxJobs = settings.maxJobs;
    this.#maxPlanSteps = settings.maxPlanSteps;
    this.#planVersions = settings.planVersions;
    this.#logger = settings.logger;
    this.#bus = new EventBus(settings.onObserverError ?? warnObserverError);
  }

  /**
   * The plan versions this runtime admits (its `planVersions` option, default `['1.0']`), frozen:
   * the faces that build plans (MCP, HTTP) submit 2.0 plans when it lists `'2.0'`.
   */
  get planVersions(): readonly PlanVersion[] {
    return this.#planVersions;
  }

  /**
   * Registers a module's capabilities in the process-global inventory, all or none.
   * @throws TypeError with CAPABILITY_MODULE_INVALID, CAPABILITY_DEFINITION_INVALID or
   * CAPABILITY_ALREADY_REGISTERED; nothing of the module is registered then.
   */
  use(module: CapabilityModule): this {
    registerModule(module);
    return this;
  }

  /** Every registered capability, in registration order, as fresh detached descriptors. */
  listCapabilities(): CapabilityDescriptor[] {
    return listCapabilities();
  }

  /** The descriptor of `name` (exact), or undefined when unknown or `version` differs. */
  describeCapability(name: string, version?: string): CapabilityDescriptor | undefined {
    return describeCapability(name, version);
  }

  /**
   * Captures, admits and runs a plan; resolves with the job, failed or completed.
   * @throws PlanAdmissionError (PLAN_ADMISSION_REJECTED) before any job exists when the plan is
   * refused; TypeError (EXECUTE_OPTIONS_INVALID) for bad options; JOB_STORE_FAILED when the
   * store fails; RUNTIME_CLOSED after `close()`.
   */
  executePlan(plan: ExecutionPlan, options: ExecutePlanOptions = NO_OPTIONS): Promise<Job> {
    // Not an async function: one promise per job, the executor's own (docs/decisions.md,
    // "Allocation on the hot path"); what throws before the job exists still rejects.
    let job: Promise<Job>;
    try {
      this.#assertOpen();
      const caller = snapshotCaller(readCaller(options));
      const submission = captureSubmission(plan, this.#maxPlanSteps, this.#planVersions);
      const inventory = capabilityInventory();
      const admitted = admitPlan(submission, (name) => inventory.get(name));
      // The store opens only for an admitted plan: a refused one creates no file and an
      // unopenable store cannot hide why a plan was refused.
      const deps = this.#executorDependencies();
      job =
        deps instanceof Promise
          ? deps.then((ready) => executeAdmittedPlan(admitted, caller, ready))
          : executeAdmittedPlan(admitted, caller, deps);
    } catch (error) {
      return Promise.reject(error as Error);
    }
    return this.#track(job);
  }

  /**
   * What each step of a plan would be decided, without running anything (docs/api.md,
   * "runtime.previewPlan"): the plan is captured and admitted as `executePlan` would, then each
   * step whose input holds no reference is asked of the authorizer with `preview: true`. No job,
   * no event, no store, no capability call.
   * @throws as `executePlan` does before a job exists (PlanAdmissionError,
   * EXECUTE_OPTIONS_INVALID, RUNTIME_CLOSED).
   */
  async previewPlan(
    plan: ExecutionPlan,
    options: ExecutePlanOptions = NO_OPTIONS,
  ): Promise<PlanPreview> {
    this.#assertOpen();
    const caller = snapshotCaller(readCaller(options));
    const submission = captureSubmission(plan, this.#maxPlanSteps);
    const inventory = capabilityInventory();
    const admitted = admitPlan(submission, (name) => inventory.get(name));
    return previewAdmittedPlan(admitted, caller, this.#authorizer, this.#approvals !== undefined);
  }

  /**
   * Observes job events of one type, or all with `'*'`. Returns an idempotent unsubscribe.
   * @throws TypeError (SUBSCRIPTION_INVALID) for an unknown type or a non-function handler.
   */
  subscribe(type: JobEventType | '*', handler: RuntimeEventHandler): () => void {
    return this.#bus.subscribe(type, handler);
  }

  /** The job with this id, or undefined. */
  async getJob(id: string): Promise<Job | undefined> {
    if (typeof id !== 'string') return undefined;
    return this.#withStore((store) => store.get(id));
  }

  /**
   * Checks a stored job (docs/api.md, "runtime.verifyJob"): its event chain recomputed (SQLite,
   * PostgreSQL) and every recorded input, input as authorized and result against the digests in
   * its events. Resolves undefined for an unknown id.
   */
  async verifyJob(id: string): Promise<JobVerification | undefined> {
    if (typeof id !== 'string') return undefined;
    return this.#withStore((store) => this.#verifyIn(store, id));
  }

  async #verifyIn(store: JobStore, id: string): Promise<JobVerification | undefined> {
    try {
      if (store.readChain === undefined) {
        const job = await store.get(id);
        return job === undefined ? undefined : verifyRecord(job, undefined, this.#auditKey);
      }
      const read = await store.readChain(id);
      return read === undefined
        ? undefined
        : verifyRecord(read.job, read.hashes, this.#auditKey, read.consumed);
    } catch (error) {
      // A row edited into something that is not a record is broken, not a store failure.
      if ((error as { code?: unknown } | null)?.code !== ErrorCode.JOB_RECORD_UNREADABLE)
        throw error;
      return { ok: false, reason: (error as Error).message };
    }
  }

  /**
   * Checks the whole store (docs/api.md, "runtime.verifyStore"): every checkpoint, every sealed
   * event present and unchanged, every job's record; `since` (`'<seq>:<hash>'` or `{ seq, hash }`)
   * a head kept elsewhere that must still be in the chain.
   * @throws TypeError (STORE_HEAD_INVALID) for a malformed `since`.
   */
  async verifyStore(options: { since?: string | CheckpointHead } = {}): Promise<StoreVerification> {
    const given = (options as { since?: unknown } | null)?.since;
    const since =
      given === undefined
        ? undefined
        : typeof given === 'string'
          ? parseHead(given)
          : parseHead(
              `${String((given as CheckpointHead).seq)}:${String((given as CheckpointHead).hash)}`,
            );
    return this.#withStore((store) => verifyStoreOf(store, this.#auditKey, since));
  }

  /**
   * One job as an evidence bundle (docs/api.md, "Evidence"), signed with `signingKey` (Ed25519,
   * PEM) when given; undefined for an unknown id.
   * @throws TypeError (EVIDENCE_KEY_INVALID) for a signing key that is not Ed25519 PEM.
   */
  async exportJob(
    id: string,
    options: { signingKey?: string } = {},
  ): Promise<EvidenceBundle | undefined> {
    if (typeof id !== 'string') return undefined;
    const signingKey = (options as { signingKey?: string } | null)?.signingKey;
    return this.#withStore((store) => exportJobOf(store, id, this.#auditKey, signingKey));
  }

  /**
   * Jobs, newest first, filtered by status, capability and goal, at most `limit`.
   * @throws TypeError (JOB_FILTER_INVALID) for a malformed filter.
   */
  async listJobs(filter?: JobListFilter): Promise<Job[]> {
    this.#assertOpen();
    const checked = checkJobFilter(filter);
    return this.#withStore((store) => store.list(checked));
  }

  /**
   * Pending approval requests (docs/api.md, "Approvals"); expired ones are failed, not listed.
   * Without the `approvals` option there are none.
   */
  async listApprovals(filter: ApprovalListFilter = {}): Promise<ApprovalRequest[]> {
    this.#assertOpen();
    const jobId = checkApprovalFilter(filter);
    if (this.#desk === undefined) return [];
    return this.#desk.list(await this.#approvalHost(), jobId);
  }

  /**
   * Approves or rejects one pending request; resolves with the job at its next stop (completed,
   * failed, or awaiting the next approval).
   * @throws APPROVAL_NOT_FOUND, APPROVAL_NOT_PENDING, APPROVAL_DIGEST_MISMATCH,
   * APPROVAL_SELF_APPROVAL, APPROVAL_FORBIDDEN, APPROVAL_EXPIRED (nothing changed, except that an
   * expired request fails its step and job); APPROVAL_DECISION_INVALID for malformed arguments.
   */
  async decideApproval(decision: ApprovalDecision): Promise<Job> {
    this.#assertOpen();
    if (this.#desk === undefined) {
      throw createError(
        Error,
        ErrorCode.APPROVAL_NOT_FOUND,
        'No approval request: this runtime has no approvals option',
      );
    }
    const desk = this.#desk;
    return this.#track(this.#approvalHost().then((host) => desk.decide(host, decision)));
  }

  /**
   * Stops admitting (later `executePlan`, `getJob` and `listJobs` calls reject with
   * RUNTIME_CLOSED), lets the jobs already running reach their end, every step run and recorded,
   * then releases the store. Resolves once the store is released; every call returns the same
   * promise.
   */
  close(): Promise<void> {
    this.#closing ??= this.#shutDown();
    return this.#closing;
  }

  async #shutDown(): Promise<void> {
    this.#closed = true;
    // No job starts once closed, so this set only shrinks; a job's rejection is its caller's.
    while (this.#active > 0) {
      await new Promise<void>((resolve) => {
        this.#drained = resolve;
      });
    }
    this.#drained = undefined;
    // A store still opening (getJob, listJobs) is closed once open; a failed open left none.
    if (this.#opening !== undefined) await this.#opening.catch(() => {});
    const store = this.#store;
    this.#store = undefined;
    if (store !== undefined) await store.close();
  }

  /** Counts a job or decision until it settles (its rejection stays its caller's). */
  #track(running: Promise<Job>): Promise<Job> {
    this.#active++;
    running.then(this.#ended, this.#ended);
    return running;
  }

  #assertOpen(): void {
    if (this.#closed) {
      throw createError(Error, ErrorCode.RUNTIME_CLOSED, 'This OperatorRuntime is closed');
    }
  }

  /**
   * The store, opened on first use: the memory store at once, a durable one in a promise (its
   * module loads then, docs/decisions.md "Light import"). A failed open is tried again next time.
   */
  #openStore(): JobStore | Promise<JobStore> {
    this.#assertOpen();
    if (this.#store !== undefined) return this.#store;
    if (this.#opening !== undefined) return this.#opening;
    const opened = openStore(this.#storeOption, {
      maxJobs: this.#maxJobs,
      auditKey: this.#auditKey,
    });
    if (!(opened instanceof Promise)) return (this.#store = opened);
    this.#opening = opened.then(
      (store) => {
        this.#opening = undefined;
        this.#store = store;
        return store;
      },
      (error: unknown) => {
        this.#opening = undefined;
        throw error;
      },
    );
    return this.#opening;
  }

  /**
   * Calls `use` on the store: at once when it is open (a read begun before `close()` reaches an
   * open store), else once it has opened.
   */
  #withStore<T>(use: (store: JobStore) => T): T | Promise<T> {
    const store = this.#openStore();
    return store instanceof Promise ? store.then(use) : use(store);
  }

  #executorDependencies(): ExecutorDependencies | Promise<ExecutorDependencies> {
    return this.#withStore((store) => this.#dependenciesOn(store));
  }

  #dependenciesOn(store: JobStore): ExecutorDependencies {
    if (this.#dependencies?.store !== store) {
      const dependencies: ExecutorDependencies = {
        store,
        bus: this.#bus,
        authorizer: this.#authorizer,
        logger: this.#logger,
        signal: this.#signal,
      };
      this.#dependencies =
        this.#approvals === undefined
          ? dependencies
          : { ...dependencies, approvals: { ttlMs: this.#approvals.ttlMs } };
    }
    return this.#dependencies;
  }

  async #approvalHost() {
    const inventory = capabilityInventory();
    return {
      deps: await this.#executorDependencies(),
      lookup: (name: string) => inventory.get(name),
    };
  }
}

// A new key for the default runtime; the holder is frozen, and so is the instance it gives.
const DEFAULT_RUNTIME_KEY = Symbol.for('warrant.defaultRuntime.v1');

/**
 * The default runtime, with default options; inert until first used. One per process: whichever
 * build (ESM or CommonJS) loads first creates it, and both export that same object.
 */
export const operatorRuntime: OperatorRuntime = processGlobal(DEFAULT_RUNTIME_KEY, () => {
  const runtime = new OperatorRuntime();
  Object.freeze(runtime);
  return { runtime: (): OperatorRuntime => runtime };
}).runtime();
