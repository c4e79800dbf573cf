import { ErrorCode } from '../errors/error-codes.js';
import { describeValue } from '../errors/describe-value.js';
import { createError } from '../errors/warrant-error.js';
import type { CapabilityExecution, CapabilityMiddleware } from './capability.js';

/** Longest timer Node's setTimeout honours; a longer delay fires after 1 ms. */
export const MAX_TIMEOUT_MS = 2 ** 31 - 1;

/** The one rule for time-outs: undefined when `ms` is usable, else what is wrong with it. */
export function timeoutProblem(ms: unknown): string | undefined {
  if (typeof ms === 'number' && Number.isInteger(ms) && ms >= 1 && ms <= MAX_TIMEOUT_MS) {
    return undefined;
  }
  return `timeoutMs must be an integer from 1 to ${MAX_TIMEOUT_MS} (milliseconds), got ${describeValue(ms)}`;
}

/**
 * Fails the invocation with `Capability execution timed out after <ms>ms` (code
 * CAPABILITY_TIMEOUT) when inner layers take longer than `ms`, and aborts the `context.signal`
 * that inner layers received. A late result or rejection of the capability is ignored.
 */
export class TimeoutMiddleware implements CapabilityMiddleware {
  readonly #ms: number;

  /** @throws TypeError (TIMEOUT_INVALID) unless `ms` is an integer from 1 to 2^31-1. */
  constructor(ms: number) {
    const problem = timeoutProblem(ms);
    if (problem !== undefined) throw createError(TypeError, ErrorCode.TIMEOUT_INVALID, problem);
    this.#ms = ms;
  }

  get ms(): number {
    return this.#ms;
  }

  execute(
    execution: CapabilityExecution,
    next: (execution?: CapabilityExecution) => Promise<unknown>,
  ): Promise<unknown> {
    const controller = new AbortController();
    const outer = execution.context.signal;
    const signal = AbortSignal.any([outer, controller.signal]);
    const inner: CapabilityExecution = {
      input: execution.input,
      capability: execution.capability,
      context: { ...execution.context, signal },
    };
    return new Promise<unknown>((resolve, reject) => {
      const timer = setTimeout(() => {
        const error = createError(
          Error,
          ErrorCode.CAPABILITY_TIMEOUT,
          `Capability execution timed out after ${this.#ms}ms`,
        );
        controller.abort(error);
        reject(error);
      }, this.#ms);
      next(inner).then(
        (value) => {
          clearTimeout(timer);
          resolve(value);
        },
        (error: unknown) => {
          clearTimeout(timer);
          reject(error);
        },
      );
    });
  }
}
