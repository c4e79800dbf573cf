/**
 * The jobs queued or running in one runtime (docs/api.md, "Queued jobs and cancellation"): what
 * `close()` waits for, the in-process queue every path schedules through (submit, recovery), the
 * cancel of a live job, and the poll for cancels written by other processes on a shared store.
 */
import type { ExecutionCaller } from '../callers/execution-caller.js';
import { describeThrown } from '../errors/describe-value.js';
import { ErrorCode } from '../errors/error-codes.js';
import { createError } from '../errors/warrant-error.js';
import type { Job } from '../jobs/job.js';
import { cancelledJobError } from '../jobs/job.js';
import type { JobStore } from '../jobs/job-store.js';
import { hasCancels } from '../jobs/store-parts.js';
import type { CancelRequest, RunningJob } from '../jobs/transitions.js';
import type { AdmittedPlan } from '../plan/admission.js';
import {
  abortControl,
  recordCancel,
  type ExecutorDependencies,
  type JobControl,
} from './executor.js';
import { JobQueue } from './job-queue.js';
import type { StrandedJobs } from './stranded-jobs.js';

/** How often a runtime running jobs on a shared store looks for cancels written by others. */
export const CANCEL_POLL_MS = 200;

/** A job queued or running in this runtime: what a cancel needs to stop it. */
export interface LiveJob extends JobControl {
  /** While it waits in the queue: what starting it, or recording its cancel, needs. */
  queued:
    | {
        readonly running: RunningJob;
        readonly plan: AdmittedPlan;
        readonly caller: ExecutionCaller | undefined;
      }
    | undefined;
}

export function liveJob(jobId?: string): LiveJob {
  return { controller: undefined, cancel: undefined, jobId, queued: undefined };
}

/** The reason a cancelled job's running step's signal is aborted with. */
function cancelReason(cancel: CancelRequest): Error {
  return createError(Error, ErrorCode.JOB_CANCELLED, cancelledJobError(cancel.reason));
}

/** Where the cancel poll reads: the open store and the executor's dependencies on it. */
export type PollSource = () =>
  { readonly store: JobStore; readonly deps: ExecutorDependencies } | undefined;

export class LiveJobs {
  readonly #live = new Set<LiveJob>();
  /** What waits for a live job to leave (`whenGone`), by job. */
  readonly #leaving = new Map<LiveJob, (() => void)[]>();
  /** Jobs and decisions admitted and not yet ended: `drain()` waits for them to end. */
  #active = 0;
  /** Called when `#active` falls to 0 while `drain()` waits. */
  #drained: (() => void) | undefined;
  readonly #queue: JobQueue;
  readonly #stranded: StrandedJobs;
  readonly #source: PollSource;
  readonly #warn: (line: string) => void;
  /** Polls the store for cancels written by other processes while jobs run here. */
  #cancelPoll: ReturnType<typeof setInterval> | undefined;

  constructor(
    concurrency: number,
    stranded: StrandedJobs,
    source: PollSource,
    warn: (line: string) => void,
  ) {
    this.#queue = new JobQueue(concurrency);
    this.#stranded = stranded;
    this.#source = source;
    this.#warn = warn;
  }

  /** Counts one more job or decision that `drain()` waits for. */
  hold(): void {
    this.#active++;
  }

  /** Counts one down (what `hold()` or `track()` counted). */
  readonly release = (): void => {
    if (--this.#active === 0) this.#drained?.();
  };

  /** A job run that rejected: a job it could not record is kept to be settled (stranded-jobs.ts). */
  readonly #failed = (error: unknown): void => {
    this.#stranded.add(error);
    this.release();
  };

  /** The live job of this id, if one is live here. */
  of(id: string): LiveJob | undefined {
    for (const live of this.#live) if (live.jobId === id) return live;
    return undefined;
  }

  /**
   * Resolves once the live job of this id has left (ended, stopped for approval, cancelled while
   * queued, or given up as stranded); undefined when no job of this id is live here.
   */
  whenGone(id: string): Promise<void> | undefined {
    const live = this.of(id);
    if (live === undefined) return undefined;
    return new Promise((resolve) => {
      const waiting = this.#leaving.get(live);
      if (waiting === undefined) this.#leaving.set(live, [resolve]);
      else waiting.push(resolve);
    });
  }

  /** Takes a job out of the live ones and tells what waits for it; false when it was not in. */
  #remove(live: LiveJob): boolean {
    if (!this.#live.delete(live)) return false;
    const waiting = this.#leaving.get(live);
    if (waiting !== undefined) {
      this.#leaving.delete(live);
      for (const resolve of waiting) resolve();
    }
    return true;
  }

  /**
   * Counts a job as live; on a store shared with other processes, polls it for their cancels
   * while any job is live here (the poll stops itself once none is).
   */
  enter(live: LiveJob): void {
    this.#live.add(live);
    const store = this.#source()?.store;
    if (this.#cancelPoll !== undefined || store === undefined || !hasCancels(store)) return;
    this.#cancelPoll = setInterval(() => void this.#pollCancels(), CANCEL_POLL_MS);
    this.#cancelPoll.unref();
  }

  /** A live job ended: it leaves, and what `hold()` counted for it is released. */
  leave(live: LiveJob): void {
    if (this.#remove(live)) this.release();
  }

  /**
   * Counts a job or decision until it settles (its rejection stays its caller's); a job of
   * `executePlan` leaves the live jobs then too, in the same handlers (one pair per job).
   */
  track(running: Promise<Job>, live?: LiveJob): Promise<Job> {
    this.#active++;
    if (live === undefined) running.then(this.release, this.#failed);
    else
      running.then(
        () => {
          this.#remove(live);
          this.release();
        },
        (error: unknown) => {
          this.#remove(live);
          this.#failed(error);
        },
      );
    return running;
  }

  /**
   * The one way a job is scheduled in this process (a submitted job, a recovered one): it is live
   * from now, waits its turn in the queue (at most `queue.concurrency` run at once, in order),
   * and leaves once its run settles; a run that could not record its end is kept as stranded.
   * The caller has counted it with `hold()`.
   */
  schedule(live: LiveJob, start: () => Promise<Job>): void {
    this.enter(live);
    this.#queue.add(live.jobId as string, () => {
      live.queued = undefined;
      const ran = start();
      ran.then(
        () => this.leave(live),
        (error: unknown) => {
          this.#stranded.add(error);
          this.leave(live);
        },
      );
      return ran;
    });
  }

  /**
   * Stops a job of this runtime: a queued one is taken out of the queue and recorded cancelled
   * (resolves that job); a running one has its signal aborted (resolves undefined: the executor
   * records the cancel once the step settles).
   */
  async cancel(
    live: LiveJob,
    cancel: CancelRequest,
    deps: ExecutorDependencies,
  ): Promise<Job | undefined> {
    if (live.cancel !== undefined) return undefined;
    live.cancel = cancel;
    abortControl(live, cancelReason(cancel));
    const queued = live.queued;
    if (queued === undefined || !this.#queue.remove(live.jobId as string)) return undefined;
    try {
      return await recordCancel(queued.running, cancel, deps, undefined);
    } finally {
      this.leave(live);
    }
  }

  async #pollCancels(): Promise<void> {
    const source = this.#source();
    const store = source?.store;
    if (
      this.#live.size === 0 ||
      source === undefined ||
      store === undefined ||
      !hasCancels(store)
    ) {
      this.stopPolling();
      return;
    }
    const ids: string[] = [];
    for (const live of this.#live)
      if (live.jobId !== undefined && live.cancel === undefined) ids.push(live.jobId);
    if (ids.length === 0) return;
    try {
      for (const request of await store.cancelRequests(ids)) {
        const live = this.of(request.jobId);
        if (live !== undefined)
          await this.cancel(live, { by: request.by, reason: request.reason }, source.deps);
      }
    } catch (error) {
      // A failed poll is tried again on the next tick; the job's own writes report store faults.
      this.#warn(`warrant: polling for cancels failed: ${describeThrown(error)}`);
    }
  }

  stopPolling(): void {
    clearInterval(this.#cancelPoll);
    this.#cancelPoll = undefined;
  }

  /** Resolves once every job and decision counted here has ended (none starts meanwhile). */
  async drain(): Promise<void> {
    while (this.#active > 0) {
      await new Promise<void>((resolve) => {
        this.#drained = resolve;
      });
    }
    this.#drained = undefined;
  }
}
