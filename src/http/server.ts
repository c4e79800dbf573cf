/**
 * The HTTP face of `warrant serve` (docs/api.md, docs/guide/http.md, "HTTP routes"): this file
 * wires the parts together. Routes are fastify plugins (`routes/`), each given the runtime and how
 * to learn a request's caller; they parse, call the runtime through the package root and format,
 * and never authorize, validate plans or touch a store. Who reaches a route, and as which caller,
 * is decided by the request gate (`gate-hook.ts`, `request-gate.ts`) on the route the router
 * matched. MCP over Streamable HTTP is served at `/mcp` (`mcp-route.ts`) behind the same gate.
 * Errors are one line and never carry stack traces or inner messages (`error-replies.ts`).
 */
import { createServer } from 'node:http';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { ExecutionAuthorizer, ExecutionCaller, OperatorRuntime } from '../index.js';
import { registerLegacyRoutes } from './legacy-routes.js';
import { parseJsonBody } from './parse-json-body.js';
import { createTokenAuthenticator, OPERATOR_ID, type Authenticator } from './auth/index.js';
import { registerMcpRoute } from './mcp-route.js';
import { registerConsole } from './console/routes.js';
import { CallerRefused, setErrorReplies } from './error-replies.js';
import { createGateHook } from './gate-hook.js';
import { approvalRoutes } from './routes/approvals.js';
import { callerRoute } from './routes/caller.js';
import { capabilityRoutes } from './routes/capabilities.js';
import { limitRoutes } from './routes/limits.js';
import { healthRoute } from './routes/health.js';
import { jobRoutes } from './routes/jobs.js';
import { notificationRoutes } from './routes/notifications.js';
import { planRoutes } from './routes/plans.js';
import type { RequestCaller, RequestIdentified } from './routes/request-caller.js';
import { frozenCallerCopy } from '../callers/caller-check.js';

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

/** How long an idle keep-alive connection stays open: fastify's own default. */
export const KEEP_ALIVE_TIMEOUT_MS = 72_000;

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
  const gate = createGateHook({
    authenticator,
    operator,
    allowedHosts: options.allowedHosts,
    reportAuthLog,
    reportInternalError,
  });
  const app = Fastify({
    logger: false,
    bodyLimit: options.bodyLimit ?? 1024 * 1024,
    // Targets the router cannot decode, or with a parameter over its length limit (100), are
    // answered here, after the gate, in the `{ error }` shape: no fastify code, no URL.
    frameworkErrors: (error, request, reply: FastifyReply) => {
      gate.run(request, reply, () => {
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
  gate.watch(app.server);
  // JSON only: any other content type is 415.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    try {
      done(null, parseJsonBody(body as string));
    } catch (error) {
      done(error as Error, undefined);
    }
  });

  setErrorReplies(app, runtime, reportInternalError);

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
  const resolve = options.resolveCaller;
  const caller: RequestCaller = (request) =>
    resolve
      ? checkedResolved(resolve(request))
      : authenticator === undefined
        ? // Without a mode: `http`, or the operator on a request carrying its token.
          (gate.authenticated(request) ?? defaultCaller)
        : authenticatedCaller(request);
  const authenticatedCaller = (request: FastifyRequest): ExecutionCaller => {
    const found = gate.authenticated(request);
    // Unreachable (the gate authenticates every route but GET /health); fail closed: a 500.
    if (found === undefined) throw new Error('a governed route was reached unauthenticated');
    return found;
  };

  // The host's resolver goes through the one caller checker, as every edge's caller does: a
  // chain it refuses is a 401 CALLER_INVALID (docs/api.md, "Callers: acting for someone").
  function checkedResolved(
    resolved: ExecutionCaller | undefined | Promise<ExecutionCaller | undefined>,
  ): Promise<ExecutionCaller | undefined> {
    return Promise.resolve(resolved).then((found) => {
      if (found === undefined) return undefined;
      const checked = frozenCallerCopy(found, 'resolveCaller()');
      if (!checked.ok) throw new CallerRefused(checked.reason);
      return checked.caller;
    });
  }

  // A callback hook, not an async one: without a mode, no promise and no extra tick per request
  // (bench/http/execute.bench.ts measures it).
  app.addHook('onRequest', (request, reply, done) => gate.run(request, reply, done));

  // The routes as plugins, each given what it uses; they inherit the gate, the parser and the
  // error answers set above.
  const governed = { runtime, callerOf: caller };
  // Without a mode (nor a resolveCaller) every request is `http`, but one carrying the operator
  // token: nobody may approve as `http`.
  const callersKnown = authenticator !== undefined || options.resolveCaller !== undefined;
  const told: RequestIdentified = callersKnown
    ? () => true
    : (request) => gate.authenticated(request) !== undefined;
  const identified = { ...governed, identified: told };
  void app.register(healthRoute, { runtime });
  void app.register(capabilityRoutes, governed);
  void app.register(planRoutes, { ...governed, queued: options.queuePlans === true });
  void app.register(jobRoutes, governed);
  void app.register(limitRoutes, governed);
  if (options.console !== false) registerConsole(app);
  void app.register(approvalRoutes, identified);
  void app.register(callerRoute, { callerOf: caller, identified: told });
  // Only for an auditor: never as `http` (docs/api.md, "HTTP: notifications").
  void app.register(notificationRoutes, identified);
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
