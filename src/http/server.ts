/**
 * The HTTP face of `warrant serve` (docs/api.md, README "HTTP routes"): routes parse, call the
 * runtime through the package root and format; they never authorize, validate plans or touch a
 * store. Who reaches a route, and as which caller, is decided by the request gate
 * (`request-gate.ts`) on the route the router matched. MCP over Streamable HTTP is served at
 * `/mcp` (`mcp-route.ts`) behind the same gate. Errors are one line and never carry stack traces
 * or inner messages.
 */
import { createServer } from 'node:http';
import Fastify, {
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import {
  isPlanAdmissionError,
  type CapabilityRisk,
  type ExecutionAuthorizer,
  type ExecutionCaller,
  type ExecutionPlan,
  type JobListFilter,
  type OperatorRuntime,
} from '../index.js';
import { registerLegacyRoutes } from './legacy-routes.js';
import { JsonBodyError, parseJsonBody } from './parse-json-body.js';
import { createTokenAuthenticator, type Authenticator } from './auth/index.js';
import { registerMcpRoute } from './mcp-route.js';
import { registerConsole } from './console/routes.js';
import {
  createRequestGate,
  isLoopbackAddress,
  isRefusal,
  type GateDecision,
  type GateRefusal,
} from './request-gate.js';
import {
  errorText,
  jobAnswer,
  jobListAnswer,
  refusalAnswer,
  REMOTE_ANSWER,
  valueAnswer,
} from '../json/answer.js';
import { admissionStatus, approvalRefusalStatus, failedJobStatus } from './status-codes.js';

export interface HttpServerOptions {
  /** The authentication mode (`createAuthenticator` of `src/http/auth/`): every route but
   * `GET /health` needs its credentials (else 401 with its challenge), and the caller it answers
   * is the caller of every governed route and of `/mcp`. */
  readonly authenticator?: Authenticator;
  /** Shorthand for the `--token` mode: requests must carry `Authorization: Bearer <token>`.
   * Not together with `authenticator`. */
  readonly token?: string;
  /** Told the operator line of a refused authentication (a resolver that threw or hung, a JWKS
   * that could not be fetched); never told about a bad or missing token. */
  readonly onAuthLog?: (line: string) => void;
  /** Serve MCP over Streamable HTTP at `/mcp` (default true). */
  readonly mcp?: boolean;
  /** Serve the built-in capabilities as MCP tools at `/mcp` too (default false). */
  readonly mcpBuiltins?: boolean;
  /** Serve the audit console at `/` (default true; README "Audit console"). */
  readonly console?: boolean;
  /** Host names answered besides `localhost`, `127.0.0.1` and `[::1]` while the server is bound
   * to a loopback address (lower-case, no port); any other Host is answered 421. */
  readonly allowedHosts?: readonly string[];
  /** Told about every error answered only as `500 Internal error` (a failing store), with the
   * matched route (`GET /api/jobs/:id`, never the URL), so the host can log it. */
  readonly onInternalError?: (error: unknown, route: string) => void;
  /** The caller of a request; default: the authenticated caller, or `{ id: 'http' }` without an
   * authentication mode. */
  readonly resolveCaller?: (
    request: FastifyRequest,
  ) => ExecutionCaller | undefined | Promise<ExecutionCaller | undefined>;
  /** Enables the two documented legacy bypasses (README "The two known bypasses"); off by
   * default (410). */
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

function refuse(reply: FastifyReply, refusal: GateRefusal): FastifyReply {
  if (refusal.headers !== undefined) reply.headers(refusal.headers);
  return reply.code(refusal.status).send({ error: refusal.error });
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
  if (options.authenticator !== undefined && options.token !== undefined)
    throw new TypeError('createHttpServer takes an authenticator or a token, not both');
  const authenticator =
    options.authenticator ??
    (options.token === undefined ? undefined : createTokenAuthenticator(options.token));
  // The gate runs on every request, the unrouted ones and the router's own errors included
  // (README "HTTP routes"): Host while bound to loopback, then authentication on the matched
  // route, then repeated parameters. Whether the server is bound to loopback is read once it
  // listens.
  let loopbackBound = false;
  const decide = createRequestGate({
    authenticator,
    allowedHosts: options.allowedHosts,
    loopbackBound: () => loopbackBound,
  });
  const gate = (request: FastifyRequest): GateDecision | Promise<GateDecision> =>
    decide({
      method: request.method,
      route: request.routeOptions.url,
      url: request.url,
      headers: request.headers,
      ip: request.ip,
      query: request.query,
    });
  // The caller each request was authenticated as, from the gate to the handler.
  const authenticated = new WeakMap<FastifyRequest, ExecutionCaller>();
  /** Runs `next` when the gate lets the request through; else sends its refusal. */
  const applyGate = (
    request: FastifyRequest,
    reply: FastifyReply,
    next: () => void,
    decision: GateDecision,
  ): void => {
    if (decision === undefined) return next();
    if (!isRefusal(decision)) {
      authenticated.set(request, decision.caller);
      return next();
    }
    if (decision.log !== undefined) reportAuthLog(decision.log);
    void refuse(reply, decision);
  };
  /** The gate, synchronous when no authenticator runs; an authenticator that rejects (the modes
   * never do) is an internal error, never a pass. */
  const runGate = (request: FastifyRequest, reply: FastifyReply, next: () => void): void => {
    const decision = gate(request);
    if (!(decision instanceof Promise)) return applyGate(request, reply, next, decision);
    decision.then(
      (settled) => applyGate(request, reply, next, settled),
      (error: unknown) => {
        reportInternalError(error, request);
        void reply.code(500).send({ error: 'Internal error' });
      },
    );
  };
  const app = Fastify({
    logger: false,
    bodyLimit: options.bodyLimit ?? 1024 * 1024,
    // Targets the router cannot decode, or with a parameter over its length limit (100), are
    // answered here, after the gate, in the `{ error }` shape: no fastify code, no URL.
    frameworkErrors: (error, request, reply: FastifyReply) => {
      runGate(request, reply, () => {
        void (error.code === 'FST_ERR_MAX_PARAM_LENGTH'
          ? reply.code(414).send({ error: 'A segment of the URL path is too long' })
          : reply.code(400).send({ error: 'The URL cannot be decoded' }));
      });
    },
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
  app.server.on('listening', () => {
    const address = app.server.address();
    loopbackBound =
      typeof address === 'object' && address !== null && isLoopbackAddress(address.address);
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

  app.setErrorHandler((error: FastifyError, request, reply) => {
    const status = error.statusCode;
    if (status === 413) return reply.code(413).send({ error: 'Request body is too large' });
    if (status === 415)
      return reply.code(415).send({ error: 'Content-Type must be application/json' });
    if (status !== undefined && status >= 400 && status < 500) {
      return reply.code(400).send({ error: clientErrorMessage(error) });
    }
    reportInternalError(error, request);
    return reply.code(500).send({ error: 'Internal error' });
  });
  app.setNotFoundHandler((_request, reply) => reply.code(404).send({ error: 'Not found' }));

  function reportAuthLog(line: string): void {
    try {
      options.onAuthLog?.(line);
    } catch {
      // A failing reporter changes nothing about the answer.
    }
  }
  function reportInternalError(error: unknown, request: FastifyRequest): void {
    try {
      options.onInternalError?.(
        error,
        `${request.method} ${request.routeOptions.url ?? '(no route)'}`,
      );
    } catch {
      // A failing reporter changes nothing about the answer.
    }
  }

  // Without a mode every request has the same caller: one frozen object (the runtime snapshots
  // the caller of each plan anyway), no promise per request. With a mode, the gate has
  // authenticated every request that reaches a governed route.
  const defaultCaller: ExecutionCaller = Object.freeze({ id: 'http' });
  const caller = (
    request: FastifyRequest,
  ): ExecutionCaller | undefined | Promise<ExecutionCaller | undefined> =>
    options.resolveCaller
      ? options.resolveCaller(request)
      : authenticator === undefined
        ? defaultCaller
        : authenticatedCaller(request);
  const authenticatedCaller = (request: FastifyRequest): ExecutionCaller => {
    const found = authenticated.get(request);
    // Unreachable (the gate authenticates every route but GET /health); fail closed: a 500.
    if (found === undefined) throw new Error('a governed route was reached unauthenticated');
    return found;
  };

  // A callback hook, not an async one: without a mode, no promise and no extra tick per request
  // (bench/http/execute.bench.ts measures it).
  app.addHook('onRequest', (request, reply, done) => runGate(request, reply, done));

  app.get('/health', async () => ({ status: 'ok' }));

  app.get('/api/capabilities', async () => runtime.listCapabilities());
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
      if (!isObject(body))
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
        const job = await runtime.executePlan(
          { version: '1.0', goal: `HTTP execute ${name}`, steps: [step] },
          { caller: await caller(request) },
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

  app.post<{ Body: unknown }>('/api/plans', async (request, reply) => {
    try {
      const job = await runtime.executePlan(request.body as ExecutionPlan, {
        caller: await caller(request),
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

  registerVerifyRoute(app, runtime);
  if (options.console !== false) registerConsole(app);
  registerApprovalRoutes(app, runtime, caller);
  if (options.mcp !== false)
    registerMcpRoute(app, runtime, {
      builtins: options.mcpBuiltins === true,
      callerOf: caller,
      onInternalError: (error, where) => {
        try {
          options.onInternalError?.(error, where);
        } catch {
          // A failing reporter changes nothing about the answer.
        }
      },
    });

  registerLegacyRoutes(app, runtime, {
    enabled: options.legacyRoutes === true,
    authorizer: options.legacyAuthorizer,
  });
  return app;
}

/**
 * `GET /api/approvals` (pending requests; `?jobId=` one job's) and
 * `POST /api/jobs/:id/steps/:stepId/approval` `{ decision, inputDigest, comment? }`, decided by
 * the request's caller as approver: 200 with the job at its next stop, or the refusal's status
 * (approvalRefusalStatus). Nothing in the body names the approver.
 */
function registerApprovalRoutes(
  app: FastifyInstance,
  runtime: OperatorRuntime,
  callerOf: (
    request: FastifyRequest,
  ) => ExecutionCaller | undefined | Promise<ExecutionCaller | undefined>,
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
      if (!isObject(body))
        return reply
          .code(400)
          .send({ error: 'Body must be a JSON object { decision, inputDigest, comment? }' });
      const approver = await callerOf(request);
      if (approver === undefined)
        return reply.code(403).send({ error: 'An approval needs an identified approver' });
      try {
        const job = await runtime.decideApproval({
          jobId: request.params.id,
          stepId: request.params.stepId,
          inputDigest: body.inputDigest as string,
          approver,
          decision: body.decision as 'approve' | 'reject',
          ...(body.comment === undefined ? {} : { comment: body.comment as string }),
        });
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
