/**
 * Taking up a job whose owner is gone (docs/api.md, "Recovery"). The record is read first and
 * decides: a queued job is queued again; an executing one goes on from its first step not
 * completed, authorized again (never a stored allow). A step started and never ended may have
 * run: it is invoked again only when its capability declares `retry: { idempotent: true }` (with
 * the same `context.idempotencyKey`); otherwise it is `interrupted`, and with approvals on it
 * waits for an approval (`reason: "interrupted: may have run"`), else the job fails with
 * STEP_INTERRUPTED. A job with a recorded cancel never starts a step again. A plan that can no
 * longer be admitted (a capability gone or at another version) fails the job, with why.
 */
import type { ExecutionCaller } from '../authorization/authorizer.js';
import type { RegisteredCapability } from '../capabilities/inventory.js';
import { snapshotCaller } from '../callers/caller-snapshot.js';
import { describeThrown } from '../errors/describe-value.js';
import { ErrorCode } from '../errors/error-codes.js';
import { isoNow } from '../jobs/clock.js';
import type { Job, JobEvent, JobStep } from '../jobs/job.js';
import { recordValue } from '../jobs/recorded-value.js';
import {
  awaitApproval,
  cancelJob,
  failJob,
  interruptStep,
  joinChanges,
  recoverJob,
  type CancelRequest,
  type RunningJob,
} from '../jobs/transitions.js';
import type { AdmittedPlan } from '../plan/admission.js';
import { recordedApproval } from './approval-edits.js';
import { admitRecorded, loadRunningJob } from './stored-job.js';
import { commitChange, type ExecutorDependencies, type StepApproval } from './executor.js';

/** The reason of the approval an interrupted step asks for. */
export const INTERRUPTED_REASON = 'interrupted: may have run';

/** What recovering needs of the runtime. */
export interface RecoveryHost {
  readonly deps: ExecutorDependencies;
  readonly lookup: (name: string) => RegisteredCapability | undefined;
  /** The recovering owner's id (`job.recovered { by }`). */
  readonly by: string;
  /** The id of the worker taking it up, if a worker is (`job.recovered { worker }`). */
  readonly worker?: string | undefined;
}

/** What a recovered job does next. */
export type Recovery =
  /** Nothing runs: the job ended (failed, cancelled) or waits for an approval. */
  | { readonly kind: 'settled'; readonly job: Job }
  /** A queued job: queued again, it starts as any queued job does. */
  | {
      readonly kind: 'queued';
      readonly running: RunningJob;
      readonly plan: AdmittedPlan;
      readonly caller: ExecutionCaller | undefined;
    }
  /** An executing job: its steps from `from` on run through the executor. */
  | {
      readonly kind: 'resume';
      readonly running: RunningJob;
      readonly plan: AdmittedPlan;
      readonly from: number;
      readonly results: unknown[];
      readonly caller: ExecutionCaller | undefined;
      readonly approval: StepApproval | undefined;
    };

/** The STEP_INTERRUPTED error of a job whose step may have run. */
export function interruptedError(step: JobStep): string {
  return `${ErrorCode.STEP_INTERRUPTED}: step ${JSON.stringify(step.id)} (${step.capability}) may have run before its process ended; it is not invoked again (its capability is not declared retry: { idempotent: true })`;
}

/** The index of the step that was running (started, not ended), if any. */
function runningStep(record: Job): number | undefined {
  const index = record.steps.findIndex(
    (step) => step.status === 'running' || step.status === 'interrupted',
  );
  return index < 0 ? undefined : index;
}

/**
 * The plan admitted again against what is registered now; a step decided before at another
 * version than the one registered now fails it too (an approval or a start bound that version).
 */
function admitAgain(record: Job, lookup: RecoveryHost['lookup']): AdmittedPlan {
  const plan = admitRecorded(record, lookup);
  for (const step of record.steps) {
    const decided = step.decision?.capabilityVersion;
    const registered = lookup(step.capability)?.version;
    if (step.status !== 'completed' && decided !== undefined && decided !== registered) {
      throw new Error(
        `Capability version changed since the job ran: ${step.capability}@${decided} is now ${String(registered)}`,
      );
    }
  }
  return plan;
}

/**
 * True when this runtime can take up the job as recorded: its plan is admitted again against
 * what is registered now, each step decided before at the version registered now. A runtime
 * that looks for gone owners while it runs takes only such jobs (docs/api.md, "Recovery").
 */
export function recoverable(record: Job, lookup: RecoveryHost['lookup']): boolean {
  try {
    admitAgain(record, lookup);
    return true;
  } catch {
    return false;
  }
}

/**
 * The grant recorded for a step approved and never started (its last event `approval.granted`):
 * only `context.approval` for the new decision (and an approver's edit). The approver is known
 * by id only.
 */
function grantBefore(record: Job, index: number): StepApproval | undefined {
  const step = record.steps[index] as JobStep;
  let last: JobEvent | undefined;
  for (const event of record.events) if (event.data?.stepId === step.id) last = event;
  if (last?.type !== 'approval.granted' || step.decision === undefined) return undefined;
  return recordedApproval(record, index, last);
}

/**
 * Takes up one job claimed from a gone owner: records `job.recovered { by }`, then decides what
 * happens from the record. Resolves undefined when the job is no longer queued or executing.
 */
export async function recoverStoredJob(
  host: RecoveryHost,
  jobId: string,
  cancel: CancelRequest | undefined,
): Promise<Recovery | undefined> {
  const { deps } = host;
  const running = await loadRunningJob(deps, jobId);
  if (running === undefined) return undefined;
  const { record } = running;
  const queued = record.status === 'queued';
  if (!queued && record.status !== 'executing') return undefined;
  await commitChange(running, recoverJob(running, isoNow(), host.by, host.worker), deps);
  const started = runningStep(record);
  if (cancel !== undefined) {
    // Cancelled before the crash: no step starts again.
    await commitChange(running, cancelJob(running, isoNow(), cancel, started), deps);
    return { kind: 'settled', job: running.job };
  }
  let plan: AdmittedPlan;
  try {
    plan = admitAgain(record, host.lookup);
  } catch (error) {
    const at = isoNow();
    const message = `The recovered job can no longer run: ${describeThrown(error)}`;
    const failed = failJob(running, at, message);
    const change =
      started === undefined ? failed : joinChanges(interruptStep(running, started, at), failed);
    await commitChange(running, change, deps);
    return { kind: 'settled', job: running.job };
  }
  const caller = snapshotCaller(record.caller);
  if (queued) return { kind: 'queued', running, plan, caller };
  const from = record.steps.findIndex((step) => step.status !== 'completed');
  // Every step completed and the job not: the record holds no such state (one write ends both).
  if (from < 0) return { kind: 'settled', job: running.job };
  const results = record.steps.slice(0, from).map((step) => step.result);
  if (started === undefined || plan.steps[started]?.capability.retry !== undefined) {
    // Never started (maybe approved), or idempotent: it runs again, authorized again.
    const approval = started === undefined ? grantBefore(record, from) : undefined;
    return { kind: 'resume', running, plan, from, results, caller, approval };
  }
  await commitChange(running, interrupted(running, started, plan, deps), deps);
  return { kind: 'settled', job: running.job };
}

/**
 * The change of a step that may have run: `interrupted`, then with approvals on an approval
 * request for it, else the job fails with STEP_INTERRUPTED.
 */
function interrupted(
  running: RunningJob,
  index: number,
  plan: AdmittedPlan,
  deps: ExecutorDependencies,
) {
  const at = isoNow();
  const stopped = interruptStep(running, index, at);
  const step = running.record.steps[index] as JobStep;
  if (deps.approvals === undefined)
    return joinChanges(stopped, failJob(running, at, interruptedError(step)));
  // Asked about the very input the step was allowed with, as recorded.
  const resolved = Object.hasOwn(step, 'resolvedInput');
  const recorded = recordValue(resolved ? step.resolvedInput : step.input, 'input');
  const live = running.job.steps[index] as JobStep;
  const capability = (plan.steps[index] as AdmittedPlan['steps'][number]).capability;
  const expiresAt = new Date(Date.parse(at) + deps.approvals.ttlMs).toISOString();
  const requested = awaitApproval(running, index, {
    status: 'awaiting_approval',
    risk: capability.risk,
    expiresAt,
    decided: {
      outcome: 'approval_required',
      reason: INTERRUPTED_REASON,
      authorizer: undefined,
      capabilityVersion: capability.version,
      at,
      input: resolved ? live.resolvedInput : live.input,
      recorded,
      resolved,
    },
  });
  // One step row written once: both changes name the same step.
  return { ...requested, events: [...stopped.events, ...requested.events] };
}
