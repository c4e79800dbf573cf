/**
 * Taking a stored job up again (docs/api.md, "Recovery", "Approvals", "Workers"): the record as a
 * running job, and its plan admitted again against what is registered now. Every path that
 * resumes a job (an approval, recovery, a queued job, a worker's job) starts here, then goes
 * through the executor's one step path.
 */
import type { RegisteredCapability } from '../capabilities/inventory.js';
import type { Job, JobStep } from '../jobs/job.js';
import type { RunningJob } from '../jobs/transitions.js';
import { admitPlan, type AdmittedPlan } from '../plan/admission.js';
import { captureSubmission } from '../plan/capture.js';
import { KNOWN_PLAN_VERSIONS } from '../plan/plan-versions.js';
import { heldRecord } from '../stores/memory/memory-store.js';
import type { ExecutorDependencies } from './executor.js';

/** Finds a registered capability by name (the process-global inventory, or a test's). */
export type CapabilityLookup = (name: string) => RegisteredCapability | undefined;

/**
 * A stored job as a running job: the record as stored, and a detached copy as the job face.
 * `stored` is a record the caller has just read from the store (a worker's dequeued job), used
 * instead of reading it again; whatever changed it since is refused by the conditional write
 * that starts it (JobStore.updateWhileQueued).
 */
export async function loadRunningJob(
  deps: ExecutorDependencies,
  jobId: string,
  stored?: Job,
): Promise<RunningJob | undefined> {
  // The memory store hands out frozen snapshots; the record to change is the one it holds.
  const { store } = deps;
  const record = (heldRecord(store, jobId) ?? { record: stored ?? (await store.get(jobId)) })
    .record;
  if (record === undefined) return undefined;
  return { record, job: structuredClone(record) };
}

/** The plan of a stored job, admitted again against what is registered now. */
export function admitRecorded(record: Job, lookup: CapabilityLookup): AdmittedPlan {
  const plan: Record<string, unknown> = {
    version: record.planVersion ?? '1.0',
    goal: record.goal,
    steps: record.steps.map((step: JobStep) => {
      const submitted: Record<string, unknown> = { id: step.id, capability: step.capability };
      if (step.capabilityVersion !== undefined)
        submitted.capabilityVersion = step.capabilityVersion;
      if ('input' in step) submitted.input = step.input;
      if (step.bounds !== undefined) submitted.bounds = step.bounds;
      if (step.reason !== undefined) submitted.reason = step.reason;
      if (step.idempotencyKey !== undefined) submitted.idempotencyKey = step.idempotencyKey;
      return submitted;
    }),
  };
  if (record.planId !== undefined) plan.id = record.planId;
  if (record.metadata !== undefined) plan.metadata = record.metadata;
  if (record.idempotencyKey !== undefined) plan.idempotencyKey = record.idempotencyKey;
  // Admitted again as the version it was admitted as (a 2.0 job keeps its copies on resume).
  return admitPlan(captureSubmission(plan, Number.MAX_SAFE_INTEGER, KNOWN_PLAN_VERSIONS), lookup);
}
