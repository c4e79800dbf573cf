/**
 * Reading the record for the runtime's read methods (docs/api.md, "runtime.verifyJob",
 * "runtime.listJobs", "runtime.verifyStore", "runtime.listNotifications"): what a store answers,
 * checked, filtered by what a caller may read, and verified. Nothing here writes.
 */
import type { ExecutionCaller } from '../callers/execution-caller.js';
import { describeValue } from '../errors/describe-value.js';
import { ErrorCode } from '../errors/error-codes.js';
import { createError } from '../errors/warrant-error.js';
import type { CheckpointHead } from '../record/checkpoint.js';
import type { Job, JobListFilter } from '../jobs/job.js';
import type { JobStore, NotificationRecord } from '../jobs/job-store.js';
import { hasChain, hasOutbox } from '../jobs/store-parts.js';
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
