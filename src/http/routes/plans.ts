/**
 * `POST /api/plans`: a plan through the runtime as the request's caller; 201 with the completed
 * job, 202 when it stopped for approval, else the failed job's status; with `Prefer:
 * respond-async`, 202 with the queued job and its `Location`; a repeated idempotency key 200 with
 * the first job and `Idempotent-Replayed: true`, a key used for another plan 409
 * (docs/guide/http.md, "HTTP routes"): the runtime says which submission replayed (`onReplay`,
 * `submitPlan`'s `replayed`) and waits for the first job itself (docs/api.md, "Idempotency").
 * With `queued` (`warrant serve --queue`) every plan goes through the queue. The body's
 * `approval: 'plan'` asks one approval for the whole plan (docs/api.md, "Plan warrants"). `POST /api/plans/preview`: each step's decision, nothing run (docs/api.md,
 * "runtime.previewPlan"). `GET /api/plans/schema`: the JSON Schema of an admissible plan
 * (docs/api.md, "runtime.planSchema"), introspection like `GET /api/capabilities`.
 */
import type { FastifyPluginCallback, FastifyReply } from 'fastify';
import { ErrorCode } from '../../errors/error-codes.js';
import { isPlanAdmissionError, type ExecutionPlan, type Job } from '../../index.js';
import { errorText, jobAnswer, refusalAnswer, REMOTE_ANSWER } from '../../json/answer.js';
import { admissionStatus, failedJobStatus } from '../status-codes.js';
import type { GovernedRouteOptions } from './request-caller.js';
import { inRequestTraceContext } from '../trace-context.js';

/** What the plan routes are given. */
export interface PlanRouteOptions extends GovernedRouteOptions {
  /** Every plan goes through the queue (`warrant serve --queue`). */
  readonly queued: boolean;
}

/**
 * The body's `approval` (docs/api.md, "Plan warrants"), taken out of the plan: `'steps'` (the
 * default) or `'plan'`; undefined with `invalid` true for any other value.
 */
function approvalOf(body: unknown): {
  plan: unknown;
  approval: 'steps' | 'plan' | undefined;
  invalid: boolean;
} {
  if (
    typeof body !== 'object' ||
    body === null ||
    Array.isArray(body) ||
    !Object.hasOwn(body, 'approval')
  )
    return { plan: body, approval: undefined, invalid: false };
  const { approval, ...plan } = body as Record<string, unknown>;
  if (approval === 'steps' || approval === 'plan') return { plan, approval, invalid: false };
  return { plan, approval: undefined, invalid: true };
}

/** The answer to a repeated idempotency key: 200, the first job, where to find it. */
function replayAnswer(reply: FastifyReply, jobId: string, first: Job | undefined): FastifyReply {
  // Recorded before the runtime reports the replay: missing only when the store lost it since.
  if (first === undefined) throw new Error(`Job ${jobId} is not in the store`);
  return reply
    .code(200)
    .header('idempotent-replayed', 'true')
    .header('location', `/api/jobs/${encodeURIComponent(jobId)}`)
    .send(jobAnswer(first, REMOTE_ANSWER));
}

export const planRoutes: FastifyPluginCallback<PlanRouteOptions> = (app, options, done) => {
  const { runtime, callerOf, queued } = options;
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
      const taken = approvalOf(request.body);
      if (taken.invalid)
        return reply.code(400).send({
          error: "approval must be 'steps' or 'plan'",
          code: ErrorCode.EXECUTE_OPTIONS_INVALID,
        });
      const plan = taken.plan as ExecutionPlan;
      const approval = taken.approval === undefined ? {} : { approval: taken.approval };
      // `Prefer: respond-async` (RFC 7240): queued, not run inline; 202 with where to look.
      const respondAsync = /(?:^|,)\s*respond-async\s*(?:[,;]|$)/i.test(
        String(request.headers.prefer ?? ''),
      );
      let job: Job | undefined;
      if (respondAsync || queued) {
        // Through the queue; always with `warrant serve --queue`, where workers run every plan.
        const { jobId, replayed } = await inRequestTraceContext(request.headers, () =>
          runtime.submitPlan(plan, { caller, ...approval }),
        );
        if (replayed)
          return replayAnswer(
            reply,
            jobId,
            respondAsync ? await runtime.getJob(jobId) : await runtime.waitForJob(jobId),
          );
        if (respondAsync) {
          // Recorded queued already: should reading it back fail (the store cut off a moment
          // later), the answer still says so and where to look.
          const queuedJob = await runtime.getJob(jobId).catch(() => undefined);
          return reply
            .code(202)
            .header('location', `/api/jobs/${encodeURIComponent(jobId)}`)
            .header('preference-applied', 'respond-async')
            .send(
              queuedJob === undefined
                ? { id: jobId, status: 'queued' }
                : jobAnswer(queuedJob, REMOTE_ANSWER),
            );
        }
        job = await runtime.waitForJob(jobId);
        if (job === undefined) throw new Error(`Job ${jobId} is not in the store`);
      } else {
        let replayOf: string | undefined;
        job = await inRequestTraceContext(request.headers, () =>
          runtime.executePlan(plan, {
            caller,
            ...approval,
            onReplay: (jobId) => {
              replayOf = jobId;
            },
          }),
        );
        if (replayOf !== undefined) return replayAnswer(reply, replayOf, job);
      }
      if (job.status === 'completed') return reply.code(201).send(jobAnswer(job, REMOTE_ANSWER));
      if (job.status === 'awaiting_approval')
        return reply.code(202).send(jobAnswer(job, REMOTE_ANSWER));
      // A plan refused at its preview names its code (docs/api.md, "Plan warrants").
      const planDenied = job.error?.startsWith(`${ErrorCode.PLAN_DENIED}:`) === true;
      return reply.code(failedJobStatus(job)).send({
        error: errorText(job.error ?? 'Execution failed', REMOTE_ANSWER),
        ...(planDenied && { code: ErrorCode.PLAN_DENIED }),
        job: jobAnswer(job, REMOTE_ANSWER),
      });
    } catch (error) {
      // `approval: 'plan'` on a server without approvals (docs/api.md, "Plan warrants").
      if ((error as { code?: unknown } | null)?.code === ErrorCode.EXECUTE_OPTIONS_INVALID) {
        return reply.code(400).send({
          error: errorText((error as Error).message, REMOTE_ANSWER),
          code: ErrorCode.EXECUTE_OPTIONS_INVALID,
        });
      }
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
  done();
};
