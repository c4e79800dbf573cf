import { describeThrown } from '../errors/describe-value.js';
import type { CapabilityExecution, CapabilityMiddleware } from './capability.js';

/**
 * Logs `capability started`, `capability completed` and `capability failed` (with duration)
 * through `context.logger`. On by default in `createCapability`; the runtime's default logger
 * is silent, so it costs two clock reads unless a logger is configured.
 */
export class LifecycleLoggingMiddleware implements CapabilityMiddleware {
  async execute(
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
        durationMs: performance.now() - started,
      });
      return result;
    } catch (error) {
      context.logger.warn('capability failed', {
        ...fields,
        durationMs: performance.now() - started,
        error: describeThrown(error),
      });
      throw error;
    }
  }
}
