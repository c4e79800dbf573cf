/**
 * The jobs that wait for a runtime (docs/api.md, "runtime.waitingJobs"): queued or executing,
 * their owner gone, none of the runtimes that recovered since able to admit them. Each with the
 * capabilities, at the versions its record needs, that this runtime does not register: what a
 * runtime that takes it up must have.
 */
import type { Job, JobStep } from '../jobs/job.js';
import type { JobStore } from '../jobs/job-store.js';
import { isOwned } from '../jobs/store-parts.js';
import type { CapabilityLookup } from './stored-job.js';

/** One job waiting for a runtime that can admit it. */
export interface WaitingJob {
  readonly jobId: string;
  /**
   * `<capability>@<version>` (`<capability>` when no version was pinned or decided) of each step
   * not completed whose capability this runtime does not register at that version; empty when
   * this runtime could take it up (no runtime recovering on the store has opened since).
   */
  readonly needs: readonly string[];
}

/** The capability (and version) each step not completed needs that `lookup` does not have. */
export function missingCapabilities(record: Job, lookup: CapabilityLookup): string[] {
  const needs = new Set<string>();
  for (const step of record.steps as readonly JobStep[]) {
    if (step.status === 'completed') continue;
    const wanted = step.decision?.capabilityVersion ?? step.capabilityVersion;
    const registered = lookup(step.capability);
    if (registered !== undefined && (wanted === undefined || registered.version === wanted))
      continue;
    needs.add(wanted === undefined ? step.capability : `${step.capability}@${wanted}`);
  }
  return [...needs];
}

/** The waiting jobs of `store` that `readable` lets through, oldest first. */
export async function waitingJobsOf(
  store: JobStore,
  lookup: CapabilityLookup,
  readable: (job: Job) => Promise<boolean>,
): Promise<WaitingJob[]> {
  if (!isOwned(store)) return [];
  const waiting: { job: Job; needs: string[] }[] = [];
  for (const id of await store.orphaned()) {
    const job = await store.get(id);
    if (job === undefined || (job.status !== 'queued' && job.status !== 'executing')) continue;
    if (!(await readable(job))) continue;
    waiting.push({ job, needs: missingCapabilities(job, lookup) });
  }
  waiting.sort((a, b) => a.job.createdAt.localeCompare(b.job.createdAt));
  return waiting.map(({ job, needs }) =>
    Object.freeze({ jobId: job.id, needs: Object.freeze(needs) }),
  );
}
