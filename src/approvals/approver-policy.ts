/**
 * The runtime's `approvals` option and the approver policy (docs/api.md, "Approvals"). The
 * policy is asked whether an approver may decide a request; only `true`, or a promise of `true`,
 * within APPROVER_TIMEOUT_MS is yes. A throw, a rejection, a hang or any other answer is no.
 */
import { ErrorCode } from '../errors/error-codes.js';
import type { ExecutionCaller } from '../callers/execution-caller.js';
import { describeValue } from '../errors/describe-value.js';
import { readField } from '../values/hostile-reads.js';
import { createError } from '../errors/warrant-error.js';
import type { ApprovalRequest } from './approval-request.js';

/** Decides who may approve or reject a request. */
export interface ApproverPolicy {
  canApprove(approver: ExecutionCaller, request: ApprovalRequest): boolean | Promise<boolean>;
}

/** The runtime option `approvals`. */
export interface ApprovalsOptions {
  /** Required: who may decide a request (self-approval is refused before it is asked). */
  approver: ApproverPolicy;
  /** How long a request waits before it expires, in ms. Default 24 hours. */
  ttlMs?: number;
}

/** The option as checked. */
export interface ApprovalsConfig {
  readonly approver: ApproverPolicy;
  readonly ttlMs: number;
}

export const DEFAULT_APPROVAL_TTL_MS = 24 * 60 * 60 * 1000;
export const APPROVER_TIMEOUT_MS = 5_000;
// The longest delay a Date can still add to now without leaving its range, kept well inside.
const MAX_TTL_MS = 100 * 365 * 24 * 60 * 60 * 1000;

function invalid(message: string): TypeError {
  return createError(TypeError, ErrorCode.RUNTIME_OPTIONS_INVALID, message);
}

/** Reads and checks `options.approvals` once; undefined when approvals are off. */
export function checkApprovalsOption(value: unknown): ApprovalsConfig | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'object' || value === null) {
    throw invalid(
      `options.approvals must be an object { approver, ttlMs? }, got ${describeValue(value)}`,
    );
  }
  const approver = readField(value, 'approver', (problem) =>
    invalid(`options.approvals.approver ${problem}`),
  );
  const ttlMs = readField(value, 'ttlMs', (problem) =>
    invalid(`options.approvals.ttlMs ${problem}`),
  );
  if (
    typeof approver !== 'object' ||
    approver === null ||
    typeof readField(approver, 'canApprove', (problem) =>
      invalid(`options.approvals.approver.canApprove ${problem}`),
    ) !== 'function'
  ) {
    throw invalid(
      'options.approvals.approver must be an object with a canApprove(approver, request) method',
    );
  }
  if (
    ttlMs !== undefined &&
    (typeof ttlMs !== 'number' || !Number.isSafeInteger(ttlMs) || ttlMs < 1 || ttlMs > MAX_TTL_MS)
  ) {
    throw invalid(
      `options.approvals.ttlMs must be a positive integer of milliseconds, got ${describeValue(ttlMs)}`,
    );
  }
  return Object.freeze({
    approver: approver as ApproverPolicy,
    ttlMs: (ttlMs as number | undefined) ?? DEFAULT_APPROVAL_TTL_MS,
  });
}

/**
 * Asks the policy; resolves true only for an answer that is `true` (or a promise of `true`)
 * within the time limit. Never rejects.
 */
export async function askApprover(
  policy: ApproverPolicy,
  approver: ExecutionCaller,
  request: ApprovalRequest,
  timeoutMs: number = APPROVER_TIMEOUT_MS,
): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const answer: unknown = Reflect.apply(policy.canApprove, policy, [approver, request]);
    if (answer === true) return true;
    if (typeof (answer as { then?: unknown } | null | undefined)?.then !== 'function') return false;
    const timedOut = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    const settled = await Promise.race([Promise.resolve(answer as Promise<unknown>), timedOut]);
    return settled === true;
  } catch {
    return false;
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}
