/**
 * `GET /api/notifications` (docs/api.md, "HTTP: notifications"): the notifications of the store
 * not delivered yet, pending, failed or dropped, oldest first, paged (`?limit=` 1..1000 default
 * 50, `?cursor=` from the `warrant-next-cursor` header). Only for a caller holding the scope
 * `warrant:audit` under an authentication mode: 403 otherwise, and without a mode (as the
 * approval routes); only the notifications of jobs in the caller's tenant. A row shows its
 * destination by the label the store keeps (URL origin and a digest of the URL), never the URL
 * or a secret, and not the request body.
 */
import type { FastifyPluginCallback } from 'fastify';
import { ErrorCode } from '../../errors/error-codes.js';
import type { NotificationRecord } from '../../index.js';
import type { IdentifiedRouteOptions } from './request-caller.js';
import { LIST_LIMIT_INVALID, listLimit } from './jobs.js';

/** The auditor's scope (docs/api.md, "Reading and tenants"), as the token mode grants it. */
const AUDIT_SCOPE = 'warrant:audit';

/** A row as answered: what the store keeps, but the body. */
function shown(row: NotificationRecord) {
  return {
    seq: row.seq,
    id: row.id,
    type: row.type,
    jobId: row.jobId,
    at: row.at,
    destination: row.destination,
    status: row.status,
    attempts: row.attempts,
    nextAt: new Date(row.nextAt).toISOString(),
    ...(row.error === undefined ? {} : { error: row.error }),
  };
}

export const notificationRoutes: FastifyPluginCallback<IdentifiedRouteOptions> = (
  app,
  options,
  done,
) => {
  const { runtime, callerOf, identified } = options;
  app.get<{ Querystring: Record<string, string | undefined> }>(
    '/api/notifications',
    async (request, reply) => {
      const forbidden = () =>
        reply
          .code(403)
          .send({ error: `Notifications are shown to a caller with the scope ${AUDIT_SCOPE}` });
      if (!identified(request)) return forbidden();
      const { cursor, limit: limitText } = request.query;
      const limit = listLimit(limitText);
      if (limit === undefined) return reply.code(400).send({ error: LIST_LIMIT_INVALID });
      if (cursor !== undefined && !/^[1-9]\d{0,14}$/.test(cursor))
        return reply.code(400).send({ error: 'cursor is not a cursor of this list' });
      const caller = await callerOf(request);
      if (!(caller?.scopes ?? []).includes(AUDIT_SCOPE)) return forbidden();
      try {
        // Only the caller's tenant's (docs/api.md, "Reading and tenants").
        const rows = await runtime.listNotifications({
          caller,
          limit,
          ...(cursor === undefined ? {} : { after: Number(cursor) }),
        });
        const last = rows.at(-1);
        if (rows.length === limit && last !== undefined)
          reply.header('warrant-next-cursor', String(last.seq));
        return rows.map(shown);
      } catch (error) {
        if ((error as { code?: unknown } | null)?.code !== ErrorCode.JOB_FILTER_INVALID)
          throw error;
        return reply.code(400).send({ error: 'cursor is not a cursor of this list' });
      }
    },
  );
  done();
};
