import { describeThrown } from '../errors/describe-value.js';
import type { CapabilityExecution, CapabilityMiddleware, ExecutionLogger } from './capability.js';

/**
 * The runtime's default logger: logs nothing. The lifecycle middleware recognises it and skips
 * its bookkeeping, so a capability costs nothing extra until a logger is configured.
 */
export const silentLogger: ExecutionLogger = Object.freeze({
  debug() {},
  info() {},
  warn() {},
  error() {},
});

/** Milliseconds to the microsecond: `0.785`, not `0.7845220000001518`. */
export function roundedMs(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}

/**
 * Logs `capability started`, `capability completed` and `capability failed` (with duration)
 * through `context.logger`. On by default in `createCapability`; with the runtime's default
 * silent logger it only calls `next()`.
 */
export class LifecycleLoggingMiddleware implements CapabilityMiddleware {
  execute(
    execution: CapabilityExecution,
    next: (execution?: CapabilityExecution) => Promise<unknown>,
  ): Promise<unknown> {
    if (execution.context.logger === silentLogger) return next();
    return this.#logged(execution, next);
  }

  async #logged(
    execution: CapabilityExecution,
    next: (execution?: CapabilityExecution) => Promise<unknown>,
  ): Promise<unknown> {
    const { context, capability } = execution;
    const fields = {
      capability: capability.name,
      version: capability.version,
      jobId: context.jobId,
      stepId: context.stepId,
    };
    const started = performance.now();
    context.logger.debug('capability started', fields);
    try {
      const result = await next();
      context.logger.info('capability completed', {
        ...fields,
        durationMs: roundedMs(performance.now() - started),
      });
      return result;
    } catch (error) {
      context.logger.warn('capability failed', {
        ...fields,
        durationMs: roundedMs(performance.now() - started),
        error: describeThrown(error),
      });
      throw error;
    }
  }
}
