/**
 * The options of `new OperatorRuntime()` (docs/api.md), read once and checked: every malformed
 * option is a TypeError with RUNTIME_OPTIONS_INVALID naming it (docs/errors.md). Kept apart from
 * the runtime so the runtime holds behaviour only (docs/decisions.md, "House rules").
 */
import { ErrorCode } from '../errors/error-codes.js';
import {
  checkApprovalsOption,
  type ApprovalsConfig,
  type ApprovalsOptions,
} from '../approvals/approver-policy.js';
import type { ExecutionAuthorizer, ExecutionCaller } from '../authorization/authorizer.js';
import type { Job } from '../jobs/job.js';
import type { ExecutionLogger, FieldsFirstLogger } from '../capabilities/capability.js';
import { hostLogger } from '../capabilities/host-logger.js';
import { silentLogger } from '../capabilities/lifecycle-logging-middleware.js';
import { describeValue } from '../errors/describe-value.js';
import { readField } from '../values/hostile-reads.js';
import { createError } from '../errors/warrant-error.js';
import type { ObserverErrorHandler } from '../events/event-bus.js';
import type { JobStore } from '../jobs/job-store.js';
import { checkStoreOption, isPostgresStore } from '../stores/open-store.js';
import type { PlanVersion } from '../plan/execution-plan.js';
import { DEFAULT_PLAN_VERSIONS, KNOWN_PLAN_VERSIONS } from '../plan/plan-versions.js';
import {
  checkNotificationsOption,
  type NotificationDelivery,
  type NotificationDestination,
  type NotificationsConfig,
} from '../notifications/notification-options.js';
import {
  checkLimitsOption,
  type CheckedLimit,
  type LimitDefinition,
} from '../limits/limit-options.js';

/** Options of `new OperatorRuntime()`. */
export interface OperatorRuntimeOptions {
  /** Decides every step. Default: reads allowed, writes and destructive work denied. */
  authorizer?: ExecutionAuthorizer;
  /**
   * Where jobs are kept: `'memory'` (default), `'sqlite:<file>'`, a `postgres://` URL, or a store
   * object (docs/api.md, "Stores"), used as given and closed with the runtime.
   */
  store?: string | JobStore;
  /** Bound of the memory store; oldest finished jobs are evicted first (jobs awaiting approval are kept and count). Default 1000. */
  maxJobs?: number;
  /** Largest plan admitted (steps). Default 100000. */
  maxPlanSteps?: number;
  /**
   * Logger behind `context.logger`: called `(message, fields)`, or `(fields, message)` when it is
   * a pino logger (docs/api.md, "Loggers"). Default: silent.
   */
  logger?: ExecutionLogger | FieldsFirstLogger;
  /** Told about observer throws and rejections. Default: a one-line console warning. */
  onObserverError?: ObserverErrorHandler;
  /**
   * Key of the SQLite and PostgreSQL stores' event chain: hashes become HMAC-SHA-256 under its
   * UTF-8 bytes, so a database writer without the key cannot forge a chain. Default: the
   * `WARRANT_AUDIT_KEY` environment variable, else none (plain SHA-256).
   */
  auditKey?: string;
  /**
   * Human approval bound to the exact action (docs/api.md, "Approvals"): authorizers may answer
   * `require_approval`, and the default policy asks approval for writes and destructive work.
   */
  approvals?: ApprovalsOptions;
  /**
   * The plan versions admitted (docs/api.md, "Plan version 2.0"): a non-empty list of distinct
   * known versions. Default `['1.0']`; a plan of another version is UNSUPPORTED_PLAN_VERSION.
   */
  planVersions?: readonly PlanVersion[];
  /**
   * The queue of `submitPlan` (docs/api.md, "Queued jobs and cancellation"): at most
   * `concurrency` queued jobs run at once, in submission order. Default `{ concurrency: 4 }`,
   * in process. `engine: 'dbos'` (a PostgreSQL store only) queues them on DBOS Transact for
   * workers of any process (docs/api.md, "Workers").
   */
  queue?: { concurrency?: number; engine?: 'local' | 'dbos' };
  /**
   * Who besides the submitter may cancel a job: answers `true` to allow. Default: a caller
   * holding the scope `warrant:cancel` in the job's tenant (docs/api.md, "runtime.cancelJob").
   */
  cancelPolicy?: CancelPolicy;
  /**
   * How long an idempotency key stays taken (docs/api.md, "Idempotency"), in ms. Default 24 h.
   */
  idempotencyTtlMs?: number;
  /**
   * Receivers told when a job needs approval or ends (docs/api.md, "Notifications"): signed
   * Standard Webhooks POSTs (or Slack messages), written to the store's outbox with their event
   * and delivered at least once. Not with a PostgreSQL store (yet).
   */
  notifications?: readonly NotificationDestination[];
  /** Retries, time-outs and bounds of the deliveries (docs/api.md, "Notifications"). */
  notificationDelivery?: NotificationDelivery;
  /**
   * Who besides the submitter may read a job, on the surfaces that read as a caller (docs/api.md,
   * "Reading and tenants"); never across tenants. Default: a caller holding the scope
   * `warrant:audit`, or one the approver policy lets decide a pending request of the job.
   */
  readPolicy?: ReadPolicy;
  /**
   * Recover when the store opens (docs/api.md, "Recovery"): the queued and executing jobs of
   * owners that are gone (SQLite: processes that ended; PostgreSQL: sessions whose owner lock is
   * free) that this runtime can admit are taken up and run here; the others wait for a runtime
   * that can. Default true (with `queue: { engine: 'dbos' }`: false, its workers recover);
   * `false` turns it off. The memory store has nothing to recover.
   */
  recover?: boolean;
  /**
   * Told when the durable store opened from `store` starts failing its writes on transient
   * errors (`'down'`) and when a write succeeds again (`'up'`), once each per outage (docs/api.md,
   * "Store outages"). What it throws is ignored. Not called for a memory store.
   */
  onStoreOutage?: (state: 'down' | 'up') => void;
  /**
   * Rate and cost limits (docs/api.md, "Limits"): counted in the store after each allow and
   * before the invocation; a step over one is denied. At most 100, distinct names.
   */
  limits?: readonly LimitDefinition[];
}

/** Decides whether `caller` may read `job` (its submitter always may, within its tenant). */
export type ReadPolicy = (caller: ExecutionCaller, job: Job) => boolean | Promise<boolean>;

/** Decides whether `caller` may cancel `job` (the submitter always may). */
export type CancelPolicy = (caller: ExecutionCaller, job: Job) => boolean | Promise<boolean>;

/**
 * The key of an internal option: a store object the runtime uses as given (tests hand it a store
 * they hold, instead of reaching into a driver). Not exported from the package root.
 */
export const GIVEN_STORE = Symbol('warrant.givenStore');

export interface InternalOptions extends OperatorRuntimeOptions {
  readonly [GIVEN_STORE]?: JobStore;
}

/** The options as the runtime keeps them: checked, defaults applied where the runtime has one. */
export interface RuntimeSettings {
  /** The option as given; undefined picks the default policy (it depends on `approvals`). */
  readonly authorizer: ExecutionAuthorizer | undefined;
  /** The `store` option when it names a store (a string); undefined for a store object. */
  readonly store: string | undefined;
  /** A store object: the `store` option's, else the internal option's (tests). */
  readonly givenStore: JobStore | undefined;
  readonly maxJobs: number;
  readonly maxPlanSteps: number;
  readonly logger: ExecutionLogger;
  readonly onObserverError: ObserverErrorHandler | undefined;
  readonly auditKey: string | undefined;
  readonly approvals: ApprovalsConfig | undefined;
  /** Frozen; the default list itself when the option is absent. */
  readonly planVersions: readonly PlanVersion[];
  readonly queueConcurrency: number;
  readonly queueEngine: 'local' | 'dbos';
  readonly cancelPolicy: CancelPolicy | undefined;
  readonly idempotencyTtlMs: number;
  /** Undefined without destinations. */
  readonly notifications: NotificationsConfig | undefined;
  readonly readPolicy: ReadPolicy | undefined;
  readonly recover: boolean;
  readonly onStoreOutage: ((state: 'down' | 'up') => void) | undefined;
  /** Undefined without limits (an empty list is none). */
  readonly limits: readonly CheckedLimit[] | undefined;
}

function invalidOption(message: string): TypeError {
  return createError(TypeError, ErrorCode.RUNTIME_OPTIONS_INVALID, message);
}

/** The audit key: the option, else `WARRANT_AUDIT_KEY` (an empty variable is none). */
function checkAuditKey(auditKey: unknown): string | undefined {
  if (auditKey === undefined) {
    const fromEnvironment = process.env.WARRANT_AUDIT_KEY;
    return fromEnvironment === undefined || fromEnvironment === '' ? undefined : fromEnvironment;
  }
  if (typeof auditKey !== 'string' || auditKey === '')
    throw invalidOption('options.auditKey must be a non-empty string');
  return auditKey;
}

function positiveInteger(value: unknown, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    throw invalidOption(`options.${name} must be a positive integer, got ${describeValue(value)}`);
  }
  return value;
}

/**
 * `planVersions`: a non-empty array of distinct known versions, copied (and frozen) as read, each
 * element read once; an unreadable one is named like any unreadable option.
 */
function checkPlanVersions(value: unknown): readonly PlanVersion[] {
  if (value === undefined) return DEFAULT_PLAN_VERSIONS;
  const expected = `options.planVersions must be a non-empty array of distinct versions among ${KNOWN_PLAN_VERSIONS.map((version) => `"${version}"`).join(', ')}`;
  let versions: unknown[];
  try {
    if (!Array.isArray(value)) throw invalidOption(`${expected}, got ${describeValue(value)}`);
    const length: unknown = value.length;
    if (typeof length !== 'number' || length < 1 || length > KNOWN_PLAN_VERSIONS.length)
      throw invalidOption(`${expected}, got ${describeValue(value)}`);
    versions = [];
    for (let index = 0; index < length; index++) versions.push((value as unknown[])[index]);
  } catch (error) {
    if ((error as { code?: unknown } | null)?.code === ErrorCode.RUNTIME_OPTIONS_INVALID)
      throw error;
    throw invalidOption('options.planVersions could not be read');
  }
  for (const [index, version] of versions.entries()) {
    if (
      !KNOWN_PLAN_VERSIONS.includes(version as PlanVersion) ||
      versions.indexOf(version) !== index
    )
      throw invalidOption(`${expected}, got ${describeValue(version)} at [${index}]`);
  }
  return Object.freeze(versions as PlanVersion[]);
}

/**
 * Reads every option once (a throwing getter or proxy trap is RUNTIME_OPTIONS_INVALID naming it),
 * then checks them in a fixed order: the first malformed one is the error.
 */
export function checkRuntimeOptions(options: OperatorRuntimeOptions): RuntimeSettings {
  if (typeof options !== 'object' || options === null) {
    throw invalidOption(`OperatorRuntime options must be an object, got ${describeValue(options)}`);
  }
  const option = (key: keyof OperatorRuntimeOptions): unknown =>
    readField(options, key, (problem) => invalidOption(`options.${key} ${problem}`));
  const authorizer = option('authorizer') as ExecutionAuthorizer | undefined;
  const storeOption = option('store');
  const maxJobs = option('maxJobs');
  const maxPlanSteps = option('maxPlanSteps');
  const logger = option('logger') as ExecutionLogger | FieldsFirstLogger | undefined;
  const onObserverError = option('onObserverError') as ObserverErrorHandler | undefined;
  const auditKey = option('auditKey') as string | undefined;
  const approvals = option('approvals');
  const planVersions = option('planVersions');
  const queue = option('queue');
  const cancelPolicy = option('cancelPolicy');
  const idempotencyTtlMs = option('idempotencyTtlMs');
  const notifications = option('notifications');
  const notificationDelivery = option('notificationDelivery');
  const readPolicy = option('readPolicy');
  const recover = option('recover');
  const onStoreOutage = option('onStoreOutage');
  const limits = option('limits');
  if (
    authorizer !== undefined &&
    (typeof authorizer !== 'object' ||
      authorizer === null ||
      typeof readField(authorizer, 'authorize', (problem) =>
        invalidOption(`options.authorizer.authorize ${problem}`),
      ) !== 'function')
  ) {
    throw invalidOption('options.authorizer must be an object with an authorize(context) method');
  }
  if (logger !== undefined) {
    if (typeof logger !== 'object' || logger === null) {
      throw invalidOption(`options.logger must be an object, got ${describeValue(logger)}`);
    }
    for (const level of ['debug', 'info', 'warn', 'error'] as const) {
      const method = readField(logger, level, (problem) =>
        invalidOption(`options.logger.${level} ${problem}`),
      );
      if (typeof method !== 'function')
        throw invalidOption(`options.logger must have a ${level}() method`);
    }
  }
  if (onObserverError !== undefined && typeof onObserverError !== 'function') {
    throw invalidOption('options.onObserverError must be a function');
  }
  const storeObject = checkStoreOption(storeOption);
  const store = storeObject === undefined ? (storeOption as string | undefined) : undefined;
  const checkedAuditKey = checkAuditKey(auditKey);
  const checkedApprovals = checkApprovalsOption(approvals);
  // Read in this order (after the checks above, before the bounds) as the runtime always has.
  const givenStore = (options as InternalOptions)[GIVEN_STORE] ?? storeObject;
  const checkedMaxJobs = positiveInteger(maxJobs, 'maxJobs', 1_000);
  const checkedMaxPlanSteps = positiveInteger(maxPlanSteps, 'maxPlanSteps', 100_000);
  const checkedPlanVersions = checkPlanVersions(planVersions);
  const queueConcurrency = checkQueueOption(queue);
  const queueEngine = checkQueueEngine(queue, store);
  const checkedTtl = positiveInteger(idempotencyTtlMs, 'idempotencyTtlMs', 86_400_000);
  if (cancelPolicy !== undefined && typeof cancelPolicy !== 'function')
    throw invalidOption('options.cancelPolicy must be a function (caller, job) => boolean');
  const checkedNotifications = checkNotificationsOption(notifications, notificationDelivery);
  if (readPolicy !== undefined && typeof readPolicy !== 'function')
    throw invalidOption('options.readPolicy must be a function (caller, job) => boolean');
  if (recover !== undefined && typeof recover !== 'boolean')
    throw invalidOption(`options.recover must be a boolean, got ${describeValue(recover)}`);
  if (onStoreOutage !== undefined && typeof onStoreOutage !== 'function')
    throw invalidOption(
      `options.onStoreOutage must be a function (state) => void, got ${describeValue(onStoreOutage)}`,
    );
  const checkedLimits = checkLimitsOption(limits);
  return {
    authorizer,
    store,
    givenStore,
    maxJobs: checkedMaxJobs,
    maxPlanSteps: checkedMaxPlanSteps,
    logger: logger === undefined ? silentLogger : hostLogger(logger),
    onObserverError,
    auditKey: checkedAuditKey,
    approvals: checkedApprovals,
    planVersions: checkedPlanVersions,
    queueConcurrency,
    queueEngine,
    cancelPolicy: cancelPolicy as CancelPolicy | undefined,
    idempotencyTtlMs: checkedTtl,
    notifications: checkedNotifications,
    readPolicy: readPolicy as ReadPolicy | undefined,
    // With the dbos engine, workers take up gone owners' jobs (startWorker): the submitting
    // process runs nothing (docs/api.md, "Workers").
    recover: recover === undefined ? queueEngine !== 'dbos' : recover === true,
    onStoreOutage: onStoreOutage as ((state: 'down' | 'up') => void) | undefined,
    limits: checkedLimits,
  };
}

/** `queue: { engine }`: `'local'` (default) or `'dbos'`, which needs a PostgreSQL store. */
function checkQueueEngine(queue: unknown, store: string | undefined): 'local' | 'dbos' {
  if (queue === undefined) return 'local';
  const engine = readField(queue as object, 'engine', (problem) =>
    invalidOption(`options.queue.engine ${problem}`),
  );
  if (engine === undefined || engine === 'local') return 'local';
  if (engine !== 'dbos')
    throw invalidOption(
      `options.queue.engine must be 'local' or 'dbos', got ${describeValue(engine)}`,
    );
  if (!isPostgresStore(store))
    throw invalidOption(`options.queue.engine 'dbos' needs a PostgreSQL store (a postgres:// URL)`);
  return engine;
}

/** `queue: { concurrency }`: a positive integer, default 4. */
function checkQueueOption(queue: unknown): number {
  if (queue === undefined) return 4;
  if (typeof queue !== 'object' || queue === null)
    throw invalidOption(`options.queue must be an object, got ${describeValue(queue)}`);
  const concurrency = readField(queue, 'concurrency', (problem) =>
    invalidOption(`options.queue.concurrency ${problem}`),
  );
  if (concurrency === undefined) return 4;
  if (typeof concurrency !== 'number' || !Number.isSafeInteger(concurrency) || concurrency < 1) {
    throw invalidOption(
      `options.queue.concurrency must be a positive integer, got ${describeValue(concurrency)}`,
    );
  }
  return concurrency;
}
