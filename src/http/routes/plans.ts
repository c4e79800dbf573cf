/**
 * `POST /api/plans`: a plan through the runtime as the request's caller; 201 with the completed
 * job, 202 when it stopped for approval, else the failed job's status (README "HTTP routes").
 * `POST /api/plans/preview`: each step's decision, nothing run (docs/api.md, "runtime.previewPlan").
 */
import type { FastifyInstance } from 'fastify';
import { isPlanAdmissionError, type ExecutionPlan, type OperatorRuntime } from '../../index.js';
import { errorText, jobAnswer, refusalAnswer, REMOTE_ANSWER } from '../../json/answer.js';
import { admissionStatus, failedJobStatus } from '../status-codes.js';
import type { RequestCaller } from './request-caller.js';
import { inRequestTraceContext } from '../trace-context.js';

export function registerPlanRoute(
  app: FastifyInstance,
  runtime: OperatorRuntime,
  callerOf: RequestCaller,
): void {
  app.post<{ Body: unknown }>('/api/plans/preview', async (request, reply) => {
    try {
      const preview = await runtime.previewPlan(request.body as ExecutionPlan, {
        caller: await callerOf(request),
      });
      // Reasons are the authorizer's (or the schema's) text: one line each at this edge.
      const steps = preview.steps.map((step) =>
        step.reason === undefined
          ? step
          : { ...step, reason: errorText(step.reason, REMOTE_ANSWER) },
      );
      return reply.code(200).send({ steps });
    } catch (error) {
      if (!isPlanAdmissionError(error)) throw error;
      return reply.code(admissionStatus(error.issues)).send(refusalAnswer(error, REMOTE_ANSWER));
    }
  });

  app.post<{ Body: unknown }>('/api/plans', async (request, reply) => {
    try {
      const caller = await callerOf(request);
      const job = await inRequestTraceContext(request.headers, () =>
        runtime.executePlan(request.body as ExecutionPlan, { caller }),
      );
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
