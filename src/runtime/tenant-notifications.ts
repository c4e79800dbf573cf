/**
 * The notifications a caller may list (docs/api.md, "runtime.listNotifications" and "Reading and
 * tenants"): only those of jobs in its tenant, a caller without one seeing only jobs without
 * one, as every read keeps tenants apart. The outbox rows name their job only, so each job's
 * tenant is read from its record, once per listing.
 */
import { frozenCallerCopy } from '../callers/caller-check.js';
import type { ExecutionCaller } from '../callers/execution-caller.js';
import { ErrorCode } from '../errors/error-codes.js';
import { createError } from '../errors/warrant-error.js';
import type { Job } from '../jobs/job.js';
import type { JobStore, NotificationRecord } from '../jobs/job-store.js';
import { hasOutbox } from '../jobs/store-parts.js';
import { tenantOf } from '../callers/tenant-rules.js';

/** The most rows read from the outbox at once while looking for a tenant's. */
const MAX_BATCH = 4_096;

/** `options.caller` of `listNotifications`, checked like any caller from outside. */
export function checkNotificationsCaller(value: unknown): ExecutionCaller | undefined {
  if (value === undefined) return undefined;
  const checked = frozenCallerCopy(value, 'listNotifications() options.caller');
  if (!checked.ok) throw createError(TypeError, ErrorCode.JOB_FILTER_INVALID, checked.reason);
  return checked.caller;
}

/**
 * At most `limit` rows after seq `after`, oldest first, of jobs in `caller`'s tenant: the outbox
 * is read in growing batches (4 times larger each) until the page is full or it has no more. A
 * row whose job is gone or unreadable is not shown.
 */
export async function tenantNotifications(
  store: JobStore,
  caller: ExecutionCaller,
  limit: number,
  after: number,
): Promise<NotificationRecord[]> {
  if (!hasOutbox(store) || limit === 0) return [];
  const { outbox } = store;
  const tenant = tenantOf(caller);
  const inTenant = new Map<string, boolean>();
  const shown: NotificationRecord[] = [];
  let cursor = after;
  let batch = Math.min(limit, MAX_BATCH);
  for (;;) {
    const rows = await outbox.listNotifications(batch, cursor);
    for (const row of rows) {
      let ours = inTenant.get(row.jobId);
      if (ours === undefined) {
        const job = await jobOf(store, row.jobId);
        ours = job !== undefined && tenantOf(job.caller) === tenant;
        inTenant.set(row.jobId, ours);
      }
      if (!ours) continue;
      shown.push(row);
      if (shown.length === limit) return shown;
    }
    const last = rows.at(-1);
    if (last === undefined || rows.length < batch) return shown;
    cursor = last.seq;
    batch = Math.min(batch * 4, MAX_BATCH);
  }
}

/** The job of a row; undefined when it is gone or its record cannot be read (not shown). */
async function jobOf(store: JobStore, id: string): Promise<Job | undefined> {
  try {
    return await store.get(id);
  } catch (error) {
    if ((error as { code?: unknown } | null)?.code === ErrorCode.JOB_RECORD_UNREADABLE)
      return undefined;
    throw error;
  }
}
