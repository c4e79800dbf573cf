import { createError } from '../errors/warrant-error.js';
import type { CapabilityExecution, CapabilityMiddleware } from './capability.js';

/**
 * Fails the invocation with `Capability execution timed out after <ms>ms` (code
 * CAPABILITY_TIMEOUT) when inner layers take longer than `ms`, and aborts the `context.signal`
 * that inner layers received. A late result or rejection of the capability is ignored.
 */
export class TimeoutMiddleware implements CapabilityMiddleware {
  readonly #ms: number;

  /** @throws TypeError (TIMEOUT_INVALID) unless `ms` is a positive finite number. */
  constructor(ms: number) {
    if (typeof ms !== 'number' || !Number.isFinite(ms) || ms <= 0) {
      throw createError(
        TypeError,
        'TIMEOUT_INVALID',
        `timeoutMs must be a positive finite number, got ${String(ms)}`,
      );
    }
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
          'CAPABILITY_TIMEOUT',
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
