/**
 * `GET /api/capabilities`, `GET /api/capabilities/:name` and
 * `POST /api/capabilities/:name/execute` `{ input?, capabilityVersion? }`: a one-step plan through
 * the runtime, as the request's caller (docs/guide/http.md, "HTTP routes").
 */
import type { FastifyPluginCallback } from 'fastify';
import { isPlanAdmissionError, type CapabilityRisk, type ExecutionPlan } from '../../index.js';
import {
  errorText,
  jobAnswer,
  refusalAnswer,
  REMOTE_ANSWER,
  valueAnswer,
} from '../../json/answer.js';
import { isJsonObject } from '../parse-json-body.js';
import {
  admissionStatus,
  failedJobStatus,
  limitOfDenial,
  retryAfterSeconds,
} from '../status-codes.js';
import type { GovernedRouteOptions } from './request-caller.js';
import { inRequestTraceContext } from '../trace-context.js';
import { capabilityInputJsonSchema } from '../../capabilities/json-schema.js';

/** True for what `await` would wait for (a promise or any other thenable). */
function isThenable<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return (
    ((typeof value === 'object' && value !== null) || typeof value === 'function') &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}

interface ExecuteBody {
  input?: unknown;
  capabilityVersion?: unknown;
}

export const capabilityRoutes: FastifyPluginCallback<GovernedRouteOptions> = (
  app,
  options,
  done,
) => {
  const { runtime, callerOf } = options;
  // Each descriptor with its input's full JSON Schema (docs/guide/http.md, "HTTP routes"): the
  // console shows it, since the descriptor's field record flattens enums, integers and bounds.
  app.get('/api/capabilities', async () =>
    runtime.listCapabilities().map((descriptor) => ({
      ...descriptor,
      inputJsonSchema: capabilityInputJsonSchema(descriptor.name),
    })),
  );
  app.get<{ Params: { name: string }; Querystring: { version?: string } }>(
    '/api/capabilities/:name',
    async (request, reply) => {
      const found = runtime.describeCapability(request.params.name, request.query.version);
      return found ?? reply.code(404).send({ error: `Unknown capability: ${request.params.name}` });
    },
  );

  // The risk of each capability this route has run. The inventory only grows and a name keeps its
  // registration (docs/api.md, "runtime.use"), so a name found once is found the same way later;
  // building a whole descriptor per request cost about 6% of the server's CPU
  // (bench/http/execute.bench.ts). Bounded by the number of registered capabilities.
  const riskOf = new Map<string, CapabilityRisk>();
  const registeredRisk = (name: string): CapabilityRisk | undefined => {
    const known = riskOf.get(name);
    if (known !== undefined) return known;
    const risk = runtime.describeCapability(name)?.risk;
    if (risk !== undefined) riskOf.set(name, risk);
    return risk;
  };

  app.post<{ Params: { name: string }; Body: ExecuteBody }>(
    '/api/capabilities/:name/execute',
    async (request, reply) => {
      const body: unknown = request.body ?? {};
      if (!isJsonObject(body))
        return reply
          .code(400)
          .send({ error: 'Body must be a JSON object { input?, capabilityVersion? }' });
      const name = request.params.name;
      const risk = registeredRisk(name);
      if (risk === undefined) return reply.code(404).send({ error: `Unknown capability: ${name}` });
      // `approved` and any other body field are ignored: only the host's authorizer decides.
      const step: ExecutionPlan['steps'][number] = {
        id: 'execute',
        capability: name,
        input: body.input,
      };
      if (body.capabilityVersion !== undefined)
        step.capabilityVersion = body.capabilityVersion as string;
      try {
        // Awaited only when it is a promise: the default caller costs no tick.
        const found = callerOf(request);
        const caller = isThenable(found) ? await found : found;
        const job = await inRequestTraceContext(request.headers, () =>
          runtime.executePlan(
            {
              // 2.0 when the runtime admits it (docs/api.md, "Plan version 2.0"), else 1.0.
              version: runtime.planVersions?.includes('2.0') === true ? '2.0' : '1.0',
              goal: `HTTP execute ${name}`,
              steps: [step],
            },
            { caller },
          ),
        );
        if (job.status === 'completed') {
          return {
            capability: name,
            risk,
            jobId: job.id,
            result: valueAnswer(job.result),
          };
        }
        // Stopped for approval (the runtime's approvals option): accepted, nothing ran yet.
        if (job.status === 'awaiting_approval') {
          return reply
            .code(202)
            .send({ capability: name, risk, jobId: job.id, job: jobAnswer(job, REMOTE_ANSWER) });
        }
        const limit = limitOfDenial(job);
        if (limit !== undefined) {
          const { limits } = await runtime.listLimits();
          const windowMs = limits.find((configured) => configured.name === limit)?.windowMs;
          reply.header('retry-after', String(retryAfterSeconds(windowMs)));
          return reply.code(429).send({
            error: errorText(job.error ?? 'Execution failed', REMOTE_ANSWER),
            jobId: job.id,
          });
        }
        return reply.code(failedJobStatus(job)).send({
          error: errorText(job.error ?? 'Execution failed', REMOTE_ANSWER),
          jobId: job.id,
        });
      } catch (error) {
        if (!isPlanAdmissionError(error)) throw error;
        return reply.code(admissionStatus(error.issues)).send(refusalAnswer(error, REMOTE_ANSWER));
      }
    },
  );
  done();
};
