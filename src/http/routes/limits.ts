/**
 * `GET /api/limits` (docs/api.md, "runtime.listLimits"): the limits of the runtime and the
 * counters the request's caller may see: its own, its tenant's and the global ones; with the
 * scope `warrant:audit`, every counter of its tenant.
 */
import type { FastifyInstance } from 'fastify';
import type { OperatorRuntime } from '../../index.js';
import type { RequestCaller } from './request-caller.js';

export function registerLimitRoutes(
  app: FastifyInstance,
  runtime: OperatorRuntime,
  callerOf: RequestCaller,
): void {
  app.get('/api/limits', async (request) => {
    const caller = await callerOf(request);
    // A request whose caller is unknown sees the limits and no counter.
    if (caller === undefined) return { ...(await runtime.listLimits()), counters: [] };
    return runtime.listLimits({ caller });
  });
}
