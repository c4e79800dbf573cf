/**
 * `GET /api/jobs` (newest first; `status`, `capability`, `goal` and `limit` filters),
 * `GET /api/jobs/:id`, `GET /api/jobs/:id/verify` and `GET /api/jobs/:id/evidence` (README "HTTP
 * routes").
 */
import type { FastifyInstance } from 'fastify';
import type { JobListFilter, OperatorRuntime } from '../../index.js';
import { jobAnswer, jobListAnswer, REMOTE_ANSWER } from '../../json/answer.js';

/** `GET /api/jobs` answers this many jobs unless `limit` says otherwise, and never more than
 * `JOB_LIST_MAX` (README "HTTP routes"). */
export const JOB_LIST_DEFAULT = 50;
export const JOB_LIST_MAX = 1000;

/** The `limit` of a job list: the default when absent, undefined when not 1..JOB_LIST_MAX. */
function jobListLimit(text: string | undefined): number | undefined {
  if (text === undefined) return JOB_LIST_DEFAULT;
  if (!/^\d{1,4}$/.test(text)) return undefined;
  const limit = Number(text);
  return limit >= 1 && limit <= JOB_LIST_MAX ? limit : undefined;
}

export function registerJobRoutes(app: FastifyInstance, runtime: OperatorRuntime): void {
  // The gate has refused repeated parameters, so every query value is a string here.
  app.get<{ Querystring: Record<string, string | undefined> }>(
    '/api/jobs',
    async (request, reply) => {
      const { status, capability, goal } = request.query;
      const limit = jobListLimit(request.query.limit);
      if (limit === undefined)
        return reply
          .code(400)
          .send({ error: `limit must be an integer from 1 to ${JOB_LIST_MAX}` });
      const filter: JobListFilter = { limit };
      if (status !== undefined) filter.status = status as JobListFilter['status'];
      if (capability !== undefined) filter.capability = capability;
      if (goal !== undefined) filter.goal = goal;
      return jobListAnswer(await runtime.listJobs(filter), REMOTE_ANSWER);
    },
  );
  app.get<{ Params: { id: string } }>('/api/jobs/:id', async (request, reply) => {
    const job = await runtime.getJob(request.params.id);
    return job === undefined
      ? reply.code(404).send({ error: `Unknown job: ${request.params.id}` })
      : jobAnswer(job, REMOTE_ANSWER);
  });
  // `GET /api/jobs/:id/verify`: 200 with `runtime.verifyJob`'s answer (`{ ok: true, events }` or
  // `{ ok: false, reason, eventIndex?, stepId? }`: a job that is not intact is still an answer),
  // 404 for an unknown job.
  app.get<{ Params: { id: string } }>('/api/jobs/:id/verify', async (request, reply) => {
    const verification = await runtime.verifyJob(request.params.id);
    return verification === undefined
      ? reply.code(404).send({ error: `Unknown job: ${request.params.id}` })
      : verification;
  });
  // `GET /api/jobs/:id/evidence`: 200 with `runtime.exportJob`'s bundle (unsigned: sign with
  // `warrant jobs export --signing-key`), 404 for an unknown job. The record is as stored (errors
  // not cut to one line): its events must hash as they were chained.
  app.get<{ Params: { id: string } }>('/api/jobs/:id/evidence', async (request, reply) => {
    const bundle = await runtime.exportJob(request.params.id);
    return bundle === undefined
      ? reply.code(404).send({ error: `Unknown job: ${request.params.id}` })
      : bundle;
  });
}
