/**
 * The HTTP face of `warrant serve` (docs/api.md, docs/guide/http.md, "HTTP routes"): routes parse,
 * call the runtime through the package root and format; they never authorize, validate plans or
 * touch a store. Who reaches a route, and as which caller, is decided by the request gate
 * (`request-gate.ts`) on the route the router matched. MCP over Streamable HTTP is served at `/mcp`
 * (`mcp-route.ts`) behind the same gate. Errors are one line and never carry stack traces or inner
 * messages.
 */
import { createServer } from 'node:http';
import Fastify, {
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import type { ExecutionAuthorizer, ExecutionCaller, OperatorRuntime } from '../index.js';
import {
  jobAnswer,
  REMOTE_ANSWER,
  STORE_RETRY_AFTER_SECONDS,
  storeFailureAnswer,
} from '../json/answer.js';
import { registerLegacyRoutes } from './legacy-routes.js';
import { JsonBodyError, parseJsonBody } from './parse-json-body.js';
import { createTokenAuthenticator, OPERATOR_ID, type Authenticator } from './auth/index.js';
import { registerMcpRoute } from './mcp-route.js';
import { registerConsole } from './console/routes.js';
import {
  createRequestGate,
  isLoopbackAddress,
  isRefusal,
  type GateDecision,
  type GatedRequest,
  type GateRefusal,
} from './request-gate.js';
import { registerApprovalRoutes } from './routes/approvals.js';
import { registerCallerRoute } from './routes/caller.js';
import { registerCapabilityRoutes } from './routes/capabilities.js';
import { registerLimitRoutes } from './routes/limits.js';
import { registerHealthRoute } from './routes/health.js';
import { registerJobRoutes } from './routes/jobs.js';
import { registerNotificationRoutes } from './routes/notifications.js';
import { registerPlanRoute } from './routes/plans.js';
import type { RequestCaller, RequestIdentified } from './routes/request-caller.js';

export interface HttpServerOptions {
  /** The authentication mode (`createAuthenticator` of `src/http/auth/`): every route but
   * `GET /health` needs its credentials (else 401 with its challenge), and the caller it answers
   * is the caller of every governed route and of `/mcp`. */
  readonly authenticator?: Authenticator;
  /** Shorthand for the `--token` mode: requests must carry `Authorization: Bearer <token>`.
   * Not together with `authenticator`. */
  readonly token?: string;
  /** Without an authentication mode: the operator token (docs/api.md, "The operator token").
   * A request carrying it as `Authorization: Bearer` is `{ id: 'operator', scopes:
   * ['warrant:audit'] }` and may approve; one without an `Authorization` header stays
   * `{ id: 'http' }`; any other credentials are 401. Not together with `authenticator`/`token`. */
  readonly operatorToken?: string;
  /** Told the operator line of a refused authentication (a resolver that threw or hung, a JWKS
   * that could not be fetched); never told about a bad or missing token. */
  readonly onAuthLog?: (line: string) => void;
  /** Serve MCP over Streamable HTTP at `/mcp` (default true). */
  readonly mcp?: boolean;
  /** Serve the built-in capabilities as MCP tools at `/mcp` too (default false). */
  readonly mcpBuiltins?: boolean;
  /**
   * Plans are queued for workers (`warrant serve --queue`, docs/api.md "Workers"): `POST
   * /api/plans` submits and waits for the job (or answers 202 at once with `Prefer:
   * respond-async`); an MCP call waits up to 30 s, then answers its job queued or executing.
   */
  readonly queuePlans?: boolean;
  /** Serve the audit console at `/` (default true; docs/guide/http.md, "Audit console"). */
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
  /**
   * Enables the two documented legacy bypasses (docs/guide/http.md, "The two known bypasses"); off
   * by default (410).
   */
  readonly legacyRoutes?: boolean;
  /** The authorizer the legacy job route uses; the runtime's own for governed routes. */
  readonly legacyAuthorizer?: ExecutionAuthorizer;
  /** Largest request body in bytes. Default 1 MiB. */
  readonly bodyLimit?: number;
  /** A request (headers and body) must arrive within this time, or its socket is closed
   * (slow-loris defence). Default 30 s. */
  readonly requestTimeoutMs?: number;
}

function refuse(reply: FastifyReply, refusal: GateRefusal): FastifyReply {
  if (refusal.headers !== undefined) reply.headers(refusal.headers);
  return reply.code(refusal.status).send({ error: refusal.error });
}

/** What the gate reads of a Fastify request, read when the gate asks: the matched route (a
 * whole options object Fastify builds on each read) and the peer address matter only to an
 * authentication mode (bench/http/execute.bench.ts). */
class GatedFastifyRequest implements GatedRequest {
  readonly #request: FastifyRequest;
  constructor(request: FastifyRequest) {
    this.#request = request;
  }
  get method(): string {
    return this.#request.method;
  }
  get route(): string | undefined {
    return this.#request.routeOptions.url;
  }
  get url(): string {
    return this.#request.url;
  }
  get headers(): FastifyRequest['headers'] {
    return this.#request.headers;
  }
  get ip(): string {
    return this.#request.ip;
  }
  get query(): unknown {
    return this.#request.query;
  }
}

/** How long an idle keep-alive connection stays open: fastify's own default. */
export const KEEP_ALIVE_TIMEOUT_MS = 72_000;

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
  if (
    options.operatorToken !== undefined &&
    (options.authenticator !== undefined || options.token !== undefined)
  )
    throw new TypeError('createHttpServer takes an operator token only without a mode');
  const operator =
    options.operatorToken === undefined
      ? undefined
      : createTokenAuthenticator(options.operatorToken, OPERATOR_ID);
  const authenticator =
    options.authenticator ??
    (options.token === undefined ? undefined : createTokenAuthenticator(options.token));
  // The gate runs on every request, the unrouted ones and the router's own errors included
  // (docs/guide/http.md, "Who reaches a route"): Host while bound to loopback, then authentication
  // on the matched route, then repeated parameters. Whether the server is bound to loopback is read
  // once it listens.
  let loopbackBound = false;
  const decide = createRequestGate({
    authenticator,
    operator,
    allowedHosts: options.allowedHosts,
    loopbackBound: () => loopbackBound,
  });
  const gate = (request: FastifyRequest): GateDecision | Promise<GateDecision> =>
    decide(new GatedFastifyRequest(request));
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
    // slow-loris connection is closed close to its deadline. Fastify ignores its own
    // keepAliveTimeout (72 s) with a serverFactory, which would leave Node's 5 s: a client that
    // reuses a socket just as the server closes it gets ECONNRESET for a request it sent
    // (docs/decisions.md, "HTTP and the program").
    serverFactory: (handler) => {
      const requestTimeout = options.requestTimeoutMs ?? 30_000;
      return createServer(
        {
          requestTimeout,
          headersTimeout: requestTimeout,
          keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
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
    // A store that failed: 503 with Retry-After while it is unavailable (or cannot be written at
    // all, as the runtime knows without asking it), and the job's id (and its recorded state,
    // when the store answers) once the job exists (docs/api.md, "Store outages").
    const failed = storeFailureAnswer(error, !runtime.storeAvailability().writable);
    if (failed !== undefined) return storeFailureReply(reply, failed, error, request);
    reportInternalError(error, request);
    return reply.code(500).send({ error: 'Internal error' });
  });

  async function storeFailureReply(
    reply: FastifyReply,
    failed: NonNullable<ReturnType<typeof storeFailureAnswer>>,
    error: unknown,
    request: FastifyRequest,
  ): Promise<FastifyReply> {
    const { unavailable, jobId, ...body } = failed;
    if (!unavailable) reportInternalError(error, request);
    let job: unknown;
    if (jobId !== undefined) {
      const recorded = await runtime.getJob(jobId).catch(() => undefined);
      if (recorded !== undefined) job = jobAnswer(recorded, REMOTE_ANSWER);
    }
    if (unavailable) reply.header('retry-after', String(STORE_RETRY_AFTER_SECONDS));
    return reply.code(unavailable ? 503 : 500).send({
      ...body,
      ...(jobId !== undefined && { jobId }),
      ...(job !== undefined && { job }),
    });
  }
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
  const caller: RequestCaller = (request) =>
    options.resolveCaller
      ? options.resolveCaller(request)
      : authenticator === undefined
        ? operator === undefined
          ? defaultCaller
          : (authenticated.get(request) ?? defaultCaller)
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

  registerHealthRoute(app, runtime);
  registerCapabilityRoutes(app, runtime, caller);
  registerPlanRoute(app, runtime, caller, options.queuePlans === true);
  registerJobRoutes(app, runtime, caller);
  registerLimitRoutes(app, runtime, caller);
  if (options.console !== false) registerConsole(app);
  // Without a mode (nor a resolveCaller) every request is `http`, but one carrying the operator
  // token: nobody may approve as `http`.
  const callersKnown = authenticator !== undefined || options.resolveCaller !== undefined;
  const identified: RequestIdentified = callersKnown
    ? () => true
    : (request) => authenticated.has(request);
  registerApprovalRoutes(app, runtime, caller, identified);
  registerCallerRoute(app, caller, identified);
  // Only for an auditor: never as `http` (docs/api.md, "HTTP: notifications").
  registerNotificationRoutes(app, runtime, caller, identified);
  if (options.mcp !== false)
    registerMcpRoute(app, runtime, {
      builtins: options.mcpBuiltins === true,
      ...(options.queuePlans === true && { queuedWaitMs: 30_000 }),
      // Callers told apart, so the read policy protects it: else every client is `http`.
      jobTools: callersKnown,
      planTools: callersKnown,
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
