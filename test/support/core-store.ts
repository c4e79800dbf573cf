// A store with the JobStore core only (create, update, get, list, close), as a host would write
// one: records kept as structured copies in a Map, so what the runtime changes after a write
// changes nothing stored until its next `update`.
import type { Job, JobListFilter } from '../../src/index.js';
import type { JobChange, JobStore } from '../../src/index.js';
import { matchesFilter } from '../../src/jobs/job.js';

export class CoreStore implements JobStore {
  readonly jobs = new Map<string, Job>();
  /** Every change written, in order, by job id. */
  readonly changes: { jobId: string; change: JobChange }[] = [];
  closed = 0;

  create(job: Job): void {
    this.jobs.set(job.id, structuredClone(job));
  }

  update(job: Job, change: JobChange): void {
    this.changes.push({ jobId: job.id, change });
    this.jobs.set(job.id, structuredClone(job));
  }

  get(id: string): Job | undefined {
    const job = this.jobs.get(id);
    return job === undefined ? undefined : structuredClone(job);
  }

  list(filter: JobListFilter): Job[] {
    const found = [...this.jobs.values()].reverse().filter((job) => matchesFilter(job, filter));
    return found.slice(0, filter.limit ?? found.length).map((job) => structuredClone(job));
  }

  close(): void {
    this.closed++;
  }
}
