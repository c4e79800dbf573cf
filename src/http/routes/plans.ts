/**
 * `POST /api/plans`: a plan through the runtime as the request's caller; 201 with the completed
 * job, 202 when it stopped for approval, else the failed job's status; with `Prefer:
 * respond-async`, 202 with the queued job and its `Location`; a repeated idempotency key 200 with
 * the first job and `Idempotent-Replayed: true`, a key used for another plan 409
 * (docs/guide/http.md, "HTTP routes"). With `queued` (`warrant serve --queue`) every plan goes
 * through the queue. `POST /api/plans/preview`: each step's decision, nothing run (docs/api.md,
 * "runtime.previewPlan"). `GET /api/plans/schema`: the JSON Schema of an admissible plan
 * (docs/api.md, "runtime.planSchema"), introspection like `GET /api/capabilities`.
 */
import type { FastifyInstance } from 'fastify';
import { ErrorCode } from '../../errors/error-codes.js';
import {
  isPlanAdmissionError,
  type ExecutionPlan,
  type Job,
  type OperatorRuntime,
} from '../../index.js';
import { errorText, jobAnswer, refusalAnswer, REMOTE_ANSWER } from '../../json/answer.js';
import { admissionStatus, failedJobStatus } from '../status-codes.js';
import type { RequestCaller } from './request-caller.js';
import { inRequestTraceContext } from '../trace-context.js';

export function registerPlanRoute(
  app: FastifyInstance,
  runtime: OperatorRuntime,
  callerOf: RequestCaller,
  queued = false,
): void {
  app.get<{ Querystring: { version?: string } }>('/api/plans/schema', async (request, reply) => {
    const { version } = request.query;
    try {
      return runtime.planSchema(version === undefined ? undefined : { version: version as never });
    } catch (error) {
      if ((error as { code?: unknown } | null)?.code !== ErrorCode.PLAN_SCHEMA_OPTIONS_INVALID)
        throw error;
      return reply.code(400).send({ error: errorText((error as Error).message, REMOTE_ANSWER) });
    }
  });

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
      const plan = request.body as ExecutionPlan;
      // `Prefer: respond-async` (RFC 7240): queued, not run inline; 202 with where to look.
      const respondAsync = /(?:^|,)\s*respond-async\s*(?:[,;]|$)/i.test(
        String(request.headers.prefer ?? ''),
      );
      let job: Job;
      if (respondAsync || queued || hasIdempotencyKey(plan)) {
        // Through the queue, so that a repeated key is told apart (200, Idempotent-Replayed);
        // always with `warrant serve --queue`, where workers run every plan.
        const submitted = await inRequestTraceContext(request.headers, () =>
          runtime.submitPlan(plan, { caller }),
        );
        const { jobId } = submitted;
        if (submitted.replayed) {
          const first = await recordedJob(runtime, jobId, respondAsync);
          return reply
            .code(200)
            .header('idempotent-replayed', 'true')
            .header('location', `/api/jobs/${encodeURIComponent(jobId)}`)
            .send(jobAnswer(first, REMOTE_ANSWER));
        }
        if (respondAsync) {
          // Recorded queued already: should reading it back fail (the store cut off a moment
          // later), the answer still says so and where to look.
          const queued = await runtime.getJob(jobId).catch(() => undefined);
          return reply
            .code(202)
            .header('location', `/api/jobs/${encodeURIComponent(jobId)}`)
            .header('preference-applied', 'respond-async')
            .send(
              queued === undefined
                ? { id: jobId, status: 'queued' }
                : jobAnswer(queued, REMOTE_ANSWER),
            );
        }
        job = await recordedJob(runtime, jobId, false);
      } else {
        job = await inRequestTraceContext(request.headers, () =>
          runtime.executePlan(plan, { caller }),
        );
      }
      if (job.status === 'completed') return reply.code(201).send(jobAnswer(job, REMOTE_ANSWER));
      if (job.status === 'awaiting_approval')
        return reply.code(202).send(jobAnswer(job, REMOTE_ANSWER));
      return reply.code(failedJobStatus(job)).send({
        error: errorText(job.error ?? 'Execution failed', REMOTE_ANSWER),
        job: jobAnswer(job, REMOTE_ANSWER),
      });
    } catch (error) {
      if ((error as { code?: unknown } | null)?.code === ErrorCode.IDEMPOTENCY_CONFLICT) {
        return reply.code(409).send({
          error: errorText((error as Error).message, REMOTE_ANSWER),
          code: ErrorCode.IDEMPOTENCY_CONFLICT,
        });
      }
      if (!isPlanAdmissionError(error)) throw error;
      return reply.code(admissionStatus(error.issues)).send(refusalAnswer(error, REMOTE_ANSWER));
    }
  });
}

/** The plan names an idempotency key (read once, only to choose the path; admission checks it). */
function hasIdempotencyKey(plan: unknown): boolean {
  return (
    typeof plan === 'object' &&
    plan !== null &&
    typeof (plan as { idempotencyKey?: unknown }).idempotencyKey === 'string'
  );
}

/**
 * A job once recorded (its submitter may be another process still writing it), as it stands
 * when `now`, else once it is no longer queued or executing.
 */
async function recordedJob(runtime: OperatorRuntime, jobId: string, now: boolean): Promise<Job> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const job = now ? await runtime.getJob(jobId) : await runtime.waitForJob(jobId);
    if (job !== undefined) return job;
    if (Date.now() > deadline) throw new Error(`Job ${jobId} was never recorded`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
