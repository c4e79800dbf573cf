/**
 * Cancelling a job (docs/api.md, "runtime.cancelJob"): the caller checked against the cancel
 * policy within the tenant, then the job cancelled where it is: running here, awaiting an
 * approval, queued on the DBOS queue, or running in another process (a durable request it polls).
 * Recording a cancel of a job that is not running in this runtime (docs/api.md,
 * "runtime.cancelJob", "Workers"): the durable cancel request every owner polls, a job awaiting
 * approval (unless a decision consumed its request first), and a queued job on the DBOS queue.
 */
import { describeThrown } from '../errors/describe-value.js';
import { ErrorCode } from '../errors/error-codes.js';
import { createError } from '../errors/warrant-error.js';
import { isoNow } from '../jobs/clock.js';
import type { Job } from '../jobs/job.js';
import { hasCancels } from '../jobs/store-parts.js';
import { cancelJob as cancelTransition, type CancelRequest } from '../jobs/transitions.js';
import type { ExecutionCaller } from '../authorization/authorizer.js';
import { isFinished } from '../jobs/job.js';
import { isPostgresStore } from '../stores/open-store.js';
import { CANCEL_SCOPE, mayCancel } from './cancel-policy.js';
import { DbosQueue } from './dbos-queue.js';
import type { LiveJobs } from './live-jobs.js';
import type { CancelPolicy } from './runtime-options.js';
import type { RuntimeStore } from './runtime-store.js';
import { commitWhileQueued, recordCancel, type ExecutorDependencies } from './executor.js';
import { loadRunningJob } from './stored-job.js';

/**
 * A queued job on the DBOS queue (docs/api.md, "Workers"): its workflow is cancelled, so no
 * worker dequeues it, and its cancel recorded now, by a conditional write that a worker
 * starting the job at that moment may win instead (that worker then sees the cancel within
 * 1 s, as for any job it runs). Resolves the cancelled job, or undefined when the job is on no
 * queue or was no longer queued.
 */
export async function cancelOnQueue(
  deps: ExecutorDependencies,
  id: string,
  cancel: CancelRequest,
  queue: DbosQueue | undefined,
): Promise<Job | undefined> {
  if (queue === undefined) return undefined;
  let onQueue: boolean;
  try {
    onQueue = await queue.cancel(id);
  } catch (error) {
    // Its cancel is written: a worker that dequeues it records it and runs nothing.
    deps.logger.warn(
      `warrant: cancelling the workflow of ${id} failed: ${describeThrown(error)}`,
      {},
    );
    return undefined;
  }
  // Not on the queue: queued in another process's own queue, which sees the cancel.
  if (!onQueue) return undefined;
  const running = await loadRunningJob(deps, id);
  if (running?.record.status !== 'queued') return undefined;
  const change = cancelTransition(running, isoNow(), cancel);
  return (await commitWhileQueued(running, change, deps)) ? running.job : undefined;
}

/** Writes the cancel request, so that any process running the job sees it within 1 s. */
export async function writeCancel(
  deps: ExecutorDependencies,
  jobId: string,
  cancel: CancelRequest,
): Promise<void> {
  const stored: Record<string, unknown> = { jobId, at: isoNow() };
  if (cancel.by !== undefined) stored.by = cancel.by;
  if (cancel.reason !== undefined) stored.reason = cancel.reason;
  try {
    if (hasCancels(deps.store))
      await deps.store.requestCancel(stored as { jobId: string; at: string });
  } catch (error) {
    throw createError(
      Error,
      ErrorCode.JOB_STORE_FAILED,
      `The job store failed: ${describeThrown(error)}`,
      error,
    );
  }
}

/** Cancels a job awaiting approval, unless a decision consumed its request first. */
export async function cancelAwaiting(
  deps: ExecutorDependencies,
  id: string,
  cancel: CancelRequest,
): Promise<Job | undefined> {
  const running = await loadRunningJob(deps, id);
  const index =
    running?.record.steps.findIndex((step) => step.status === 'awaiting_approval') ?? -1;
  if (running === undefined || index < 0) return undefined;
  try {
    return await recordCancel(running, cancel, deps, index);
  } catch (error) {
    const cause = (error as { cause?: { code?: unknown } } | null)?.cause;
    if (cause?.code === ErrorCode.APPROVAL_NOT_PENDING) return undefined;
    throw error;
  }
}

/**
 * The DBOS queue a queued job may wait on: the engine's, or, on a PostgreSQL store without the
 * dbos engine, a client made on the first cancel of a job queued elsewhere, only to cancel its
 * workflow.
 */
export class CancelQueues {
  readonly #engine: DbosQueue | undefined;
  readonly #store: string | undefined;
  #opened: DbosQueue | undefined;

  constructor(engine: DbosQueue | undefined, store: string | undefined) {
    this.#engine = engine;
    this.#store = store;
  }

  queue(): DbosQueue | undefined {
    if (this.#engine !== undefined) return this.#engine;
    if (!isPostgresStore(this.#store)) return undefined;
    return (this.#opened ??= new DbosQueue(this.#store as string));
  }

  /** Closes the client opened to cancel (the engine's is the runtime's to close). */
  async close(): Promise<void> {
    await this.#opened?.close();
  }
}

/** What cancelling needs of its runtime. */
export interface CancelHost {
  readonly store: RuntimeStore;
  readonly jobs: LiveJobs;
  readonly policy: CancelPolicy | undefined;
  readonly queues: CancelQueues;
}

/**
 * Cancels a job as `caller` (docs/api.md, "runtime.cancelJob"); resolves once the cancel is
 * recorded, with the job as it stands, undefined for an unknown id.
 * @throws CANCEL_FORBIDDEN for a caller that is not the submitter and that the policy does not
 * allow within the job's tenant.
 */
export async function cancelAs(
  host: CancelHost,
  id: string,
  caller: ExecutionCaller,
  reason: string | undefined,
): Promise<Job | undefined> {
  const deps = await host.store.dependencies();
  const job = await deps.store.get(id);
  if (job === undefined) return undefined;
  if (!(await mayCancel(caller, job, host.policy))) {
    throw createError(
      Error,
      ErrorCode.CANCEL_FORBIDDEN,
      `Caller ${JSON.stringify(caller.id ?? null)} may not cancel job ${JSON.stringify(id)}: only its submitter, or a caller of its tenant that cancelPolicy allows (default: one holding the scope ${CANCEL_SCOPE})`,
    );
  }
  if (isFinished(job)) return job;
  const cancel: CancelRequest = { by: caller.id, reason };
  const live = host.jobs.of(id);
  if (live !== undefined) {
    await writeCancel(deps, id, cancel);
    return (await host.jobs.cancel(live, cancel, deps)) ?? (await deps.store.get(id));
  }
  if (job.status === 'awaiting_approval') {
    const done = await cancelAwaiting(deps, id, cancel);
    if (done !== undefined) return done;
  }
  // Queued or running in another process on this store: it sees the cancel within 1 s.
  await writeCancel(deps, id, cancel);
  if (job.status === 'queued') {
    const cancelled = await cancelOnQueue(deps, id, cancel, host.queues.queue());
    if (cancelled !== undefined) return cancelled;
  }
  return deps.store.get(id);
}
