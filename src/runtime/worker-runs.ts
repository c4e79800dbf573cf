/**
 * The jobs a worker dequeues (docs/api.md, "Workers"): each taken up as its record says, through
 * the same executor step as any job. A queued one is taken by a compare-and-swap on its owner
 * and starts by a conditional write (a cancel recorded first wins); an executing one is left to
 * the recovery rule.
 */
import { snapshotCaller } from '../callers/caller-snapshot.js';
import { capabilityInventory } from '../capabilities/inventory.js';
import { describeThrown } from '../errors/describe-value.js';
import { isoNow } from '../jobs/clock.js';
import type { Job } from '../jobs/job.js';
import type { JobStore } from '../jobs/job-store.js';
import { hasCancels, hasQueue } from '../jobs/store-parts.js';
import { failJob } from '../jobs/transitions.js';
import type { AdmittedPlan } from '../plan/admission.js';
import { commitWhileQueued, runDequeuedJob, type ExecutorDependencies } from './executor.js';
import { liveJob, type LiveJobs } from './live-jobs.js';
import {
  readWorkerOptions,
  type DbosQueue,
  type Worker,
  type WorkerSettings,
} from './dbos-queue.js';
import { ErrorCode } from '../errors/error-codes.js';
import { createError } from '../errors/warrant-error.js';
import type { Orphans } from './orphans.js';
import { queueEntryId } from './queued-grants.js';
import { admitRecorded, loadRunningJob } from './stored-job.js';

/** What running a dequeued job needs of its runtime. */
export interface WorkerHost {
  readonly jobs: LiveJobs;
  readonly orphans: Orphans;
  readonly waitForJob: (id: string) => Promise<Job | undefined>;
}

/** What `runtime.startWorker()` needs of its runtime, beside a dequeued job's needs. */
export interface WorkerStart extends WorkerHost {
  /** The DBOS queue: undefined without `queue: { engine: 'dbos' }`. */
  readonly queue: DbosQueue | undefined;
  readonly concurrency: number;
  readonly deps: () => ExecutorDependencies | Promise<ExecutorDependencies>;
  readonly log: (line: string) => void;
}

/**
 * `runtime.startWorker(options)` (docs/api.md, "Workers").
 * @throws RUNTIME_OPTIONS_INVALID without the dbos engine or for malformed options.
 */
export async function startWorkerOf(start: WorkerStart, options: unknown): Promise<Worker> {
  if (start.queue === undefined) {
    throw createError(
      TypeError,
      ErrorCode.RUNTIME_OPTIONS_INVALID,
      "startWorker() needs queue: { engine: 'dbos' } (and a PostgreSQL store)",
    );
  }
  const settings = readWorkerOptions(options, start.concurrency);
  return startQueueWorker(start, start.queue, settings, await start.deps(), start.log);
}

/**
 * Starts this process's worker on the DBOS queue (docs/api.md, "Workers"): it takes up the jobs
 * of gone owners at start and on every sweep, whether or not their workflows still run, and runs
 * each job it dequeues as its record says.
 */
export async function startQueueWorker(
  host: WorkerHost,
  queue: DbosQueue,
  settings: WorkerSettings,
  deps: ExecutorDependencies,
  log: (line: string) => void,
): Promise<Worker> {
  host.orphans.worker = settings.id;
  const recover = () =>
    host.orphans.recover(deps.store).catch((error: unknown) => {
      log(`recovery failed: ${describeThrown(error)}`);
    });
  await recover();
  return queue.startWorker(
    settings,
    (jobId) => runDequeued(host, deps, jobId),
    async () => {
      await recover();
      // Queued for a while (submitted, or put back by an approval: its last write) and maybe
      // never put on the queue: queued again under its entry id (a second time does nothing).
      const cutoff = Date.now() - 5_000;
      const jobs = await deps.store.list({ status: 'queued', limit: 1_000 });
      return jobs
        .filter((job) => Date.parse(job.updatedAt) < cutoff)
        .map((job) => ({ jobId: job.id, entryId: queueEntryId(job) }));
    },
    log,
  );
}

/**
 * Takes up one job a worker dequeued, as its record says, and resolves its status then: a
 * queued one runs here through the executor; any other is left as it is (a finished one,
 * one awaiting approval, one a live runtime runs).
 */
export async function runDequeued(
  host: WorkerHost,
  deps: ExecutorDependencies,
  jobId: string,
): Promise<string> {
  const { store } = deps;
  const stored = await store.get(jobId);
  if (stored === undefined) return 'unknown';
  if (stored.status === 'executing') return takeUpExecuting(host, store, jobId);
  if (stored.status !== 'queued') return stored.status;
  // Taken by a compare-and-swap on its owner: another worker, or a recovering runtime, that
  // took it first runs it (invariant "one owner at a time", docs/decisions.md).
  if (hasQueue(store) && !(await store.takeQueued(jobId))) return 'queued';
  // The record read above: a change since (a cancel) fails the conditional write that starts it.
  const running = await loadRunningJob(deps, jobId, stored);
  if (running === undefined) return 'unknown';
  if (running.record.status !== 'queued') return running.record.status;
  let plan: AdmittedPlan;
  try {
    plan = admitRecorded(running.record, (name) => capabilityInventory().get(name));
  } catch (error) {
    // Queued against other capabilities (another deployment): it fails, saying why (unless a
    // cancel was recorded first: the writes that end a queued job are conditional).
    const message = `The queued job cannot run on this worker: ${describeThrown(error)}`;
    if (await commitWhileQueued(running, failJob(running, isoNow(), message), deps))
      return running.job.status;
    return (await store.get(jobId))?.status ?? 'unknown';
  }
  const caller = snapshotCaller(running.record.caller);
  const live = liveJob(jobId);
  // A cancel written while it was queued: it never starts (runDequeuedJob records it).
  const [cancelled] = hasCancels(store) ? await store.cancelRequests([jobId]) : [];
  if (cancelled !== undefined) live.cancel = { by: cancelled.by, reason: cancelled.reason };
  host.jobs.hold();
  host.jobs.enter(live);
  try {
    // Undefined: a cancel from another process was recorded first; the job ran nothing here.
    const ran = await runDequeuedJob(running, plan, caller, deps, live);
    return ran?.status ?? (await store.get(jobId))?.status ?? 'unknown';
  } finally {
    host.jobs.leave(live);
  }
}

/**
 * A job already executing when its workflow reaches this worker: DBOS resumed it because its
 * worker is gone, or it runs on a live runtime. Recovery takes up the jobs of gone owners (this
 * one included, if its owner is gone); one that now runs here is awaited.
 */
async function takeUpExecuting(host: WorkerHost, store: JobStore, jobId: string): Promise<string> {
  await host.orphans.recover(store);
  if (host.jobs.of(jobId) === undefined) return (await store.get(jobId))?.status ?? 'unknown';
  return (await host.waitForJob(jobId))?.status ?? 'unknown';
}
