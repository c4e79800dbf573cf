import type { Job, JobEvent, JobListFilter } from './job.js';

/**
 * What a store is told after each state change of a job. `step` is the index of the step that
 * changed, if any; `events` are the events appended by this change, in order.
 */
export interface JobChange {
  readonly step?: number;
  readonly events: readonly JobEvent[];
}

/**
 * Where jobs live. The executor mutates the job object it owns and reports every change; a
 * durable store persists it before the call returns (or its promise settles), so a crash leaves
 * the last reported state on disk. Methods may be synchronous or return promises: the executor
 * awaits only when a promise comes back.
 */
export interface JobStore {
  /**
   * Persists a newly created job. The runtime starts a job as it creates it, so the job usually
   * arrives `executing`, with its `job.created` and `execution.started` events.
   */
  create(job: Job): void | Promise<void>;
  /** Persists one change of a job already created. */
  update(job: Job, change: JobChange): void | Promise<void>;
  get(id: string): Job | undefined | Promise<Job | undefined>;
  /** Newest first, filtered, at most `limit`. */
  list(filter: JobListFilter): Job[] | Promise<Job[]>;
  close(): void | Promise<void>;
}
