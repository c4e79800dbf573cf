import { ErrorCode } from '../errors/error-codes.js';
import type { ApprovalRequest } from '../approvals/approval-request.js';
import type { ApprovalsConfig } from '../approvals/approver-policy.js';
import type { ApprovalDecision } from '../approvals/decision-arguments.js';
import type { PlanApprovalDecision } from '../approvals/plan-request.js';
import type { ApprovalCountFilter, ApprovalListFilter, ApprovalPage } from './approval-pages.js';
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
import { describeThrown } from '../errors/describe-value.js';
import { processGlobal } from '../process/process-global.js';
import { createError } from '../errors/warrant-error.js';
import { EventBus, type ObserverErrorHandler } from '../events/event-bus.js';
import type { RuntimeEventHandler } from '../events/runtime-event.js';
import type { Job, JobEventType, JobListFilter } from '../jobs/job.js';
import type { JobStore, NotificationRecord, StoreAvailability } from '../jobs/job-store.js';
import { isOwned } from '../jobs/store-parts.js';
import type { JobVerification } from '../record/verify-record.js';
import type { CheckpointHead } from '../record/checkpoint.js';
import type { EvidenceBundle } from '../record/evidence.js';
import type { StoreVerification } from '../record/verify-store.js';
import { admitPlan } from '../plan/admission.js';
import { captureSubmission } from '../plan/capture.js';
import { planSchemaFor, type PlanSchemaOptions } from '../plan/plan-schema.js';
import type { ExecutionPlan, PlanVersion } from '../plan/execution-plan.js';
import { snapshotCaller } from '../callers/caller-snapshot.js';
import { cancelAs, CancelQueues, type CancelHost } from './job-cancel.js';
import { JobReader } from './job-reader.js';
import { RuntimeApprovals } from './runtime-approvals.js';
import { defaultReadPolicy } from './read-policy.js';
import type { LimitsView } from '../limits/limits-view.js';
import { LiveJobs } from './live-jobs.js';
import { waitForEnd, type JobWaitHost } from './job-waits.js';
import { NO_OPTIONS, readCaller, type ExecutePlanOptions } from './execute-options.js';
import { Orphans } from './orphans.js';
import {
  executeSubmission,
  submitQueued,
  type SubmissionHost,
  type SubmittedJob,
} from './submissions.js';
import type { WaitingJob } from './waiting-jobs.js';
import { RuntimeStore } from './runtime-store.js';
import { startWorkerOf } from './worker-runs.js';
import { DbosQueue, type StartWorkerOptions, type Worker } from './dbos-queue.js';
import { StrandedJobs } from './stranded-jobs.js';
import {
  readCancelOptions,
  readWaitOptions,
  type CancelJobOptions,
  type SubmitPlanOptions,
  type WaitForJobOptions,
} from './job-options.js';
import type { AdmittedPlan } from '../plan/admission.js';
import {
  checkRuntimeOptions,
  GIVEN_STORE,
  type InternalOptions,
  type OperatorRuntimeOptions,
} from './runtime-options.js';

export type { CancelPolicy, OperatorRuntimeOptions, ReadPolicy } from './runtime-options.js';
export type { CancelJobOptions, SubmitPlanOptions, WaitForJobOptions } from './job-options.js';
export type { ApprovalCountFilter, ApprovalListFilter, ApprovalPage } from './approval-pages.js';
export type { ExecutePlanOptions } from './execute-options.js';
export type { WaitingJob } from './waiting-jobs.js';
export type { SubmittedJob } from './submissions.js';

/** A registered capability by name: one function for every plan, none made per plan. */
function registered(name: string) {
  return capabilityInventory().get(name);
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
 * Admits and runs plans under governance, and answers what is registered. A facade over the
 * plan admission, the step executor, the job store and the observer bus (docs/decisions.md, "House rules").
 */
export class OperatorRuntime {
  readonly #authorizer: ExecutionAuthorizer;
  readonly #maxPlanSteps: number;
  readonly #planVersions: readonly PlanVersion[];
  readonly #approvals: ApprovalsConfig | undefined;
  readonly #logger: ExecutionLogger;
  readonly #bus: EventBus;
  // The runtime never cancels a step itself; TimeoutMiddleware derives its own aborting signal.
  readonly #signal = new AbortController().signal;
  /** The store, opened on first use, and the executor's dependencies on it. */
  readonly #store: RuntimeStore;
  #closed = false;
  #closing: Promise<void> | undefined;
  /** Jobs queued or running here (docs/api.md, "runtime.cancelJob"). */
  readonly #jobs: LiveJobs;
  readonly #queueConcurrency: number;
  /** With `queue: { engine: 'dbos' }`: jobs are queued on DBOS Transact (docs/api.md, "Workers"). */
  readonly #dbos: DbosQueue | undefined;
  /** What `cancelJob` needs (job-cancel.ts). */
  readonly #cancels: CancelHost;
  /** The read methods (job-reader.ts) and the approval methods (runtime-approvals.ts). */
  readonly #reader: JobReader;
  readonly #approvalsPart: RuntimeApprovals;
  /** Takes up the jobs of gone owners (docs/api.md, "Recovery"). */
  readonly #orphans: Orphans;
  /** The durable store's outages: its end settles the jobs it stranded at once. */
  readonly #outage = (state: 'down' | 'up'): void => {
    if (state === 'up') this.#stranded.wake();
    this.#onStoreOutage?.(state);
  };
  readonly #onStoreOutage: ((state: 'down' | 'up') => void) | undefined;
  /** Jobs of this owner whose last write was lost (docs/api.md, "Store outages"). */
  readonly #stranded = new StrandedJobs(
    (jobId) => this.#orphans.settleStranded(jobId),
    (line) => this.#logger.warn(line, {}),
  );
  /** What waiting for a job reads (job-waits.ts). */
  readonly #waits: JobWaitHost;
  /** What `executePlan` and `submitPlan` make jobs with (submissions.ts). */
  readonly #submissions: SubmissionHost;

  /** @throws TypeError (RUNTIME_OPTIONS_INVALID) for a malformed option. Opens nothing. */
  constructor(options: OperatorRuntimeOptions = {}) {
    const settings = checkRuntimeOptions(options);
    this.#approvals = settings.approvals;
    this.#authorizer =
      settings.authorizer ??
      (this.#approvals === undefined ? defaultAuthorizer : defaultApprovalAuthorizer);
    this.#maxPlanSteps = settings.maxPlanSteps;
    this.#planVersions = settings.planVersions;
    this.#logger = settings.logger;
    this.#bus = new EventBus(settings.onObserverError ?? warnObserverError);
    const executor = {
      bus: this.#bus,
      authorizer: this.#authorizer,
      logger: this.#logger,
      signal: this.#signal,
      ...(settings.approvals !== undefined && { approvals: { ttlMs: settings.approvals.ttlMs } }),
      ...(settings.limits !== undefined && { limits: settings.limits }),
    };
    this.#store = new RuntimeStore({
      store: settings.store,
      givenStore: settings.givenStore,
      maxJobs: settings.maxJobs,
      auditKey: settings.auditKey,
      onOutage: this.#outage,
      notifications: settings.notifications,
      executor,
      assertOpen: () => this.#assertOpen(),
      opened: async (store) => {
        if (!settings.recover) return;
        await this.#orphans.recover(store).catch((error: unknown) => {
          this.#logger.warn(`warrant: recovery failed: ${describeThrown(error)}`, {});
        });
        if (isOwned(store) && store.recoversWhileRunning === true) this.#orphans.probe(store);
      },
    });
    this.#jobs = new LiveJobs(
      settings.queueConcurrency,
      this.#stranded,
      () => {
        const store = this.#store.current;
        return store === undefined ? undefined : { store, deps: this.#store.dependenciesOn(store) };
      },
      (line) => this.#logger.warn(line, {}),
    );
    this.#waits = {
      jobs: this.#jobs,
      read: async (id) => this.#store.with((store) => store.get(id)),
    };
    this.#orphans = new Orphans({
      jobs: this.#jobs,
      stranded: this.#stranded,
      logger: this.#logger,
      store: () => this.#store.current,
      depsOn: (store) => this.#store.dependenciesOn(store),
      closed: () => this.#closed,
    });
    this.#queueConcurrency = settings.queueConcurrency;
    this.#dbos =
      settings.queueEngine === 'dbos' ? new DbosQueue(settings.store as string) : undefined;
    this.#cancels = {
      store: this.#store,
      jobs: this.#jobs,
      policy: settings.cancelPolicy,
      queues: new CancelQueues(this.#dbos, settings.store),
    };
    this.#submissions = {
      store: this.#store,
      jobs: this.#jobs,
      waits: this.#waits,
      dbos: this.#dbos,
      idempotencyTtlMs: settings.idempotencyTtlMs,
      assertOpen: () => this.#assertOpen(),
      admit: (plan) => this.#admit(plan),
      approvals: this.#approvals !== undefined,
    };
    this.#reader = new JobReader({
      store: this.#store,
      readPolicy: settings.readPolicy ?? defaultReadPolicy(this.#approvals),
      auditKey: settings.auditKey,
      limits: settings.limits,
      assertOpen: () => this.#assertOpen(),
    });
    this.#approvalsPart = new RuntimeApprovals({
      approvals: this.#approvals,
      store: this.#store,
      jobs: this.#jobs,
      queue: this.#dbos,
      mayRead: this.#reader.mayRead,
      assertOpen: () => this.#assertOpen(),
    });
    this.#onStoreOutage = settings.onStoreOutage;
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
   * The JSON Schema of an admissible plan for the registered capabilities, a fresh object
   * (docs/api.md, "runtime.planSchema"). @throws TypeError PLAN_SCHEMA_OPTIONS_INVALID.
   */
  planSchema(options?: PlanSchemaOptions): Record<string, unknown> {
    return planSchemaFor(options, this.#planVersions, this.#maxPlanSteps);
  }

  /**
   * Captures, admits and runs a plan; resolves with the job, failed or completed.
   * @throws PlanAdmissionError (PLAN_ADMISSION_REJECTED) before any job exists when the plan is
   * refused; TypeError (EXECUTE_OPTIONS_INVALID) for bad options; JOB_STORE_FAILED when the
   * store fails; RUNTIME_CLOSED after `close()`.
   */
  executePlan(plan: ExecutionPlan, options: ExecutePlanOptions = NO_OPTIONS): Promise<Job> {
    return executeSubmission(this.#submissions, plan, options);
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
    const admitted = this.#admit(plan);
    return previewAdmittedPlan(admitted, caller, this.#authorizer, this.#approvals !== undefined);
  }

  /**
   * The one admission of every entry (execute, preview, submit): the plan captured (structure
   * read once) and admitted against what is registered now.
   * @throws PlanAdmissionError (PLAN_ADMISSION_REJECTED) when it is refused.
   */
  #admit(plan: ExecutionPlan): AdmittedPlan {
    return admitPlan(captureSubmission(plan, this.#maxPlanSteps, this.#planVersions), registered);
  }

  /**
   * Admits a plan like `executePlan` (the same refusals), records its job `queued` and resolves
   * `{ jobId }` once it is recorded; the job runs later, in submission order, at most
   * `queue.concurrency` at once (docs/api.md, "runtime.submitPlan").
   * @throws as `executePlan`; JOB_OPTIONS_INVALID for malformed options.
   */
  submitPlan(plan: ExecutionPlan, options?: SubmitPlanOptions): Promise<SubmittedJob> {
    return submitQueued(this.#submissions, plan, options);
  }

  /**
   * Resolves the job once it is no longer `queued` or `executing`; when `timeoutMs` passes first,
   * the job as it stands; `undefined` for an unknown id. Rejects with the signal's reason when
   * `signal` aborts (docs/api.md, "runtime.waitForJob").
   */
  async waitForJob(id: string, options?: WaitForJobOptions): Promise<Job | undefined> {
    this.#assertOpen();
    const { timeoutMs, signal } = readWaitOptions(options);
    if (typeof id !== 'string') return undefined;
    return waitForEnd(this.#waits, id, timeoutMs, signal);
  }

  /**
   * Cancels a job (docs/api.md, "runtime.cancelJob"): a queued or awaiting job never runs again;
   * a running step's `context.signal` is aborted and the job is `cancelled` once it settles.
   * Resolves once the cancel is recorded, with the job as it stands (a finished job unchanged),
   * `undefined` for an unknown id.
   * @throws CANCEL_FORBIDDEN for a caller that is not the submitter and that `cancelPolicy`
   * does not allow; JOB_OPTIONS_INVALID for malformed options.
   */
  async cancelJob(id: string, options: CancelJobOptions): Promise<Job | undefined> {
    this.#assertOpen();
    const { caller, reason } = readCancelOptions(options);
    if (typeof id !== 'string') return undefined;
    return cancelAs(this.#cancels, id, caller, reason);
  }

  /**
   * Observes job events of one type, or all with `'*'`. Returns an idempotent unsubscribe.
   * @throws TypeError (SUBSCRIPTION_INVALID) for an unknown type or a non-function handler.
   */
  subscribe(type: JobEventType | '*', handler: RuntimeEventHandler): () => void {
    return this.#bus.subscribe(type, handler);
  }

  /**
   * The job with this id, or undefined; with `options.caller`, undefined too when that caller
   * may not read it (docs/api.md, "Reading and tenants").
   * @throws TypeError (JOB_FILTER_INVALID) for a malformed caller.
   */
  getJob(id: string, options?: { caller?: ExecutionCaller }): Promise<Job | undefined> {
    return this.#reader.get(id, options);
  }

  /**
   * Checks a stored job (docs/api.md, "runtime.verifyJob"): its event chain recomputed (SQLite,
   * PostgreSQL) and every recorded input, input as authorized and result against the digests in
   * its events. Resolves undefined for an unknown id.
   */
  verifyJob(id: string): Promise<JobVerification | undefined> {
    return this.#reader.verify(id);
  }

  /**
   * Checks the whole store (docs/api.md, "runtime.verifyStore"): every checkpoint, every sealed
   * event present and unchanged, every job's record; `since` (`'<seq>:<hash>'` or `{ seq, hash }`)
   * a head kept elsewhere that must still be in the chain.
   * @throws TypeError (STORE_HEAD_INVALID) for a malformed `since`.
   */
  verifyStore(options: { since?: string | CheckpointHead } = {}): Promise<StoreVerification> {
    return this.#reader.verifyStore(options);
  }

  /**
   * One job as an evidence bundle (docs/api.md, "runtime.exportJob"), signed with `signingKey`
   * (Ed25519, PEM) when given; undefined for an unknown id.
   * @throws TypeError (EVIDENCE_KEY_INVALID) for a signing key that is not Ed25519 PEM.
   */
  exportJob(
    id: string,
    options: { signingKey?: string } = {},
  ): Promise<EvidenceBundle | undefined> {
    return this.#reader.exportJob(id, options);
  }

  /**
   * Jobs, newest first, filtered by status, capability and goal, at most `limit`.
   * @throws TypeError (JOB_FILTER_INVALID) for a malformed filter.
   */
  listJobs(filter?: JobListFilter & { caller?: ExecutionCaller }): Promise<Job[]> {
    return this.#reader.list(filter);
  }

  /**
   * Pending approval requests (docs/api.md, "Approvals"); expired ones are failed, not listed.
   * Without the `approvals` option there are none.
   */
  listApprovals(filter: ApprovalListFilter = {}): Promise<ApprovalRequest[]> {
    return this.#approvalsPart.list(filter);
  }

  /**
   * A page of pending approval requests (docs/api.md, "Reading and tenants"): with `caller`,
   * only those whose jobs it may read; with `limit` or `cursor`, in the store's order of jobs
   * awaiting approval (oldest first, then by step), at most `limit`, after `cursor`, reading
   * from the store about one page of jobs (not every pending one). Without either, as
   * `listApprovals`.
   * @throws TypeError (JOB_FILTER_INVALID) for a malformed filter or a cursor this runtime did
   * not write.
   */
  approvalPage(filter: ApprovalListFilter = {}): Promise<ApprovalPage> {
    return this.#approvalsPart.page(filter);
  }

  /**
   * How many pending approval requests the filter matches (docs/api.md, "Reading and tenants"):
   * with `caller`, only those whose jobs it may read. Walks the jobs awaiting approval in
   * batches, holding one batch at a time.
   * @throws TypeError (JOB_FILTER_INVALID) for a malformed filter.
   */
  countApprovals(filter: ApprovalCountFilter = {}): Promise<number> {
    return this.#approvalsPart.count(filter);
  }

  /**
   * Approves or rejects one pending request; resolves with the job at its next stop (completed,
   * failed, or awaiting the next approval).
   * @throws APPROVAL_NOT_FOUND, APPROVAL_NOT_PENDING, APPROVAL_DIGEST_MISMATCH,
   * APPROVAL_SELF_APPROVAL, APPROVAL_FORBIDDEN, APPROVAL_EXPIRED (nothing changed, except that an
   * expired request fails its step and job); APPROVAL_DECISION_INVALID for malformed arguments.
   */
  async decideApproval(decision: ApprovalDecision | PlanApprovalDecision): Promise<Job> {
    return this.#approvalsPart.decide(decision);
  }

  /**
   * Starts this process's worker on the DBOS queue (docs/api.md, "Workers"): it runs jobs that
   * any process submitted with `submitPlan`, at most `concurrency` at once, and takes up the
   * jobs of a worker that is gone. Only with `queue: { engine: 'dbos' }`; one per process.
   * `close()` stops it.
   * @throws RUNTIME_OPTIONS_INVALID without the dbos engine or for malformed options.
   */
  async startWorker(options: StartWorkerOptions = {}): Promise<Worker> {
    this.#assertOpen();
    return startWorkerOf(
      {
        jobs: this.#jobs,
        orphans: this.#orphans,
        waitForJob: (id: string) => this.waitForJob(id),
        queue: this.#dbos,
        concurrency: this.#queueConcurrency,
        deps: () => this.#store.dependencies(),
        log: (line) => this.#logger.warn(line, { source: 'warrant worker' }),
      },
      options,
    );
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
    // No gone owner's job is taken from now on; the look under way ends first.
    await this.#orphans.stop();
    // A worker stops taking jobs first; the jobs it runs end below like any others.
    await this.#dbos?.close();
    // Queued jobs still run (they were admitted); close() waits for them as for running ones.
    // No job starts once closed, so this set only shrinks; a job's rejection is its caller's.
    await this.#jobs.drain();
    const stranded = await this.#stranded.stop();
    if (stranded.length > 0)
      this.#logger.warn(
        `warrant: ${stranded.length} ${stranded.length === 1 ? 'job' : 'jobs'} could not be recorded before close; left to recovery at the next start: ${stranded.join(', ')}`,
        {},
      );
    this.#jobs.stopPolling();
    await this.#cancels.queues.close();
    await this.#store.close();
  }

  #assertOpen(): void {
    if (this.#closed) {
      throw createError(Error, ErrorCode.RUNTIME_CLOSED, 'This OperatorRuntime is closed');
    }
  }

  /**
   * The notifications of the store not delivered yet, pending, failed or dropped, oldest first
   * (docs/api.md, "runtime.listNotifications"): at most `limit` (default 100), only those
   * written after the row `after` (a `seq`) when given: the next page. With `caller`, only
   * those of jobs in its tenant (docs/api.md, "Reading and tenants").
   */
  listNotifications(
    options: { limit?: number; after?: number; caller?: ExecutionCaller } = {},
  ): Promise<NotificationRecord[]> {
    return this.#reader.notifications(options);
  }

  /**
   * Whether the store this runtime opened can write now, from what the store knows (no
   * statement is sent): not from the moment a PostgreSQL store lost its owner lock until it
   * holds a new one, nor while its writes fail on a lost connection (docs/api.md,
   * "runtime.storeAvailability"). A memory or SQLite store, or one not opened yet, answers
   * writable.
   */
  storeAvailability(): StoreAvailability {
    return this.#store.availability();
  }

  /**
   * The queued and executing jobs whose owner is gone and that no runtime took up, oldest first,
   * each with what it needs that this runtime does not register (docs/api.md,
   * "runtime.waitingJobs"). With `caller`, only the jobs it may read. Takes nothing.
   */
  waitingJobs(options: { caller?: ExecutionCaller } = {}): Promise<WaitingJob[]> {
    return this.#reader.waiting(options);
  }

  /**
   * The limits and their counters (docs/api.md, "runtime.listLimits"): with `caller`, only the
   * counters it may see (its own, its tenant's and the global ones; every counter of its tenant
   * with the scope `warrant:audit`); without, all (the host is trusted).
   */
  listLimits(options: { caller?: ExecutionCaller } = {}): Promise<LimitsView> {
    return this.#reader.limits(options);
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
