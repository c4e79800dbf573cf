/**
 * The only place where Warrant outcomes become HTTP statuses (docs/decisions.md, "House rules";
 * docs/guide/http.md, "HTTP routes"): unknown capability 404, admission failure 400, explicit
 * denial 403, any other failed job 500.
 */
import { ErrorCode } from '../errors/error-codes.js';
import type { Job, PlanAdmissionIssue } from '../index.js';

export function admissionStatus(issues: readonly PlanAdmissionIssue[]): 400 | 404 {
  return issues.some((issue) => issue.code === ErrorCode.UNKNOWN_CAPABILITY) ? 404 : 400;
}

/**
 * The limit that denied a step of the job, if one did (docs/api.md, "Limits"): on
 * `POST /api/capabilities/:name/execute` that is 429, not 403 (API-4.md amendments, section 29;
 * docs/guide/http.md, "HTTP routes").
 */
export function limitOfDenial(job: Job): string | undefined {
  return job.steps.find((step) => step.decision?.limit !== undefined)?.decision?.limit;
}

/**
 * `Retry-After` of a limit denial, in whole seconds: the limit's window, after which everything
 * it counted has left it (docs/decisions.md, "Papercuts of the first hour"); at least 1.
 */
export function retryAfterSeconds(windowMs: number | undefined): number {
  return Math.max(1, Math.ceil((windowMs ?? 1_000) / 1_000));
}

/** 403 when the job failed on an explicit denial, 500 for any other failure. */
export function failedJobStatus(job: Job): 403 | 500 {
  return job.events.some((event) => event.type === 'capability.denied') ? 403 : 500;
}

/**
 * The status of a refused approval decision (docs/api.md, "runtime.decideApproval"): 404 unknown,
 * 409 not pending or another digest, 403 forbidden or self-approval, 410 expired, 400 malformed;
 * undefined for any other error (not a refusal).
 */
export function approvalRefusalStatus(code: unknown): 400 | 403 | 404 | 409 | 410 | undefined {
  switch (code) {
    case ErrorCode.APPROVAL_NOT_FOUND:
      return 404;
    case ErrorCode.APPROVAL_NOT_PENDING:
    case ErrorCode.APPROVAL_DIGEST_MISMATCH:
    case ErrorCode.APPROVAL_CANNOT_RUN:
      return 409;
    case ErrorCode.APPROVAL_FORBIDDEN:
    case ErrorCode.APPROVAL_SELF_APPROVAL:
      return 403;
    case ErrorCode.APPROVAL_EXPIRED:
      return 410;
    case ErrorCode.APPROVAL_DECISION_INVALID:
    case ErrorCode.APPROVAL_INPUT_INVALID:
      return 400;
    default:
      return undefined;
  }
}
