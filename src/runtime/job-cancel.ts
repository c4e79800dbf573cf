/**
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
import type { DbosQueue } from './dbos-queue.js';
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
