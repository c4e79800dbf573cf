import { isFinished, matchesFilter, type Job, type JobListFilter } from '../job.js';
import type { IdempotencyClaim, IdempotencyHolder, JobChange, JobStore } from '../job-store.js';

/**
 * The default store: jobs in a Map, insertion (= creation) ordered. Bounded by `maxJobs`: when a
 * job is created beyond the bound, the oldest FINISHED jobs are evicted; running jobs are kept.
 * Jobs are held and returned by reference (no copying on the hot path).
 */
export class MemoryJobStore implements JobStore {
  readonly #jobs = new Map<string, Job>();
  readonly #maxJobs: number;
  /** Idempotency claims by scope and key (docs/api.md, "Idempotency"). */
  readonly #claims = new Map<string, IdempotencyHolder & { expiresAt: number }>();

  constructor(maxJobs: number) {
    this.#maxJobs = maxJobs;
  }

  create(job: Job): void {
    this.#jobs.set(job.id, job);
    if (this.#jobs.size > this.#maxJobs) this.#evict();
  }

  update(_job: Job, _change: JobChange): void {
    // The job object is the record; nothing to copy. A change that claims an approval request
    // (JobChange.claims) was checked and set on this very object, synchronously, by its caller.
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
        excess--;
      }
    }
  }
}
