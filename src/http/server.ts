/**
 * The HTTP face of `warrant serve` (API.md §11): routes parse, call the runtime through the
 * package root and format; they never authorize, validate plans or touch a store (STYLE.md
 * rule 6). Errors never carry stack traces or inner messages (rule 13).
 */
import { timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import Fastify, { type FastifyError, type FastifyInstance, type FastifyRequest } from 'fastify';
import {
  isPlanAdmissionError,
  type ExecutionAuthorizer,
  type ExecutionCaller,
  type ExecutionPlan,
  type JobListFilter,
  type OperatorRuntime,
} from '../index.js';
import { registerLegacyRoutes } from './legacy-routes.js';
import { JsonBodyError, parseJsonBody } from './parse-json-body.js';
import { toJsonSafe } from '../jobs/json-value.js';
import { admissionStatus, failedJobStatus } from './status-codes.js';

export interface HttpServerOptions {
  /** Requests must carry `Authorization: Bearer <token>` on every /api route (else 401). */
  readonly token?: string;
  /** The caller of a request; default: `{ id: 'http' }` (or `{ id: 'token' }` with a token). */
  readonly resolveCaller?: (
    request: FastifyRequest,
  ) => ExecutionCaller | undefined | Promise<ExecutionCaller | undefined>;
  /** Enables the two documented legacy bypasses (API.md §11); off by default (410). */
  readonly legacyRoutes?: boolean;
  /** The authorizer the legacy job route uses; the runtime's own for governed routes. */
  readonly legacyAuthorizer?: ExecutionAuthorizer;
  /** Largest request body in bytes. Default 1 MiB. */
  readonly bodyLimit?: number;
  /** A request (headers and body) must arrive within this time, or its socket is closed
   * (slow-loris defence). Default 30 s. */
  readonly requestTimeoutMs?: number;
}

interface ExecuteBody {
  input?: unknown;
  capabilityVersion?: unknown;
}

function sameToken(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A fixed message per kind of bad request: never the parser's or a driver's own text. */
function clientErrorMessage(error: FastifyError): string {
  return error instanceof JsonBodyError ? error.message : 'Bad request';
}

/** Builds (does not start) the server. */
export function createHttpServer(
  runtime: OperatorRuntime,
  options: HttpServerOptions = {},
): FastifyInstance {
  const app = Fastify({
    logger: false,
    bodyLimit: options.bodyLimit ?? 1024 * 1024,
    // Node checks request deadlines on an interval (30 s by default): check often enough that a
    // slow-loris connection is closed close to its deadline.
    serverFactory: (handler) => {
      const requestTimeout = options.requestTimeoutMs ?? 30_000;
      return createServer(
        {
          requestTimeout,
          headersTimeout: requestTimeout,
          connectionsCheckingInterval: Math.max(50, Math.min(1000, requestTimeout / 4)),
        },
        handler,
      );
    },
    return503OnClosing: true,
  });
  // JSON only: any other content type is 415.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    try {
      done(null, parseJsonBody(body as string));
    } catch (error) {
      done(error as Error, undefined);
    }
  });

  app.setErrorHandler((error: FastifyError, _request, reply) => {
    const status = error.statusCode;
    if (status === 413) return reply.code(413).send({ error: 'Request body is too large' });
    if (status === 415)
      return reply.code(415).send({ error: 'Content-Type must be application/json' });
    if (status !== undefined && status >= 400 && status < 500) {
      return reply.code(400).send({ error: clientErrorMessage(error) });
    }
    return reply.code(500).send({ error: 'Internal error' });
  });
  app.setNotFoundHandler((_request, reply) => reply.code(404).send({ error: 'Not found' }));

  // Without a resolver every request has the same caller: one frozen object (the runtime
  // snapshots the caller of each plan anyway), no promise per request.
  const defaultCaller: ExecutionCaller = Object.freeze({
    id: options.token === undefined ? 'http' : 'token',
  });
  const caller = (
    request: FastifyRequest,
  ): ExecutionCaller | undefined | Promise<ExecutionCaller | undefined> =>
    options.resolveCaller ? options.resolveCaller(request) : defaultCaller;

  // The token check is installed only with a token: without one the hook did nothing, yet cost
  // every request a promise and a tick (issue 8, bench/http/execute.bench.ts).
  const token = options.token;
  if (token !== undefined) {
    app.addHook('onRequest', async (request, reply) => {
      if (!request.url.startsWith('/api')) return;
      const header = request.headers.authorization;
      const given =
        typeof header === 'string' && header.startsWith('Bearer ') ? header.slice(7) : '';
      if (!sameToken(given, token)) {
        return reply.code(401).header('www-authenticate', 'Bearer').send({ error: 'Unauthorized' });
      }
    });
  }

  app.get('/health', async () => ({ status: 'ok' }));

  app.get('/api/capabilities', async () => runtime.listCapabilities());
  app.get<{ Params: { name: string }; Querystring: { version?: string } }>(
    '/api/capabilities/:name',
    async (request, reply) => {
      const found = runtime.describeCapability(request.params.name, request.query.version);
      return found ?? reply.code(404).send({ error: `Unknown capability: ${request.params.name}` });
    },
  );

  app.post<{ Params: { name: string }; Body: ExecuteBody }>(
    '/api/capabilities/:name/execute',
    async (request, reply) => {
      const body: unknown = request.body ?? {};
      if (!isObject(body))
        return reply
          .code(400)
          .send({ error: 'Body must be a JSON object { input?, capabilityVersion? }' });
      const name = request.params.name;
      const descriptor = runtime.describeCapability(name);
      if (descriptor === undefined)
        return reply.code(404).send({ error: `Unknown capability: ${name}` });
      // `approved` and any other body field are ignored: only the host's authorizer decides.
      const step: ExecutionPlan['steps'][number] = {
        id: 'execute',
        capability: name,
        input: body.input,
      };
      if (body.capabilityVersion !== undefined)
        step.capabilityVersion = body.capabilityVersion as string;
      try {
        const job = await runtime.executePlan(
          { version: '1.0', goal: `HTTP execute ${name}`, steps: [step] },
          { caller: await caller(request) },
        );
        if (job.status === 'completed') {
          return {
            capability: name,
            risk: descriptor.risk,
            jobId: job.id,
            result: toJsonSafe(job.result),
          };
        }
        return reply.code(failedJobStatus(job)).send({ error: job.error, jobId: job.id });
      } catch (error) {
        if (!isPlanAdmissionError(error)) throw error;
        return reply
          .code(admissionStatus(error.issues))
          .send({ error: error.message, issues: error.issues });
      }
    },
  );

  app.post<{ Body: unknown }>('/api/plans', async (request, reply) => {
    try {
      const job = await runtime.executePlan(request.body as ExecutionPlan, {
        caller: await caller(request),
      });
      if (job.status === 'completed') return reply.code(201).send(toJsonSafe(job));
      return reply.code(failedJobStatus(job)).send({ error: job.error, job: toJsonSafe(job) });
    } catch (error) {
      if (!isPlanAdmissionError(error)) throw error;
      return reply
        .code(admissionStatus(error.issues))
        .send({ error: error.message, issues: error.issues });
    }
  });

  app.get<{ Querystring: Record<string, string | undefined> }>(
    '/api/jobs',
    async (request, reply) => {
      const { status, capability, goal, limit } = request.query;
      const filter: JobListFilter = {};
      if (status !== undefined) filter.status = status as JobListFilter['status'];
      if (capability !== undefined) filter.capability = capability;
      if (goal !== undefined) filter.goal = goal;
      if (limit !== undefined) {
        if (!/^\d{1,6}$/.test(limit))
          return reply.code(400).send({ error: 'limit must be a non-negative integer' });
        filter.limit = Number(limit);
      }
      return toJsonSafe(await runtime.listJobs(filter));
    },
  );
  app.get<{ Params: { id: string } }>('/api/jobs/:id', async (request, reply) => {
    const job = await runtime.getJob(request.params.id);
    return job === undefined
      ? reply.code(404).send({ error: `Unknown job: ${request.params.id}` })
      : toJsonSafe(job);
  });

  registerVerifyRoute(app, runtime);

  registerLegacyRoutes(app, runtime, {
    enabled: options.legacyRoutes === true,
    authorizer: options.legacyAuthorizer,
  });
  return app;
}

/**
 * `GET /api/jobs/:id/verify`: 200 with `runtime.verifyJob`'s answer (`{ ok: true, events }` or
 * `{ ok: false, reason, eventIndex?, stepId? }`: a job that is not intact is still an answer),
 * 404 for an unknown job.
 */
function registerVerifyRoute(app: FastifyInstance, runtime: OperatorRuntime): void {
  app.get<{ Params: { id: string } }>('/api/jobs/:id/verify', async (request, reply) => {
    const verification = await runtime.verifyJob(request.params.id);
    return verification === undefined
      ? reply.code(404).send({ error: `Unknown job: ${request.params.id}` })
      : verification;
  });
}
