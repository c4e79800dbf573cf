/**
 * The ledger of consumed approvals (docs/api.md, "Approvals"): the durable stores keep, beside
 * the jobs, one row per approval request a decision consumed (granted, rejected or expired),
 * keyed by the job and the position of its `approval.requested` event, written in the same
 * transaction as the decision. Restoring a job's rows from an older copy does not restore the
 * ledger: the restored request cannot be decided again (APPROVAL_NOT_PENDING), and verifyJob
 * reports the record as restored.
 *
 * The consuming write also checks the request as the store holds it, not as the deciding process
 * read it: the last `approval.requested` event of the step, its chain hash recomputed from the
 * event before it, its input digest the one decided on, and (for a grant or a rejection) its
 * `expiresAt` not yet reached, at the time of the write.
 */
import { ErrorCode } from '../../errors/error-codes.js';
import { createError } from '../../errors/warrant-error.js';
import { chainHash } from '../../record/event-chain.js';
import type { Job, JobEvent, JobStep } from '../../jobs/job.js';
import type { JobChange } from '../../jobs/job-store.js';
import { decodeEvent } from './record-columns.js';

/** What a change that consumes an approval request decided, for the store's checks. */
export interface ClaimedRequest {
  readonly stepId: string;
  /**
   * The digest of the request decided on, as the process read it: the step's decision's input
   * digest, or for a plan request (docs/api.md, "Plan warrants") its `planDigest`.
   */
  readonly inputDigest: string | undefined;
  readonly decision: 'granted' | 'rejected' | 'expired';
}

/** The request a change consumes (JobChange.claims), from the job and the change's events. */
export function claimedRequest(job: Job, change: JobChange, position: number): ClaimedRequest {
  const step = job.steps[position] as JobStep;
  const types = change.events.map((event) => event.type);
  const decision = types.includes('approval.granted')
    ? 'granted'
    : types.includes('approval.rejected')
      ? 'rejected'
      : 'expired';
  return { stepId: step.id, inputDigest: requestedDigest(job, step), decision };
}

/** The digest of the step's last request in the job's events: its plan's, or its decision's. */
function requestedDigest(job: Job, step: JobStep): string | undefined {
  for (let at = job.events.length - 1; at >= 0; at--) {
    const event = job.events[at] as JobEvent;
    if (event.type !== 'approval.requested' || event.data?.stepId !== step.id) continue;
    if (event.data.kind === 'plan') return event.data.planDigest as string | undefined;
    break;
  }
  return step.decision?.inputDigest;
}

/** A stored event row: its JSON text and chain hash. */
export interface StoredEvent {
  readonly event: string;
  readonly hash: string | null;
}

/** The request as the store holds it: the position of its event and its hash. */
export interface CheckedRequest {
  readonly position: number;
  readonly hash: string | null;
}

function refused(code: ErrorCode, message: string): Error {
  return createError(Error, code, message);
}

/**
 * Checks the request a change consumes against the job's stored events (in order), at `nowMs`;
 * throws APPROVAL_NOT_PENDING or APPROVAL_EXPIRED, so the store writes nothing.
 */
export function checkStoredRequest(
  jobId: string,
  claim: ClaimedRequest,
  events: readonly StoredEvent[],
  auditKey: string | undefined,
  nowMs: number,
): CheckedRequest {
  const named = `step ${JSON.stringify(claim.stepId)} of job ${JSON.stringify(jobId)}`;
  for (let position = events.length - 1; position >= 0; position--) {
    const row = events[position] as StoredEvent;
    let event: JobEvent;
    try {
      event = decodeEvent(row.event);
    } catch {
      continue;
    }
    if (event.type !== 'approval.requested' || event.data?.stepId !== claim.stepId) continue;
    const previous = position === 0 ? '' : (events[position - 1]?.hash ?? '');
    if (row.hash !== null && chainHash(previous, event, auditKey) !== row.hash) {
      throw refused(
        ErrorCode.APPROVAL_NOT_PENDING,
        `The approval request of ${named} does not match its chain hash: it cannot be decided`,
      );
    }
    const digest = event.data.kind === 'plan' ? event.data.planDigest : event.data.inputDigest;
    if (digest !== claim.inputDigest) {
      throw refused(
        ErrorCode.APPROVAL_NOT_PENDING,
        `The approval request of ${named} is not the one decided on`,
      );
    }
    const expiresAt = event.data.expiresAt;
    if (
      claim.decision !== 'expired' &&
      !(typeof expiresAt === 'string' && nowMs < Date.parse(expiresAt))
    ) {
      throw refused(
        ErrorCode.APPROVAL_EXPIRED,
        `The approval request of ${named} expired at ${String(expiresAt)}`,
      );
    }
    return { position, hash: row.hash };
  }
  throw refused(ErrorCode.APPROVAL_NOT_PENDING, `No approval request is recorded for ${named}`);
}

/** The error of a request the ledger holds as consumed already. */
export function alreadyConsumed(jobId: string, claim: ClaimedRequest): Error {
  return refused(
    ErrorCode.APPROVAL_NOT_PENDING,
    `The approval request of step ${JSON.stringify(claim.stepId)} of job ${JSON.stringify(jobId)} was decided already (the ledger of consumed approvals holds it)`,
  );
}
