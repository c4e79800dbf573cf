/**
 * The options a capability declares besides its shape: `timeoutMs`, `retry` and `cost`
 * (docs/api.md, "createCapability", "Retries", "Limits"). `createCapability` and `use()` check
 * them with these same functions, so a capability object handed to `use()` directly is held to
 * exactly the rules of `createCapability`, and what it declares is honoured, never dropped.
 */
import { describeValue } from '../errors/describe-value.js';
import { ErrorCode } from '../errors/error-codes.js';
import { createError } from '../errors/warrant-error.js';
import { readField } from '../values/hostile-reads.js';
import { isCost, type RetryPolicy } from './capability-shape.js';
import type { Capability, CapabilityExecution } from './capability.js';
import { TimeoutMiddleware, timeoutProblem } from './timeout-middleware.js';

/** Reads one field of a definition once; a throwing getter or trap is a coded error naming it. */
export type FieldReader = (target: object, key: string, what: string) => unknown;

function invalid(message: string): TypeError {
  return createError(TypeError, ErrorCode.CAPABILITY_DEFINITION_INVALID, message);
}

/**
 * `retry: { attempts, backoffMs?, idempotent: true }`: without `idempotent: true`, or `attempts`
 * not an integer from 1 to 100, it is refused.
 */
export function checkRetry(
  retry: unknown,
  label: string,
  read: FieldReader,
): RetryPolicy | undefined {
  if (retry === undefined) return undefined;
  if (typeof retry !== 'object' || retry === null)
    throw invalid(`${label}: retry must be an object, got ${describeValue(retry)}`);
  const attempts = read(retry, 'attempts', 'retry.attempts');
  const backoffMs = read(retry, 'backoffMs', 'retry.backoffMs');
  const idempotent = read(retry, 'idempotent', 'retry.idempotent');
  if (idempotent !== true)
    throw invalid(`${label}: retry needs idempotent: true (the capability may run more than once)`);
  if (typeof attempts !== 'number' || !Number.isInteger(attempts) || attempts < 1 || attempts > 100)
    throw invalid(
      `${label}: retry.attempts must be an integer from 1 to 100, got ${describeValue(attempts)}`,
    );
  if (
    backoffMs !== undefined &&
    (typeof backoffMs !== 'number' ||
      !Number.isInteger(backoffMs) ||
      backoffMs < 0 ||
      backoffMs > 2_147_483_647)
  )
    throw invalid(
      `${label}: retry.backoffMs must be an integer from 0 to 2147483647, got ${describeValue(backoffMs)}`,
    );
  return Object.freeze({ attempts, backoffMs: backoffMs ?? 0 });
}

/** `cost`: a finite non-negative number, or absent. */
export function checkCost(cost: unknown, label: string): number | undefined {
  if (cost !== undefined && !isCost(cost))
    throw invalid(
      `${label}: cost must be a finite non-negative number, got ${describeValue(cost)}`,
    );
  return cost;
}

/** `timeoutMs`: an integer from 1 to 2^31-1, or absent. */
export function checkTimeout(timeoutMs: unknown, label: string): number | undefined {
  if (timeoutMs === undefined) return undefined;
  // Refused here, not at the first call: setTimeout fires at once for delays above 2^31-1.
  const problem = timeoutProblem(timeoutMs);
  if (problem !== undefined) throw invalid(`${label}: ${problem}`);
  return timeoutMs as number;
}

/** What a capability object handed to `use()` directly declares in its own fields. */
export interface PlainOptions {
  readonly timeoutMs: number | undefined;
  readonly retry: RetryPolicy | undefined;
  readonly cost: number | undefined;
}

/**
 * The `timeoutMs`, `retry` and `cost` fields of a capability object given to `use()` as it is,
 * checked as `createCapability` checks them. `middleware` and `lifecycleLogging` are composed
 * only by `createCapability`: on a plain object they are refused rather than ignored.
 */
export function plainOptions(candidate: object, label: string): PlainOptions {
  const read: FieldReader = (target, key, what) =>
    readField(target, key, (problem) => invalid(`${label}: ${what} ${problem}`));
  for (const key of ['middleware', 'lifecycleLogging']) {
    if (read(candidate, key, key) !== undefined) {
      throw invalid(
        `${label}: ${key} is applied only by createCapability(); wrap the definition in createCapability()`,
      );
    }
  }
  return {
    timeoutMs: checkTimeout(read(candidate, 'timeoutMs', 'timeoutMs'), label),
    retry: checkRetry(read(candidate, 'retry', 'retry'), label, read),
    cost: checkCost(read(candidate, 'cost', 'cost'), label),
  };
}

/**
 * A plain object's `execute(input, context)` bounded by its `timeoutMs`, as `createCapability`
 * bounds its own: the step fails with CAPABILITY_TIMEOUT and the signal the capability received
 * is aborted.
 */
export function boundedExecute(
  execute: Capability['execute'],
  timeoutMs: number,
  capability: CapabilityExecution['capability'],
): Capability['execute'] {
  const timeout = new TimeoutMiddleware(timeoutMs);
  return function bounded(this: unknown, input, context) {
    return timeout.execute({ input, context, capability }, (inner) => {
      const execution = inner ?? { input, context };
      try {
        return Promise.resolve(Reflect.apply(execute, this, [execution.input, execution.context]));
      } catch (error) {
        return Promise.reject(error as Error);
      }
    });
  };
}
