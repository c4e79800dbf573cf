/**
 * Waiting for a job (docs/api.md, "runtime.waitForJob", "Idempotency"): until it is no longer
 * `queued` or `executing`, and the first job of a repeated idempotency key. A job live in this
 * runtime is waited for by its end, the store read once then; a job of another process on the
 * store by reading the store, 10 ms at first, a little less often each time, at most
 * CANCEL_POLL_MS.
 */
import { ErrorCode } from '../errors/error-codes.js';
import { createError } from '../errors/warrant-error.js';
import type { Job } from '../jobs/job.js';
import { CANCEL_POLL_MS, type LiveJobs } from './live-jobs.js';

/** What the waits use of the runtime: its live jobs and a read of its store. */
export interface JobWaitHost {
  readonly jobs: LiveJobs;
  read(id: string): Promise<Job | undefined>;
}

/** How long the first job of a repeated key is looked for before JOB_STORE_FAILED. */
const FIRST_JOB_LOOK_MS = 10_000;

/** Resolves after `ms`, at once when `signal` aborts, or as soon as `also` settles. */
export function sleep(
  ms: number,
  signal: AbortSignal | undefined,
  also?: Promise<void>,
): Promise<void> {
  return new Promise((resolve) => {
    const timer = ms === Infinity ? undefined : setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
    also?.then(done, done);
  });
}

function stillRunning(job: Job): boolean {
  return job.status === 'queued' || job.status === 'executing';
}

/**
 * The job once it is no longer `queued` or `executing`; when `timeoutMs` passes first, the job as
 * it stands; undefined for an unknown id. Rejects with the signal's reason when it aborts.
 */
export async function waitForEnd(
  host: JobWaitHost,
  id: string,
  timeoutMs: number | undefined,
  signal: AbortSignal | undefined,
): Promise<Job | undefined> {
  const deadline = timeoutMs === undefined ? Infinity : Date.now() + timeoutMs;
  let pause = 10;
  for (;;) {
    signal?.throwIfAborted();
    // Live here: nothing to read until it leaves (its end is written by then).
    const gone = host.jobs.whenGone(id);
    if (gone !== undefined) {
      await sleep(deadline - Date.now(), signal, gone);
      signal?.throwIfAborted();
    }
    const job = await host.read(id);
    if (job === undefined || !stillRunning(job)) return job;
    const left = deadline - Date.now();
    if (left <= 0) return job;
    // Another process's job (or one whose last write here was lost): read the store again.
    if (host.jobs.of(id) === undefined) {
      await sleep(Math.min(pause, left), signal);
      pause = Math.min(pause * 2, CANCEL_POLL_MS);
    }
  }
}

/**
 * The first job of a repeated idempotency key once it is recorded: its submitter (this runtime
 * or another process) may still be writing it, so it is looked for every 20 ms during 10 s.
 * @throws JOB_STORE_FAILED when it never appears.
 */
export async function recordedJob(host: JobWaitHost, id: string): Promise<Job> {
  const deadline = Date.now() + FIRST_JOB_LOOK_MS;
  for (;;) {
    const job = await host.read(id);
    if (job !== undefined) return job;
    if (Date.now() > deadline) {
      throw createError(
        Error,
        ErrorCode.JOB_STORE_FAILED,
        `The job store failed: the idempotency key is held by job ${JSON.stringify(id)}, which was never recorded`,
      );
    }
    await sleep(20, undefined);
  }
}

/**
 * The first job of a repeated idempotency key once it has ended or stopped for approval
 * (`executePlan`'s answer to a replay): a job live here is waited for by its end, any other once
 * it is recorded.
 */
export async function firstJob(host: JobWaitHost, id: string): Promise<Job> {
  if (host.jobs.of(id) === undefined) {
    const recorded = await recordedJob(host, id);
    if (!stillRunning(recorded)) return recorded;
  }
  return (await waitForEnd(host, id, undefined, undefined)) ?? recordedJob(host, id);
}
