/**
 * `GET /api/jobs` (newest first; `status`, `capability`, `goal` and `limit` filters), `GET
 * /api/jobs/:id` (`waitMs`: wait for its end), `GET /api/jobs/:id/verify`, `GET
 * /api/jobs/:id/evidence` and `POST /api/jobs/:id/cancel` (docs/guide/http.md, "HTTP routes"). Each
 * reads as the request's caller: a job it may not read is 404, and no list shows it (docs/api.md,
 * "Reading and tenants").
 */
import type { FastifyPluginCallback, FastifyReply, FastifyRequest } from 'fastify';
import { ErrorCode } from '../../errors/error-codes.js';
import type { Job, JobListFilter } from '../../index.js';
import { errorText, jobAnswer, jobListAnswer, REMOTE_ANSWER } from '../../json/answer.js';
import type { GovernedRouteOptions } from './request-caller.js';

/** The longest `waitMs` of `GET /api/jobs/:id` (docs/api.md, "HTTP"). */
export const JOB_WAIT_MAX_MS = 30_000;

/** `GET /api/jobs` answers this many jobs unless `limit` says otherwise, and never more than
 * `JOB_LIST_MAX` (docs/guide/http.md, "HTTP routes"). */
export const JOB_LIST_DEFAULT = 50;
export const JOB_LIST_MAX = 1000;

/** The 400 answer's text for a `limit` that listLimit refused. */
export const LIST_LIMIT_INVALID = `limit must be an integer from 1 to ${JOB_LIST_MAX}`;

/**
 * The `limit` of a list (jobs, approvals, notifications): the default when absent, undefined
 * when not 1..JOB_LIST_MAX.
 */
export function listLimit(text: string | undefined): number | undefined {
  if (text === undefined) return JOB_LIST_DEFAULT;
  if (!/^\d{1,4}$/.test(text)) return undefined;
  const limit = Number(text);
  return limit >= 1 && limit <= JOB_LIST_MAX ? limit : undefined;
}

export const jobRoutes: FastifyPluginCallback<GovernedRouteOptions> = (app, options, done) => {
  const { runtime, callerOf } = options;
  /** The job `id` when the request's caller may read it, else undefined (404). */
  const readable = async (request: FastifyRequest, id: string): Promise<Job | undefined> => {
    const caller = await callerOf(request);
    return caller === undefined ? undefined : runtime.getJob(id, { caller });
  };
  const unknown = (reply: FastifyReply, id: string) =>
    reply.code(404).send({ error: `Unknown job: ${id}` });
  // The gate has refused repeated parameters, so every query value is a string here.
  app.get<{ Querystring: Record<string, string | undefined> }>(
    '/api/jobs',
    async (request, reply) => {
      const { status, capability, goal } = request.query;
      const limit = listLimit(request.query.limit);
      if (limit === undefined) return reply.code(400).send({ error: LIST_LIMIT_INVALID });
      const filter: JobListFilter = { limit };
      if (status !== undefined) filter.status = status as JobListFilter['status'];
      if (capability !== undefined) filter.capability = capability;
      if (goal !== undefined) filter.goal = goal;
      const caller = await callerOf(request);
      if (caller === undefined) return [];
      return jobListAnswer(await runtime.listJobs({ ...filter, caller }), REMOTE_ANSWER);
    },
  );
  app.get<{ Params: { id: string }; Querystring: Record<string, string | undefined> }>(
    '/api/jobs/:id',
    async (request, reply) => {
      const { waitMs } = request.query;
      const { id } = request.params;
      const ms = waitMs === undefined ? 0 : /^\d{1,5}$/.test(waitMs) ? Number(waitMs) : Number.NaN;
      if (!(ms <= JOB_WAIT_MAX_MS))
        return reply
          .code(400)
          .send({ error: `waitMs must be an integer from 0 to ${JOB_WAIT_MAX_MS}` });
      let job = await readable(request, id);
      if (job !== undefined && waitMs !== undefined) {
        await runtime.waitForJob(id, { timeoutMs: ms });
        // Read again as the caller: what it may read can change while the job moves on.
        job = await readable(request, id);
      }
      return job === undefined ? unknown(reply, id) : jobAnswer(job, REMOTE_ANSWER);
    },
  );
  // `POST /api/jobs/:id/cancel` as the request's caller, `{ reason? }`: 200 with the job as it
  // stands, 404 for an unknown job, 403 when the caller may not cancel it.
  app.post<{ Params: { id: string }; Body: unknown }>(
    '/api/jobs/:id/cancel',
    async (request, reply) => {
      const body = request.body as { reason?: unknown } | null | undefined;
      const reason = typeof body === 'object' && body !== null ? body.reason : undefined;
      if (reason !== undefined && typeof reason !== 'string')
        return reply.code(400).send({ error: 'reason must be a string' });
      const caller = await callerOf(request);
      if (caller === undefined)
        return reply.code(403).send({ error: 'A cancel needs an identified caller' });
      // A job the caller may not read is unknown to it, never forbidden.
      if ((await runtime.getJob(request.params.id, { caller })) === undefined)
        return unknown(reply, request.params.id);
      let job: Job | undefined;
      try {
        job = await runtime.cancelJob(
          request.params.id,
          reason === undefined ? { caller } : { caller, reason },
        );
      } catch (error) {
        if ((error as { code?: unknown }).code !== ErrorCode.CANCEL_FORBIDDEN) throw error;
        return reply.code(403).send({
          error: errorText((error as Error).message, REMOTE_ANSWER),
          code: ErrorCode.CANCEL_FORBIDDEN,
        });
      }
      return job === undefined
        ? reply.code(404).send({ error: `Unknown job: ${request.params.id}` })
        : jobAnswer(job, REMOTE_ANSWER);
    },
  );
  // `GET /api/jobs/:id/verify`: 200 with `runtime.verifyJob`'s answer (`{ ok: true, events }` or
  // `{ ok: false, reason, eventIndex?, stepId? }`: a job that is not intact is still an answer),
  // 404 for an unknown job.
  app.get<{ Params: { id: string } }>('/api/jobs/:id/verify', async (request, reply) => {
    if ((await readable(request, request.params.id)) === undefined)
      return unknown(reply, request.params.id);
    const verification = await runtime.verifyJob(request.params.id);
    return verification === undefined
      ? reply.code(404).send({ error: `Unknown job: ${request.params.id}` })
      : verification;
  });
  // `GET /api/jobs/:id/evidence`: 200 with `runtime.exportJob`'s bundle (unsigned: sign with
  // `warrant jobs export --signing-key`), 404 for an unknown job. The record is as stored (errors
  // not cut to one line): its events must hash as they were chained.
  app.get<{ Params: { id: string } }>('/api/jobs/:id/evidence', async (request, reply) => {
    if ((await readable(request, request.params.id)) === undefined)
      return unknown(reply, request.params.id);
    const bundle = await runtime.exportJob(request.params.id);
    return bundle === undefined
      ? reply.code(404).send({ error: `Unknown job: ${request.params.id}` })
      : bundle;
  });
  done();
};
