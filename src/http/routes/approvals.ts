/**
 * `GET /api/approvals` (pending requests the caller may read, oldest first, paged: `?limit=`
 * 1..1000 default 50, `?cursor=` from the `warrant-next-cursor` header, `?jobId=` one job's),
 * `GET /api/approvals/count` (`{ count }`) and
 * `POST /api/jobs/:id/steps/:stepId/approval` `{ decision, inputDigest, comment?, input? }`
 * (`input`: approve with edits, docs/api.md "Approve with edits"; the body's JSON depth and size
 * limits hold for it, then the runtime's bounds of a plan's inputs) and
 * `POST /api/jobs/:id/plan-approval` `{ decision, planDigest, comment? }` (docs/api.md, "Plan
 * warrants"), decided by
 * the request's caller as approver: 200 with the job at its next stop, or the refusal's status
 * (approvalRefusalStatus). Nothing in the body names the approver. Without an authentication
 * mode (nor a `resolveCaller`) every approval route is 403: nobody approves as `http`
 * (docs/api.md, "Reading and tenants").
 */
import type { FastifyPluginCallback, FastifyReply } from 'fastify';
import { ErrorCode } from '../../errors/error-codes.js';

import { errorText, jobAnswer, REMOTE_ANSWER } from '../../json/answer.js';
import { isJsonObject } from '../parse-json-body.js';
import { approvalRefusalStatus } from '../status-codes.js';
import type { IdentifiedRouteOptions } from './request-caller.js';
import { inRequestTraceContext } from '../trace-context.js';
import { LIST_LIMIT_INVALID, listLimit } from './jobs.js';

/** The answer of every approval route to a request as `http` (no mode, no operator token). */
function noApprover(reply: FastifyReply) {
  return reply.code(403).send({
    error:
      'Approvals need an identified caller: the operator token (the console address warrant serve prints) or an authentication mode; nobody approves as http',
  });
}

export const approvalRoutes: FastifyPluginCallback<IdentifiedRouteOptions> = (
  app,
  options,
  done,
) => {
  const { runtime, callerOf, identified } = options;
  app.get<{ Querystring: Record<string, string | undefined> }>(
    '/api/approvals',
    async (request, reply) => {
      if (!identified(request)) return noApprover(reply);
      const { jobId, cursor, limit: limitText } = request.query;
      const limit = listLimit(limitText);
      if (limit === undefined) return reply.code(400).send({ error: LIST_LIMIT_INVALID });
      const caller = await callerOf(request);
      if (caller === undefined) return [];
      try {
        const page = await runtime.approvalPage({
          caller,
          limit,
          ...(jobId === undefined ? {} : { jobId }),
          ...(cursor === undefined ? {} : { cursor }),
        });
        if (page.nextCursor !== undefined) reply.header('warrant-next-cursor', page.nextCursor);
        return page.requests;
      } catch (error) {
        if ((error as { code?: unknown } | null)?.code !== ErrorCode.JOB_FILTER_INVALID)
          throw error;
        return reply.code(400).send({ error: 'cursor is not a cursor of this list' });
      }
    },
  );
  app.get('/api/approvals/count', async (request, reply) => {
    if (!identified(request)) return noApprover(reply);
    const caller = await callerOf(request);
    if (caller === undefined) return { count: 0 };
    return { count: await runtime.countApprovals({ caller }) };
  });
  app.post<{ Params: { id: string; stepId: string }; Body: unknown }>(
    '/api/jobs/:id/steps/:stepId/approval',
    async (request, reply) => {
      if (!identified(request)) return noApprover(reply);
      const body: unknown = request.body;
      if (!isJsonObject(body))
        return reply.code(400).send({
          error: 'Body must be a JSON object { decision, inputDigest, comment?, input? }',
        });
      const approver = await callerOf(request);
      if (approver === undefined)
        return reply.code(403).send({ error: 'An approval needs an identified approver' });
      try {
        const job = await inRequestTraceContext(request.headers, () =>
          runtime.decideApproval({
            jobId: request.params.id,
            stepId: request.params.stepId,
            inputDigest: body.inputDigest as string,
            approver,
            decision: body.decision as 'approve' | 'reject',
            ...(body.comment === undefined ? {} : { comment: body.comment as string }),
            ...(body.input === undefined ? {} : { input: body.input }),
          }),
        );
        return jobAnswer(job, REMOTE_ANSWER);
      } catch (error) {
        const status = approvalRefusalStatus((error as { code?: unknown } | null)?.code);
        if (status === undefined) throw error;
        return reply
          .code(status)
          .send({ error: errorText((error as Error).message, REMOTE_ANSWER) });
      }
    },
  );
  app.post<{ Params: { id: string }; Body: unknown }>(
    '/api/jobs/:id/plan-approval',
    async (request, reply) => {
      if (!identified(request)) return noApprover(reply);
      const body: unknown = request.body;
      if (!isJsonObject(body))
        return reply
          .code(400)
          .send({ error: 'Body must be a JSON object { decision, planDigest, comment? }' });
      const approver = await callerOf(request);
      if (approver === undefined)
        return reply.code(403).send({ error: 'An approval needs an identified approver' });
      try {
        const job = await inRequestTraceContext(request.headers, () =>
          runtime.decideApproval({
            kind: 'plan',
            jobId: request.params.id,
            planDigest: body.planDigest as string,
            approver,
            decision: body.decision as 'approve' | 'reject',
            ...(body.comment === undefined ? {} : { comment: body.comment as string }),
          }),
        );
        return jobAnswer(job, REMOTE_ANSWER);
      } catch (error) {
        const status = approvalRefusalStatus((error as { code?: unknown } | null)?.code);
        if (status === undefined) throw error;
        return reply
          .code(status)
          .send({ error: errorText((error as Error).message, REMOTE_ANSWER) });
      }
    },
  );
  done();
};
