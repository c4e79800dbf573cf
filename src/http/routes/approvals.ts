/**
 * `GET /api/approvals` (pending requests; `?jobId=` one job's) and
 * `POST /api/jobs/:id/steps/:stepId/approval` `{ decision, inputDigest, comment? }`, decided by
 * the request's caller as approver: 200 with the job at its next stop, or the refusal's status
 * (approvalRefusalStatus). Nothing in the body names the approver.
 */
import type { FastifyInstance } from 'fastify';
import type { OperatorRuntime } from '../../index.js';
import { errorText, jobAnswer, REMOTE_ANSWER } from '../../json/answer.js';
import { isJsonObject } from '../parse-json-body.js';
import { approvalRefusalStatus } from '../status-codes.js';
import type { RequestCaller } from './request-caller.js';
import { inRequestTraceContext } from '../trace-context.js';

export function registerApprovalRoutes(
  app: FastifyInstance,
  runtime: OperatorRuntime,
  callerOf: RequestCaller,
): void {
  app.get<{ Querystring: Record<string, string | undefined> }>(
    '/api/approvals',
    async (request) => {
      const { jobId } = request.query;
      return runtime.listApprovals(jobId === undefined ? {} : { jobId });
    },
  );
  app.post<{ Params: { id: string; stepId: string }; Body: unknown }>(
    '/api/jobs/:id/steps/:stepId/approval',
    async (request, reply) => {
      const body: unknown = request.body;
      if (!isJsonObject(body))
        return reply
          .code(400)
          .send({ error: 'Body must be a JSON object { decision, inputDigest, comment? }' });
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
}
