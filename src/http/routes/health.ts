/**
 * `GET /health`: the one route open without credentials (docs/guide/http.md, "HTTP routes"). 200 `{ status:
 * 'ok' }` while the process can write its store; 503 with `Retry-After` and `{ status:
 * 'unavailable', code: 'STORE_UNAVAILABLE', reason }` while it cannot (docs/api.md,
 * "runtime.storeAvailability"), from what the runtime knows: no statement is sent, and the
 * reason names no database, host or credential.
 */
import type { FastifyPluginCallback } from 'fastify';
import { ErrorCode } from '../../errors/error-codes.js';
import type { OperatorRuntime } from '../../index.js';
import { STORE_RETRY_AFTER_SECONDS } from '../../json/answer.js';

/** What the health route is given. */
export interface HealthRouteOptions {
  readonly runtime: OperatorRuntime;
}

export const healthRoute: FastifyPluginCallback<HealthRouteOptions> = (app, { runtime }, done) => {
  app.get('/health', async (_request, reply) => {
    const store = runtime.storeAvailability();
    if (store.writable) return { status: 'ok' };
    reply.header('retry-after', String(STORE_RETRY_AFTER_SECONDS));
    return reply
      .code(503)
      .send({ status: 'unavailable', code: ErrorCode.STORE_UNAVAILABLE, reason: store.reason });
  });
  done();
};
