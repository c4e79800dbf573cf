import { isFinished, matchesFilter, type Job, type JobListFilter } from '../job.js';
import type { JobChange, JobStore } from '../job-store.js';
import { alreadyConsumed, claimedRequest } from './approval-ledger.js';

/**
 * The default store: jobs in a Map, insertion (= creation) ordered. Bounded by `maxJobs`: when a
 * job is created beyond the bound, the oldest FINISHED jobs are evicted; running jobs are kept.
 * Jobs are held and returned by reference (no copying on the hot path).
 */
export class MemoryJobStore implements JobStore {
  readonly #jobs = new Map<string, Job>();
  readonly #maxJobs: number;
  /**
   * The ledger of consumed approvals, in process (approval-ledger.ts): by job, the position of
   * each decided request's `approval.requested` event. Evicted with its job.
   */
  readonly #consumed = new Map<string, Set<number>>();

  constructor(maxJobs: number) {
    this.#maxJobs = maxJobs;
  }

  create(job: Job): void {
    this.#jobs.set(job.id, job);
    if (this.#jobs.size > this.#maxJobs) this.#evict();
  }

  update(job: Job, change: JobChange): void {
    // The job object is the record; nothing to copy. A change that claims an approval request
    // (JobChange.claims) was checked and set on this very object, synchronously, by its caller;
    // its request is entered in the ledger.
    if (change.claims !== undefined) this.#consume(job, change, change.claims);
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

  get(id: string): Job | undefined {
    return this.#jobs.get(id);
  }

  list(filter: JobListFilter): Job[] {
    const limit = filter.limit ?? Infinity;
    const found: Job[] = [];
    if (limit === 0) return found;
    const all = [...this.#jobs.values()];
    for (let index = all.length - 1; index >= 0; index--) {
      const job = all[index] as Job;
      if (!matchesFilter(job, filter)) continue;
      found.push(job);
      if (found.length >= limit) break;
    }
    return found;
  }

  close(): void {
    this.#jobs.clear();
    this.#consumed.clear();
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
        excess--;
      }
    }
  }
}
