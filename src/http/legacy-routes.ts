/**
 * The two documented legacy bypasses (docs/guide/http.md, "The two known bypasses"), off unless
 * `--legacy-routes`:
 *
 * - `POST /api/jobs/:id/execute` re-executes a stored job's steps directly: it authorizes each
 *   step, but skips OperatorRuntime, plan admission and structural capture (docs/decisions.md),
 *   and records nothing.
 * - `GET /api/:provider/status` calls that provider's `<provider>.status` capability directly,
 *   ungoverned: no authorizer, no job. Only a capability whose risk is `read` is called; any
 *   other answers 403 (docs/guide/http.md, "The two known bypasses").
 *
 * They are the only code outside the executor that invokes capabilities; the governance
 * baseline (tools/quality) lists them as LEGACY_BYPASS. When disabled they answer 410.
 */
import type { FastifyInstance } from 'fastify';
import { checkDecision } from '../authorization/check-decision.js';
import { defaultAuthorizer } from '../authorization/default-policy.js';
import { capabilityInventory } from '../capabilities/inventory.js';
import { describeThrown } from '../errors/describe-value.js';
import { oneLineError } from '../errors/error-text.js';
import type { ExecutionAuthorizer, ExecutionContext, OperatorRuntime } from '../index.js';
import {
  collectReferences,
  parseReference,
  resolveInput,
  type LocatedReference,
} from '../plan/references.js';
import { toJsonSafe } from '../json/json-value.js';

const silent = { debug() {}, info() {}, warn() {}, error() {} };
const neverAborted = new AbortController().signal;

export interface LegacyRouteOptions {
  readonly enabled: boolean;
  readonly authorizer: ExecutionAuthorizer | undefined;
}

interface LegacyStepOutcome {
  id: string;
  capability: string;
  status: 'completed' | 'denied' | 'failed';
  result?: unknown;
  error?: string;
}

function references(input: unknown, index: number, ids: Map<string, number>): LocatedReference[] {
  const found: LocatedReference[] = [];
  collectReferences(input, (text, path) => {
    const parsed = parseReference(text, index, ids);
    if ('code' in parsed) throw new Error(parsed.message);
    found.push({ ...parsed, path });
  });
  return found;
}

export function registerLegacyRoutes(
  app: FastifyInstance,
  runtime: OperatorRuntime,
  options: LegacyRouteOptions,
): void {
  const gone = {
    error:
      'This legacy route is disabled. Submit plans through POST /api/plans or POST /api/capabilities/:name/execute (governed).',
  };

  app.post<{ Params: { id: string } }>('/api/jobs/:id/execute', async (request, reply) => {
    if (!options.enabled) return reply.code(410).send(gone);
    const job = await runtime.getJob(request.params.id);
    if (job === undefined)
      return reply.code(404).send({ error: `Unknown job: ${request.params.id}` });
    const authorizer = options.authorizer ?? defaultAuthorizer;
    const ids = new Map<string, number>();
    job.steps.forEach((step, index) => ids.set(step.id, ids.get(step.id) ?? index));
    const results: unknown[] = [];
    const outcomes: LegacyStepOutcome[] = [];
    for (const [index, step] of job.steps.entries()) {
      const outcome: LegacyStepOutcome = {
        id: step.id,
        capability: step.capability,
        status: 'failed',
      };
      outcomes.push(outcome);
      const registered = capabilityInventory().get(step.capability);
      if (registered === undefined) {
        outcome.error = `Unknown capability: ${step.capability}`;
        break;
      }
      try {
        const input = resolveInput(step.input, references(step.input, index, ids), results);
        const decision = checkDecision(
          await authorizer.authorize(
            Object.freeze({
              jobId: job.id,
              stepId: step.id,
              capability: registered.identity,
              input,
              caller: { id: 'legacy-route' },
            }),
          ),
        );
        if (decision.kind !== 'allow') {
          outcome.status = decision.kind === 'deny' ? 'denied' : 'failed';
          outcome.error =
            decision.kind === 'deny'
              ? oneLineError(decision.reason ?? `Capability not permitted: ${registered.name}`)
              : 'Invalid authorization decision';
          break;
        }
        const context: ExecutionContext = {
          jobId: job.id,
          stepId: step.id,
          caller: undefined,
          logger: silent,
          signal: neverAborted,
        };
        const result: unknown = await Reflect.apply(registered.execute, registered.target, [
          input,
          context,
        ]);
        results.push(result);
        outcome.status = 'completed';
        outcome.result = toJsonSafe(result);
      } catch (error) {
        outcome.error = oneLineError(describeThrown(error));
        break;
      }
    }
    const last = outcomes.at(-1);
    const status = last?.status === 'completed' ? 200 : last?.status === 'denied' ? 403 : 500;
    return reply.code(status).send({ jobId: job.id, legacy: true, steps: outcomes });
  });

  app.get<{ Params: { provider: string } }>('/api/:provider/status', async (request, reply) => {
    if (!options.enabled) return reply.code(410).send(gone);
    const name = `${request.params.provider}.status`;
    const registered = capabilityInventory().get(name);
    if (registered === undefined)
      return reply.code(404).send({ error: `Unknown provider: ${request.params.provider}` });
    // Ungoverned, so never more than a read: a write or destructive "status" is refused.
    if (registered.risk !== 'read')
      return reply.code(403).send({
        error: `The legacy status route calls read capabilities only: ${name} is ${registered.risk}`,
      });
    const context: ExecutionContext = {
      jobId: 'legacy-status',
      stepId: name,
      caller: undefined,
      logger: silent,
      signal: neverAborted,
    };
    try {
      const status: unknown = await Reflect.apply(registered.execute, registered.target, [
        {},
        context,
      ]);
      return { provider: request.params.provider, legacy: true, status: toJsonSafe(status) };
    } catch (error) {
      return reply
        .code(500)
        .send({ error: `Status check failed: ${oneLineError(describeThrown(error))}` });
    }
  });
}
