/**
 * The only place where Warrant outcomes become HTTP statuses (docs/decisions.md, "House rules"; README, "HTTP routes"):
 * unknown capability 404, admission failure 400, explicit denial 403, any other failed job 500.
 */
import type { Job, PlanAdmissionIssue } from '../index.js';

export function admissionStatus(issues: readonly PlanAdmissionIssue[]): 400 | 404 {
  return issues.some((issue) => issue.code === 'UNKNOWN_CAPABILITY') ? 404 : 400;
}

/** 403 when the job failed on an explicit denial, 500 for any other failure. */
export function failedJobStatus(job: Job): 403 | 500 {
  return job.events.some((event) => event.type === 'capability.denied') ? 403 : 500;
}
