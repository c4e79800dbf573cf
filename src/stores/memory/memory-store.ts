import { isFinished, matchesFilter, type Job, type JobListFilter } from '../../jobs/job.js';
import { ErrorCode } from '../../errors/error-codes.js';
import { createError } from '../../errors/warrant-error.js';
import type {
  AwaitingIndex,
  AwaitingJob,
  IdempotencyStore,
  LimitStore,
  OutboxStore,
  IdempotencyClaim,
  IdempotencyHolder,
  JobChange,
  JobStore,
  LimitCounter,
  LimitTake,
  LimitVerdict,
} from '../../jobs/job-store.js';
import { alreadyConsumed, claimedRequest } from '../shared/approval-ledger.js';
import { MemoryLimits } from './memory-limits.js';
import { MemoryOutbox } from './memory-outbox.js';

/**
 * A deep-frozen snapshot of recorded JSON data: a part that is already frozen all the way down
 * (the caller's snapshot, most events) is shared as is; every other object or array is copied
 * and frozen. Keys are copied as data properties (`__proto__` included).
 */
function frozenSnapshot<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return value;
  const source = value as Record<string, unknown>;
  const keys = Object.keys(source);
  let shared = Object.isFrozen(source);
  const parts = keys.map((key) => {
    const part = source[key];
    const snapshot = frozenSnapshot(part);
    if (snapshot !== part) shared = false;
    return snapshot;
  });
  if (shared) return value;
  const copy = Array.isArray(source)
    ? parts
    : Object.fromEntries(keys.map((key, index) => [key, parts[index]]));
  return Object.freeze(copy) as T;
}

/**
 * The default store: jobs in a Map, insertion (= creation) ordered. Bounded by `maxJobs`: when a
 * job is created beyond the bound, the oldest FINISHED jobs are evicted; running jobs are kept.
 * The runtime changes the held records in place (no copying on the hot path). What `get` and
 * `list` hand out is a snapshot (docs/api.md, "runtime.getJob"): deep-frozen (what is frozen
 * all the way down already is shared, the rest copied), made on the first read after a change and handed out as is until the next one, so repeated reads of
 * a job cost nothing and no reader can change the stored job.
 */
export class MemoryJobStore
  implements JobStore, AwaitingIndex, IdempotencyStore, LimitStore, OutboxStore
{
  readonly #jobs = new Map<string, Job>();
  readonly #snapshots = new Map<string, Job>();
  readonly #maxJobs: number;
  /**
   * The ledger of consumed approvals, in process (stores/shared/approval-ledger.ts): by job, the
   * position of each decided request's `approval.requested` event. Evicted with its job.
   */
  readonly #consumed = new Map<string, Set<number>>();
  /** Idempotency claims by scope and key (docs/api.md, "Idempotency"). */
  readonly #claims = new Map<string, IdempotencyHolder & { expiresAt: number }>();

  /** The notification outbox (docs/api.md, "Notifications"): written only once attached. */
  readonly outbox = new MemoryOutbox();
  /** Limit counters (docs/api.md, "Limits"): in process, as the store is. */
  readonly #limits = new MemoryLimits();

  constructor(maxJobs: number) {
    this.#maxJobs = maxJobs;
  }

  takeLimits(takes: readonly LimitTake[], at: number): LimitVerdict {
    return this.#limits.take(takes, at);
  }

  limitCounters(at: number): LimitCounter[] {
    return this.#limits.counters(at);
  }

  create(job: Job): void {
    this.#jobs.set(job.id, job);
    if (this.#jobs.size > this.#maxJobs) this.#evict();
    this.outbox.record(job, job.events);
  }

  update(job: Job, change: JobChange): void {
    // The job object is the record; nothing to copy, only the snapshot to drop. A change that
    // claims an approval request (JobChange.claims) was checked and set on this very object,
    // synchronously, by its caller; its request is entered in the ledger.
    this.#snapshots.delete(job.id);
    if (change.claims !== undefined) this.#consume(job, change, change.claims);
    this.outbox.record(job, change.events);
  }

  #consume(job: Job, change: JobChange, position: number): void {
    const request = claimedRequest(job, change, position);
    let at = job.events.length - change.events.length - 1;
    while (at >= 0) {
      const event = job.events[at];
      if (event?.type === 'approval.requested' && event.data?.stepId === request.stepId) break;
      at--;
    }
    let positions = this.#consumed.get(job.id);
    if (positions === undefined) this.#consumed.set(job.id, (positions = new Set()));
    if (positions.has(at)) throw alreadyConsumed(job.id, request);
    positions.add(at);
  }

  claimIdempotency(claim: IdempotencyClaim): IdempotencyHolder | undefined {
    const at = `${claim.scope}\n${claim.key}`;
    const held = this.#claims.get(at);
    if (held !== undefined && held.expiresAt > claim.at)
      return { jobId: held.jobId, digest: held.digest };
    this.#claims.set(at, { jobId: claim.jobId, digest: claim.digest, expiresAt: claim.expiresAt });
    return undefined;
  }

  get(id: string): Job | undefined {
    const job = this.#jobs.get(id);
    return job === undefined ? undefined : this.#snapshot(job);
  }

  /**
   * The held record itself, for the runtime to change and report through `update` (`heldRecord`
   * below): the memory store's own, not a part of the `JobStore` interface.
   */
  held(id: string): Job | undefined {
    return this.#jobs.get(id);
  }

  #snapshot(job: Job): Job {
    let snapshot = this.#snapshots.get(job.id);
    if (snapshot === undefined) {
      snapshot = frozenSnapshot(job);
      this.#snapshots.set(job.id, snapshot);
    }
    return snapshot;
  }

  list(filter: JobListFilter): Job[] {
    const limit = filter.limit ?? Infinity;
    const found: Job[] = [];
    if (limit === 0) return found;
    const all = [...this.#jobs.values()];
    for (let index = all.length - 1; index >= 0; index--) {
      const job = all[index] as Job;
      if (!matchesFilter(job, filter)) continue;
      found.push(this.#snapshot(job));
      if (found.length >= limit) break;
    }
    return found;
  }

  /**
   * Jobs awaiting approval in creation (Map) order; a position is the job's `[createdAt, id]`
   * as JSON. After a job still held: the jobs after it in the Map; after one evicted meanwhile:
   * those created later. Walks the Map without copying it; snapshots only the page.
   */
  listAwaiting(after: string | undefined, limit: number): AwaitingJob[] {
    let from: [string, string] | undefined;
    if (after !== undefined) {
      from = memoryPosition(after);
      if (from === undefined)
        throw createError(
          TypeError,
          ErrorCode.JOB_FILTER_INVALID,
          'listAwaiting(): not a position of this store',
        );
    }
    const found: AwaitingJob[] = [];
    if (limit <= 0) return found;
    let passed = from === undefined;
    const held = from !== undefined && this.#jobs.has(from[1]);
    for (const job of this.#jobs.values()) {
      if (!passed) {
        if (held ? job.id === from?.[1] : job.createdAt > (from?.[0] ?? '')) passed = true;
        if (held || !passed) continue;
      }
      if (job.status !== 'awaiting_approval') continue;
      found.push({
        job: this.#snapshot(job),
        position: JSON.stringify([job.createdAt, job.id]),
      });
      if (found.length >= limit) break;
    }
    return found;
  }

  close(): void {
    this.#jobs.clear();
    this.#consumed.clear();
    this.#snapshots.clear();
    this.#claims.clear();
  }

  // Evicts a batch (1% of the bound) at a time: walking the Map from its oldest end once per
  // create was measurable in bench/runtime/execute.bench.ts; the bound itself is never exceeded.
  #evict(): void {
    let excess = this.#jobs.size - this.#maxJobs + Math.floor(this.#maxJobs / 100);
    for (const [id, job] of this.#jobs) {
      if (excess <= 0) break;
      if (isFinished(job)) {
        this.#jobs.delete(id);
        this.#consumed.delete(id);
        this.#snapshots.delete(id);
        excess--;
      }
    }
  }
}

/** A memory store position, `[createdAt, id]`, or undefined. */
function memoryPosition(position: string): [string, string] | undefined {
  try {
    const value: unknown = JSON.parse(position);
    return Array.isArray(value) &&
      value.length === 2 &&
      value.every((part) => typeof part === 'string')
      ? (value as [string, string])
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The record a store holds in memory for `id`, to change in place and report through `update`:
 * `{ record }` from a memory store (whose `get` hands out frozen snapshots), undefined from any
 * other (whose `get` reads a record of its own to change).
 */
export function heldRecord(store: JobStore, id: string): { record: Job | undefined } | undefined {
  return store instanceof MemoryJobStore ? { record: store.held(id) } : undefined;
}
