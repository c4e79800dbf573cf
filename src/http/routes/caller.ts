/**
 * `GET /api/caller`: who the server takes the request's sender for, as the console shows it
 * (docs/api.md, "Reading and tenants"): `{ id, tenant, actor, scopes, authenticated }` with `id`
 * and `tenant` the caller's (null when it has none, or when no caller was identified), `actor`
 * the id of who acts for it now (null for none), `scopes` how
 * many scopes it holds (their names are not shown), and `authenticated` whether the server has
 * an authentication mode (or `resolveCaller`) or the request carries the operator token; else
 * the sender is `{ id: 'http' }`. Never
 * a token, never the caller's other fields.
 */
import type { FastifyPluginCallback } from 'fastify';
import type { RequestCaller, RequestIdentified } from './request-caller.js';

/** What the caller route is given. */
export interface CallerRouteOptions {
  readonly callerOf: RequestCaller;
  /** Whether the request's sender is told apart (an authentication mode, `resolveCaller`, or the
   * operator token on this request). */
  readonly identified: RequestIdentified;
}

export const callerRoute: FastifyPluginCallback<CallerRouteOptions> = (app, options, done) => {
  const { callerOf, identified } = options;
  app.get('/api/caller', async (request) => {
    const caller = await callerOf(request);
    const tenant = caller?.tenant;
    const actor = caller?.actor?.id;
    return {
      id: caller?.id ?? null,
      tenant: typeof tenant === 'string' ? tenant : null,
      // Who acts for the caller now (docs/api.md, "Callers: acting for someone").
      actor: typeof actor === 'string' ? actor : null,
      scopes: caller?.scopes?.length ?? 0,
      authenticated: identified(request),
    };
  });
  done();
};
