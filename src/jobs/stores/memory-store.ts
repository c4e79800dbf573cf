import { isFinished, matchesFilter, type Job, type JobListFilter, type JobStatus } from '../job.js';
import type { JobChange, JobStore } from '../job-store.js';
import { parseJson } from '../parse-json.js';

/**
 * A finished job as the memory store keeps it: its record as JSON in a Buffer (outside the
 * JavaScript heap), with what `list` filters on beside it. A record is JSON data by construction
 * (docs/decisions.md, "The decision record"), so decoding gives back the same record.
 */
class FinishedJob {
  constructor(
    readonly bytes: Buffer,
    readonly status: JobStatus,
    readonly goal: string,
    /** The capability of each step, in order (strings shared with the record that was encoded). */
    readonly capabilities: readonly string[],
  ) {}

  matches(filter: JobListFilter): boolean {
    return (
      (filter.status === undefined || this.status === filter.status) &&
      (filter.goal === undefined || this.goal === filter.goal) &&
      (filter.capability === undefined || this.capabilities.includes(filter.capability))
    );
  }

  decode(): Job {
    return parseJson(this.bytes.toString('utf8')) as Job;
  }
}

/**
 * The default store: jobs in a Map, insertion (= creation) ordered. Bounded by `maxJobs`: when a
 * job is created beyond the bound, the oldest FINISHED jobs are evicted; running jobs are kept.
 *
 * A job still running is held as its record object, by reference (the executor changes it in
 * place; an approval is claimed on it synchronously). Once it finishes, its record is encoded
 * once, as JSON in a Buffer, and each read decodes a fresh copy (docs/decisions.md, "Stores"):
 * about 30 objects per one-step job that every collection of the heap would otherwise copy and
 * mark, for as long as the job is kept, become a handful (bench/runtime/execute.bench.ts).
 */
export class MemoryJobStore implements JobStore {
  readonly #jobs = new Map<string, Job | FinishedJob>();
  readonly #maxJobs: number;

  constructor(maxJobs: number) {
    this.#maxJobs = maxJobs;
  }

  create(job: Job): void {
    this.#jobs.set(job.id, job);
    if (this.#jobs.size > this.#maxJobs) this.#evict();
  }

  update(job: Job, _change: JobChange): void {
    // Until it finishes, the job object is the record: nothing to copy. A change that claims an
    // approval request (JobChange.claims) was checked and set on this very object, synchronously,
    // by its caller. The change that finishes it is its last: the record is encoded now.
    if (!isFinished(job) || this.#jobs.get(job.id) !== job) return;
    const capabilities = job.steps.map((step) => step.capability);
    const bytes = Buffer.from(JSON.stringify(job), 'utf8');
    this.#jobs.set(job.id, new FinishedJob(bytes, job.status, job.goal, capabilities));
  }

  get(id: string): Job | undefined {
    const kept = this.#jobs.get(id);
    return kept instanceof FinishedJob ? kept.decode() : kept;
  }

  list(filter: JobListFilter): Job[] {
    const limit = filter.limit ?? Infinity;
    const found: Job[] = [];
    if (limit === 0) return found;
    const all = [...this.#jobs.values()];
    for (let index = all.length - 1; index >= 0; index--) {
      const kept = all[index] as Job | FinishedJob;
      if (kept instanceof FinishedJob) {
        if (!kept.matches(filter)) continue;
        found.push(kept.decode());
      } else {
        if (!matchesFilter(kept, filter)) continue;
        found.push(kept);
      }
      if (found.length >= limit) break;
    }
    return found;
  }

  close(): void {
    this.#jobs.clear();
  }

  // Evicts a batch (1% of the bound) at a time: walking the Map from its oldest end once per
  // create was measurable in bench/runtime/execute.bench.ts; the bound itself is never exceeded.
  #evict(): void {
    let excess = this.#jobs.size - this.#maxJobs + Math.floor(this.#maxJobs / 100);
    for (const [id, kept] of this.#jobs) {
      if (excess <= 0) break;
      if (kept instanceof FinishedJob || isFinished(kept)) {
        this.#jobs.delete(id);
        excess--;
      }
    }
  }
}
