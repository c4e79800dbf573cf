/**
 * The options of `executePlan` and `previewPlan` (docs/api.md, "runtime.executePlan"), each field
 * read once: options that are not an object, a field that cannot be read (a throwing getter or
 * proxy trap) or a malformed `onReplay` are EXECUTE_OPTIONS_INVALID.
 */
import type { ExecutionCaller } from '../callers/execution-caller.js';
import { describeValue } from '../errors/describe-value.js';
import { ErrorCode } from '../errors/error-codes.js';
import { createError } from '../errors/warrant-error.js';
import { readField } from '../values/hostile-reads.js';

/** Options of one `executePlan` call. */
export interface ExecutePlanOptions {
  /** Who submits the plan; snapshotted (frozen) for the whole job. */
  caller?: ExecutionCaller;
  /**
   * Told the first job's id when the plan's idempotency key was used already for the same plan
   * by the same caller: nothing runs, and `executePlan` resolves that job once it is no longer
   * queued or executing (docs/api.md, "Idempotency"). Called once, before the promise settles;
   * what it throws rejects it.
   */
  onReplay?: (jobId: string) => void;
  /**
   * `'plan'`: every step is previewed at submission and the plan waits for one plan request
   * before any step runs (docs/api.md, "Plan warrants"); `'steps'` (the default): one request
   * per step that needs one. Needs the runtime's `approvals` option.
   */
  approval?: 'steps' | 'plan';
}

/** `executePlan(plan)` without options: nothing to read. */
export const NO_OPTIONS: ExecutePlanOptions = Object.freeze({});

function invalid(problem: string): TypeError {
  return createError(TypeError, ErrorCode.EXECUTE_OPTIONS_INVALID, `executePlan() ${problem}`);
}

/** Reads `key` of the options (checked to be an object), once. */
function fieldOf(options: unknown, key: string): unknown {
  if (options === NO_OPTIONS) return undefined;
  if (typeof options !== 'object' || options === null)
    throw invalid(`options must be an object, got ${describeValue(options)}`);
  return readField(options, key, (problem) => invalid(`options.${key} ${problem}`));
}

/** The caller option, read once (snapshotted by the caller of this function). */
export function readCaller(options: unknown): unknown {
  return fieldOf(options, 'caller');
}

/** The `onReplay` option, read once: a function or undefined. */
export function readOnReplay(options: unknown): ((jobId: string) => void) | undefined {
  const onReplay = fieldOf(options, 'onReplay');
  if (onReplay === undefined || typeof onReplay === 'function')
    return onReplay as ((jobId: string) => void) | undefined;
  throw invalid(`options.onReplay must be a function, got ${describeValue(onReplay)}`);
}

/**
 * The `approval` option of `method` (docs/api.md, "Plan warrants"), read once: `'steps'`, `'plan'`
 * or absent; `'plan'` only on a runtime with approvals, else EXECUTE_OPTIONS_INVALID (the
 * contract's code for both methods). `invalidValue` makes the refusal of a malformed value.
 */
export function readApprovalMode(
  value: unknown,
  approvals: boolean,
  method: 'executePlan' | 'submitPlan',
  invalidValue: (problem: string) => Error,
): 'steps' | 'plan' {
  if (value === undefined || value === 'steps') return 'steps';
  if (value !== 'plan')
    throw invalidValue(`options.approval must be 'steps' or 'plan', got ${describeValue(value)}`);
  if (!approvals)
    throw createError(
      TypeError,
      ErrorCode.EXECUTE_OPTIONS_INVALID,
      `${method}() options.approval 'plan' needs the runtime's approvals option`,
    );
  return 'plan';
}

/** The `approval` option of `executePlan`, read once. */
export function readApproval(options: unknown, approvals: boolean): 'steps' | 'plan' {
  return readApprovalMode(fieldOf(options, 'approval'), approvals, 'executePlan', invalid);
}
