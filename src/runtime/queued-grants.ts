/**
 * Jobs an approval put back on the queue (docs/api.md, "Workers"): with a queue engine, a granted
 * job is recorded `queued` (`approval.granted { queued: true }`) and runs on a worker, never in
 * the process that decided. The worker (or a runtime recovering it) starts it again from the
 * approved step, with the recorded grant as `context.approval`, through the one step path.
 */
import type { Job, JobEvent, JobStep } from '../jobs/job.js';
import { recordedApproval, type RecordedApproval } from './approval-edits.js';

/** Where a queued job starts: from `from`, the steps before it completed with `results`. */
export interface QueuedResume {
  readonly from: number;
  readonly results: unknown[];
  /** The approval granted to step `from` (as the executor's `StepApproval`). */
  readonly approval: RecordedApproval;
}

/** The index in `record.events` of its last `approval.granted { queued: true }`, or -1. */
function lastQueuedGrant(record: Job): number {
  for (let index = record.events.length - 1; index >= 0; index--) {
    const event = record.events[index] as JobEvent;
    if (event.type === 'approval.granted' && event.data?.queued === true) return index;
  }
  return -1;
}

/**
 * Where a queued job starts: undefined for a job that never started (from its first step, as
 * submitted); for one an approval put back on the queue, the approved step (its last event the
 * grant) with the results of the steps before it.
 */
export function queuedResume(record: Job): QueuedResume | undefined {
  const at = lastQueuedGrant(record);
  if (at < 0) return undefined;
  const granted = record.events[at] as JobEvent;
  const from = record.steps.findIndex((step) => step.id === granted.data?.stepId);
  const step = record.steps[from] as JobStep | undefined;
  const decision = step?.decision;
  // The grant is the step's last event: nothing of it ran since.
  const later = record.events.slice(at + 1).some((event) => event.data?.stepId === step?.id);
  if (step === undefined || decision === undefined || later || step.status !== 'pending')
    return undefined;
  return {
    from,
    results: record.steps.slice(0, from).map((done) => done.result),
    approval: recordedApproval(record, from, granted),
  };
}

/**
 * The id of the queue entry (a DBOS workflow) that runs a queued job: the job id for a job as
 * submitted; for one an approval put back, the job id and the position of that grant's event
 * (an entry for one job and one grant is made once, however often it is queued).
 */
export function queueEntryId(record: Job): string {
  const at = lastQueuedGrant(record);
  return at < 0 ? record.id : `${record.id}:granted:${at}`;
}
