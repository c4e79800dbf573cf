/**
 * The options of `submitPlan`, `waitForJob` and `cancelJob` (docs/api.md, "Queued jobs and
 * cancellation"), each read once: options that are not an object, a field that cannot be read (a
 * throwing getter or proxy trap) or a malformed field are JOB_OPTIONS_INVALID naming it.
 */
import { ErrorCode } from '../errors/error-codes.js';
import type { ExecutionCaller } from '../callers/execution-caller.js';
import { snapshotCaller } from '../callers/caller-snapshot.js';
import { describeValue } from '../errors/describe-value.js';
import { createError } from '../errors/warrant-error.js';
import { readField } from '../values/hostile-reads.js';
import { readApprovalMode } from './execute-options.js';

/** Options of `runtime.submitPlan`. */
export interface SubmitPlanOptions {
  /** Who submits the plan; snapshotted (frozen) for the whole job. */
  caller?: ExecutionCaller;
  /** Wins over the plan's own `idempotencyKey` (docs/api.md, "Idempotency"). */
  idempotencyKey?: string;
  /** `'plan'`: one plan request before any step runs (docs/api.md, "Plan warrants"). */
  approval?: 'steps' | 'plan';
}

/** Options of `runtime.waitForJob`. */
export interface WaitForJobOptions {
  /** Resolve with the job as it stands after this many milliseconds. Default: no limit. */
  timeoutMs?: number;
  /** Stop waiting (the promise rejects with the signal's reason). */
  signal?: AbortSignal;
}

/** Options of `runtime.cancelJob`. */
export interface CancelJobOptions {
  /** Who cancels: the submitter, or a caller the cancel policy allows. */
  caller: ExecutionCaller;
  /** Why; recorded in `job.cancelled` and given as the reason of the step's aborted signal. */
  reason?: string;
}

function invalid(message: string): TypeError {
  return createError(TypeError, ErrorCode.JOB_OPTIONS_INVALID, message);
}

/** Reads `key` of `options` (an object, checked), once. */
function fieldOf(method: string, options: unknown, key: string): unknown {
  if (typeof options !== 'object' || options === null)
    throw invalid(`${method}() options must be an object, got ${describeValue(options)}`);
  return readField(options, key, (problem) => invalid(`${method}() options.${key} ${problem}`));
}

export function readSubmitOptions(
  options: unknown,
  approvals = false,
): {
  caller: ExecutionCaller | undefined;
  idempotencyKey: string | undefined;
  approval: 'steps' | 'plan';
} {
  if (options === undefined)
    return { caller: undefined, idempotencyKey: undefined, approval: 'steps' };
  const caller = snapshotCaller(fieldOf('submitPlan', options, 'caller'));
  const idempotencyKey = fieldOf('submitPlan', options, 'idempotencyKey');
  const approval = readApprovalMode(
    fieldOf('submitPlan', options, 'approval'),
    approvals,
    'submitPlan',
    (problem) => invalid(`submitPlan() ${problem}`),
  );
  if (idempotencyKey !== undefined && (typeof idempotencyKey !== 'string' || idempotencyKey === ''))
    throw invalid(
      `submitPlan() options.idempotencyKey must be a non-empty string, got ${describeValue(idempotencyKey)}`,
    );
  return { caller, idempotencyKey, approval };
}

export function readWaitOptions(options: unknown): {
  timeoutMs: number | undefined;
  signal: AbortSignal | undefined;
} {
  if (options === undefined) return { timeoutMs: undefined, signal: undefined };
  const timeoutMs = fieldOf('waitForJob', options, 'timeoutMs');
  const signal = fieldOf('waitForJob', options, 'signal');
  if (
    timeoutMs !== undefined &&
    (typeof timeoutMs !== 'number' || !Number.isSafeInteger(timeoutMs) || timeoutMs < 0)
  ) {
    throw invalid(
      `waitForJob() options.timeoutMs must be a non-negative integer, got ${describeValue(timeoutMs)}`,
    );
  }
  if (signal !== undefined && !(signal instanceof AbortSignal))
    throw invalid(
      `waitForJob() options.signal must be an AbortSignal, got ${describeValue(signal)}`,
    );
  return { timeoutMs, signal };
}

export function readCancelOptions(options: unknown): {
  caller: ExecutionCaller;
  reason: string | undefined;
} {
  const caller = snapshotCaller(fieldOf('cancelJob', options, 'caller'));
  const reason = fieldOf('cancelJob', options, 'reason');
  if (caller === undefined) throw invalid('cancelJob() options.caller is required');
  if (reason !== undefined && typeof reason !== 'string')
    throw invalid(`cancelJob() options.reason must be a string, got ${describeValue(reason)}`);
  return { caller, reason };
}
