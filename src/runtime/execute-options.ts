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
