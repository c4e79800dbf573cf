/**
 * The two entries that make jobs (docs/api.md, "runtime.executePlan", "runtime.submitPlan"):
 * capture and admit once (the runtime's one `admit`), claim an idempotency key when the plan or
 * the options carry one, then run the job in this runtime's live jobs, or record it `queued` and
 * schedule it (on the DBOS queue with that engine). A repeated key answers the first job.
 */
import type { ExecutionCaller } from '../authorization/authorizer.js';
import { snapshotCaller } from '../callers/caller-snapshot.js';
import { describeThrown } from '../errors/describe-value.js';
import { ErrorCode } from '../errors/error-codes.js';
import { createError } from '../errors/warrant-error.js';
import type { Job } from '../jobs/job.js';
import type { RunningJob } from '../jobs/transitions.js';
import type { AdmittedPlan } from '../plan/admission.js';
import type { ExecutionPlan } from '../plan/execution-plan.js';
import type { DbosQueue } from './dbos-queue.js';
import {
  readApproval,
  readCaller,
  readOnReplay,
  type ExecutePlanOptions,
} from './execute-options.js';
import {
  commitWhileQueued,
  executeAdmittedPlan,
  queueAdmittedPlan,
  runQueuedJob,
  type ExecutorDependencies,
} from './executor.js';
import { previewWarrant, warrantChange, type PlanWarrantStart } from './plan-warrant.js';
import { claimKey } from './idempotency.js';
import { readSubmitOptions, type SubmitPlanOptions } from './job-options.js';
import { firstJob, recordedJob, type JobWaitHost } from './job-waits.js';
import { liveJob, type LiveJobs } from './live-jobs.js';
import type { RuntimeStore } from './runtime-store.js';

/** What `submitPlan` resolves: the job's id, and whether it is the first job of a repeated key. */
export interface SubmittedJob {
  readonly jobId: string;
  /** True when an idempotency key was repeated with the same plan: nothing new was queued. */
  readonly replayed: boolean;
}

/** What making jobs needs of its runtime. */
export interface SubmissionHost {
  readonly store: RuntimeStore;
  readonly jobs: LiveJobs;
  readonly waits: JobWaitHost;
  /** With `queue: { engine: 'dbos' }`: submitted jobs go on the DBOS queue. */
  readonly dbos: DbosQueue | undefined;
  readonly idempotencyTtlMs: number;
  /** @throws RUNTIME_CLOSED once the runtime is closed. */
  readonly assertOpen: () => void;
  /** The runtime's one admission (capture, then admit against what is registered now). */
  readonly admit: (plan: ExecutionPlan) => AdmittedPlan;
  /** The runtime has the `approvals` option: `approval: 'plan'` is possible. */
  readonly approvals: boolean;
}

type CallerWithId = ExecutionCaller & { id: string };

/** Executor dependencies, and what claiming an idempotency key found. */
interface ClaimedDependencies extends ExecutorDependencies {
  readonly jobId?: string;
  /** The key was used for the same plan: `jobId` is the first job's. */
  readonly replayed?: boolean;
}

/**
 * `executePlan`: captures, admits and runs a plan; the job, failed or completed. Not an async
 * function: one promise per job, the executor's own (docs/decisions.md, "Allocation on the hot
 * path"); what throws before the job exists still rejects.
 */
export function executeSubmission(
  host: SubmissionHost,
  plan: ExecutionPlan,
  options: ExecutePlanOptions,
): Promise<Job> {
  let job: Promise<Job>;
  const live = liveJob();
  try {
    host.assertOpen();
    const caller = snapshotCaller(readCaller(options));
    const onReplay = readOnReplay(options);
    const underWarrant = readApproval(options, host.approvals) === 'plan';
    const admitted = host.admit(plan);
    // A plan warrant previews every step first (docs/api.md, "Plan warrants"), then runs.
    const execute = (ready: ExecutorDependencies, jobId?: string): Promise<Job> =>
      underWarrant
        ? previewWarrant(admitted, caller, ready).then((warrant) =>
            executeAdmittedPlan(admitted, caller, ready, live, jobId, warrant),
          )
        : executeAdmittedPlan(admitted, caller, ready, live, jobId);
    // The store opens only for an admitted plan: a refused one creates no file and an
    // unopenable store cannot hide why a plan was refused.
    // A plan with an idempotency key, from a caller with an id, claims its key first.
    const deps =
      admitted.idempotencyKey !== undefined && caller?.id !== undefined
        ? claimFor(host, admitted, caller as CallerWithId, underWarrant ? 'plan' : 'steps')
        : host.store.dependencies();
    if (deps instanceof Promise) {
      job = deps.then((ready: ClaimedDependencies) => {
        // A repeated key: the first job, nothing run.
        if (ready.replayed === true) {
          onReplay?.(ready.jobId as string);
          return firstJob(host.waits, ready.jobId as string);
        }
        // Live under its id from now, so that a repeat of its key waits for its end.
        live.jobId = ready.jobId;
        host.jobs.enter(live);
        return execute(ready, ready.jobId);
      });
    } else {
      host.jobs.enter(live);
      job = execute(deps);
    }
  } catch (error) {
    return Promise.reject(error as Error);
  }
  return host.jobs.track(job, live);
}

/**
 * The dependencies of a job whose plan has an idempotency key, once the key is claimed: with
 * the claimed job id, or the first job when the key was used for the same plan already.
 */
async function claimFor(
  host: SubmissionHost,
  admitted: AdmittedPlan,
  caller: CallerWithId,
  approval: 'steps' | 'plan',
): Promise<ClaimedDependencies> {
  const deps = await host.store.dependencies();
  const key = admitted.idempotencyKey as string;
  const claim = await claimKey(deps.store, caller, key, admitted, host.idempotencyTtlMs, approval);
  return { ...deps, jobId: claim.jobId, replayed: claim.replayed };
}

/**
 * `submitPlan`: admits like `executePlan`, records the job `queued` and resolves once it is
 * recorded; it runs later, in submission order (or on a worker with the dbos engine).
 */
export async function submitQueued(
  host: SubmissionHost,
  plan: ExecutionPlan,
  options: SubmitPlanOptions | undefined,
): Promise<SubmittedJob> {
  host.assertOpen();
  const { caller, idempotencyKey, approval } = readSubmitOptions(options, host.approvals);
  let admitted = host.admit(plan);
  const deps = await host.store.dependencies();
  const key = idempotencyKey ?? admitted.idempotencyKey;
  let claimed: string | undefined;
  if (key !== undefined && caller?.id !== undefined) {
    const claim = await claimKey(
      deps.store,
      caller as CallerWithId,
      key,
      admitted,
      host.idempotencyTtlMs,
      approval === 'plan' ? 'plan' : 'steps',
    );
    if (claim.replayed) {
      // Resolved once recorded, as a new job is: its submitter may still be writing it.
      await recordedJob(host.waits, claim.jobId);
      return { jobId: claim.jobId, replayed: true };
    }
    claimed = claim.jobId;
    if (key !== admitted.idempotencyKey) admitted = { ...admitted, idempotencyKey: key };
  }
  const queuedPlan = admitted;
  // A plan warrant is previewed at submission, before the job runs anywhere.
  const warrant = approval === 'plan' ? await previewWarrant(queuedPlan, caller, deps) : undefined;
  host.jobs.hold();
  let running: RunningJob;
  try {
    running = await queueAdmittedPlan(queuedPlan, caller, deps, claimed);
    if (warrant !== undefined && (await settleWarrant(running, warrant, queuedPlan, deps))) {
      host.jobs.release();
      return { jobId: running.job.id, replayed: false };
    }
  } catch (error) {
    host.jobs.release();
    throw error;
  }
  const jobId = running.job.id;
  if (host.dbos !== undefined) {
    // A worker of any process runs it (docs/api.md, "Workers").
    try {
      await host.dbos.enqueue(jobId);
    } catch (error) {
      throw createError(
        Error,
        ErrorCode.JOB_STORE_FAILED,
        `The job store failed: job ${jobId} is recorded queued and could not be put on the queue (a worker's sweep queues it): ${describeThrown(error)}`,
        error,
      );
    } finally {
      host.jobs.release();
    }
    return { jobId, replayed: false };
  }
  const live = liveJob(jobId);
  live.queued = { running, plan: queuedPlan, caller };
  host.jobs.schedule(live, () => runQueuedJob(running, queuedPlan, caller, deps, live));
  return { jobId, replayed: false };
}

/**
 * Records what a queued job's preview decided (refused, or waiting for its plan request) while it
 * is still queued; false when it runs as usual. A job a worker took meanwhile runs as usual, each
 * step authorized at its turn.
 */
async function settleWarrant(
  running: RunningJob,
  warrant: PlanWarrantStart,
  plan: AdmittedPlan,
  deps: ExecutorDependencies,
): Promise<boolean> {
  const change = warrantChange(running, warrant, plan, deps);
  if (change === undefined) return false;
  await commitWhileQueued(running, change, deps);
  return true;
}
