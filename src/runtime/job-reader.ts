/**
 * Reading the record for the runtime's read methods (docs/api.md, "runtime.getJob",
 * "runtime.verifyJob", "runtime.listJobs", "runtime.verifyStore", "runtime.exportJob",
 * "runtime.listNotifications", "runtime.waitingJobs", "runtime.listLimits"): what a store
 * answers, checked, filtered by what a caller may read, and verified. Nothing here writes.
 */
import type { ExecutionCaller } from '../callers/execution-caller.js';
import { snapshotCaller } from '../callers/caller-snapshot.js';
import { capabilityInventory } from '../capabilities/inventory.js';
import type { CheckedLimit } from '../limits/limit-options.js';
import { limitsView, type LimitsView } from '../limits/limits-view.js';
import type { EvidenceBundle } from '../record/evidence.js';
import { exportJobOf, verifyStoreOf } from '../record/store-audit.js';
import type { StoreVerification } from '../record/verify-store.js';
import { checkJobFilter } from './list-filters.js';
import { AUDIT_SCOPE, mayRead } from './read-policy.js';
import type { ReadPolicy } from './runtime-options.js';
import type { RuntimeStore } from './runtime-store.js';
import { waitingJobsOf, type WaitingJob } from './waiting-jobs.js';
import { describeValue } from '../errors/describe-value.js';
import { ErrorCode } from '../errors/error-codes.js';
import { createError } from '../errors/warrant-error.js';
import type { CheckpointHead } from '../record/checkpoint.js';
import type { Job, JobListFilter } from '../jobs/job.js';
import type { JobStore, NotificationRecord } from '../jobs/job-store.js';
import { hasChain, hasLimits, hasOutbox } from '../jobs/store-parts.js';
import { parseHead } from '../record/store-audit.js';
import { verifyRecord, type JobVerification } from '../record/verify-record.js';
import type { Readable } from './approval-pages.js';
import { checkNotificationsCaller, tenantNotifications } from './tenant-notifications.js';

/**
 * Checks a stored job: its event chain recomputed (SQLite, PostgreSQL) and every recorded input,
 * input as authorized and result against the digests in its events; undefined for an unknown id.
 */
export async function verifyStoredJob(
  store: JobStore,
  id: string,
  auditKey: string | undefined,
): Promise<JobVerification | undefined> {
  try {
    if (!hasChain(store)) {
      const job = await store.get(id);
      return job === undefined ? undefined : verifyRecord(job, undefined, auditKey);
    }
    const read = await store.readChain(id);
    return read === undefined
      ? undefined
      : verifyRecord(read.job, read.hashes, auditKey, read.consumed);
  } catch (error) {
    // A row edited into something that is not a record is broken, not a store failure.
    if ((error as { code?: unknown } | null)?.code !== ErrorCode.JOB_RECORD_UNREADABLE) throw error;
    return { ok: false, reason: (error as Error).message };
  }
}

/**
 * The `since` option of `verifyStore` (`'<seq>:<hash>'` or `{ seq, hash }`), parsed.
 * @throws TypeError (STORE_HEAD_INVALID) for a malformed one.
 */
export function sinceOf(options: { since?: string | CheckpointHead }): CheckpointHead | undefined {
  const given = (options as { since?: unknown } | null)?.since;
  if (given === undefined) return undefined;
  return typeof given === 'string'
    ? parseHead(given)
    : parseHead(
        `${String((given as CheckpointHead).seq)}:${String((given as CheckpointHead).hash)}`,
      );
}

/**
 * The first `limit` jobs `caller` may read: the store is asked for growing batches (4 times
 * larger each) until enough are readable or it has no more, so a page is full whenever the
 * store holds enough readable jobs.
 */
export async function readableJobs(
  store: JobStore,
  filter: JobListFilter,
  caller: ExecutionCaller,
  mayReadJob: Readable,
): Promise<Job[]> {
  const wanted = filter.limit;
  let batch = wanted === undefined ? undefined : Math.max(wanted, 1);
  for (;;) {
    const jobs = await store.list(batch === undefined ? filter : { ...filter, limit: batch });
    const readable: Job[] = [];
    for (const job of jobs) {
      if (wanted !== undefined && readable.length >= wanted) break;
      if (await mayReadJob(caller, job)) readable.push(job);
    }
    if (batch === undefined || readable.length >= (wanted as number) || jobs.length < batch)
      return readable;
    batch = batch * 4;
  }
}

/** `listNotifications` options, checked. */
export interface NotificationRead {
  readonly limit: number;
  readonly after: number;
  readonly caller: ExecutionCaller | undefined;
}

/** @throws TypeError (JOB_FILTER_INVALID) for a malformed limit, after or caller. */
export function checkNotificationOptions(options: {
  limit?: number;
  after?: number;
  caller?: ExecutionCaller;
}): NotificationRead {
  const { limit = 100, after = 0 } = options;
  const caller = checkNotificationsCaller(options.caller);
  for (const [name, value] of [
    ['limit', limit],
    ['after', after],
  ] as const)
    if (!Number.isSafeInteger(value) || value < 0)
      throw createError(
        TypeError,
        ErrorCode.JOB_FILTER_INVALID,
        `listNotifications ${name} must be a non-negative integer, got ${describeValue(value)}`,
      );
  return { limit, after, caller };
}

/** The outbox's rows after `after`, at most `limit`; with a caller, its tenant's only (copies). */
export async function readNotifications(
  store: JobStore,
  { limit, after, caller }: NotificationRead,
): Promise<NotificationRecord[]> {
  const rows =
    caller === undefined
      ? hasOutbox(store)
        ? await store.outbox.listNotifications(limit, after)
        : []
      : await tenantNotifications(store, caller, limit, after);
  return rows.map((row) => ({ ...row }));
}

/** What the job reader reads with: the runtime's store and its reading rules. */
export interface JobReaderOptions {
  readonly store: RuntimeStore;
  readonly readPolicy: ReadPolicy;
  readonly auditKey: string | undefined;
  readonly limits: readonly CheckedLimit[] | undefined;
  /** Throws RUNTIME_CLOSED once the runtime is closed. */
  readonly assertOpen: () => void;
}

/**
 * The runtime's read methods (the facade's getJob, listJobs, verifyJob, verifyStore, exportJob,
 * listNotifications, waitingJobs, listLimits), each with the caller's reading rule applied.
 */
export class JobReader {
  readonly #options: JobReaderOptions;

  constructor(options: JobReaderOptions) {
    this.#options = options;
  }

  /** Whether `caller` may read `job` (docs/api.md, "Reading and tenants"). */
  readonly mayRead = (caller: ExecutionCaller, job: Job): Promise<boolean> =>
    mayRead(caller, job, this.#options.readPolicy);

  async get(id: unknown, options?: { caller?: ExecutionCaller }): Promise<Job | undefined> {
    if (typeof id !== 'string') return undefined;
    const caller =
      options === undefined ? undefined : checkJobFilter({ caller: options.caller }).caller;
    const job = await this.#options.store.with((store) => store.get(id));
    if (job === undefined || caller === undefined) return job;
    return (await this.mayRead(caller, job)) ? job : undefined;
  }

  async list(filter?: JobListFilter & { caller?: ExecutionCaller }): Promise<Job[]> {
    this.#options.assertOpen();
    const { caller, ...checked } = checkJobFilter(filter);
    const { store } = this.#options;
    if (caller === undefined) return store.with((opened) => opened.list(checked));
    return store.with((opened) => readableJobs(opened, checked, caller, this.mayRead));
  }

  async verify(id: unknown): Promise<JobVerification | undefined> {
    if (typeof id !== 'string') return undefined;
    return this.#options.store.with((store) => verifyStoredJob(store, id, this.#options.auditKey));
  }

  async verifyStore(options: { since?: string | CheckpointHead }): Promise<StoreVerification> {
    const since = sinceOf(options);
    return this.#options.store.with((store) => verifyStoreOf(store, this.#options.auditKey, since));
  }

  async exportJob(
    id: unknown,
    options: { signingKey?: string },
  ): Promise<EvidenceBundle | undefined> {
    if (typeof id !== 'string') return undefined;
    const signingKey = (options as { signingKey?: string } | null)?.signingKey;
    return this.#options.store.with((store) =>
      exportJobOf(store, id, this.#options.auditKey, signingKey),
    );
  }

  async notifications(options: {
    limit?: number;
    after?: number;
    caller?: ExecutionCaller;
  }): Promise<NotificationRecord[]> {
    const read = checkNotificationOptions(options);
    return this.#options.store.with((store) => readNotifications(store, read));
  }

  async waiting(options: { caller?: ExecutionCaller }): Promise<WaitingJob[]> {
    this.#options.assertOpen();
    const caller = checkJobFilter({ caller: options.caller }).caller;
    const inventory = capabilityInventory();
    return this.#options.store.with((store) =>
      waitingJobsOf(
        store,
        (name) => inventory.get(name),
        caller === undefined ? async () => true : (job) => this.mayRead(caller, job),
      ),
    );
  }

  async limits(options: { caller?: ExecutionCaller }): Promise<LimitsView> {
    const caller = options.caller === undefined ? undefined : snapshotCaller(options.caller);
    const counters = await this.#options.store.with((store) =>
      hasLimits(store) ? store.limitCounters(Date.now()) : [],
    );
    const audit = (caller?.scopes ?? []).includes(AUDIT_SCOPE);
    return limitsView(this.#options.limits ?? [], counters, caller, audit);
  }
}
