/**
 * `POST /api/plans`: a plan through the runtime as the request's caller; 201 with the completed
 * job, 202 when it stopped for approval, else the failed job's status; with `Prefer:
 * respond-async`, 202 with the queued job and its `Location` (README "HTTP routes").
 */
import type { FastifyInstance } from 'fastify';
import {
  isPlanAdmissionError,
  type ExecutionPlan,
  type Job,
  type OperatorRuntime,
} from '../../index.js';
import { errorText, jobAnswer, refusalAnswer, REMOTE_ANSWER } from '../../json/answer.js';
import { admissionStatus, failedJobStatus } from '../status-codes.js';
import type { RequestCaller } from './request-caller.js';

export function registerPlanRoute(
  app: FastifyInstance,
  runtime: OperatorRuntime,
  callerOf: RequestCaller,
): void {
  app.post<{ Body: unknown }>('/api/plans', async (request, reply) => {
    try {
      // `Prefer: respond-async` (RFC 7240): queued, not run inline; 202 with where to look.
      if (/(?:^|,)\s*respond-async\s*(?:[,;]|$)/i.test(String(request.headers.prefer ?? ''))) {
        const { jobId } = await runtime.submitPlan(request.body as ExecutionPlan, {
          caller: await callerOf(request),
        });
        const queued = await runtime.getJob(jobId);
        return reply
          .code(202)
          .header('location', `/api/jobs/${encodeURIComponent(jobId)}`)
          .header('preference-applied', 'respond-async')
          .send(jobAnswer(queued as Job, REMOTE_ANSWER));
      }
      const job = await runtime.executePlan(request.body as ExecutionPlan, {
        caller: await callerOf(request),
      });
      if (job.status === 'completed') return reply.code(201).send(jobAnswer(job, REMOTE_ANSWER));
      if (job.status === 'awaiting_approval')
        return reply.code(202).send(jobAnswer(job, REMOTE_ANSWER));
      return reply.code(failedJobStatus(job)).send({
        error: errorText(job.error ?? 'Execution failed', REMOTE_ANSWER),
        job: jobAnswer(job, REMOTE_ANSWER),
      });
    } catch (error) {
      if (!isPlanAdmissionError(error)) throw error;
      return reply.code(admissionStatus(error.issues)).send(refusalAnswer(error, REMOTE_ANSWER));
    }
  });
}
