/**
 * `GET /api/limits` (docs/api.md, "runtime.listLimits"): the limits of the runtime and the
 * counters the request's caller may see: its own, its tenant's and the global ones; with the
 * scope `warrant:audit`, every counter of its tenant.
 */
import type { FastifyPluginCallback } from 'fastify';

import type { GovernedRouteOptions } from './request-caller.js';

export const limitRoutes: FastifyPluginCallback<GovernedRouteOptions> = (app, options, done) => {
  const { runtime, callerOf } = options;
  app.get('/api/limits', async (request) => {
    const caller = await callerOf(request);
    // A request whose caller is unknown sees the limits and no counter.
    if (caller === undefined) return { ...(await runtime.listLimits()), counters: [] };
    return runtime.listLimits({ caller });
  });
  done();
};
