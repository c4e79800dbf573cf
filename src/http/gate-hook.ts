/**
 * The request gate on Fastify (docs/guide/http.md, "Who reaches a route"): it runs on every
 * request, the unrouted ones and the router's own errors included: Host while bound to loopback,
 * then authentication on the matched route, then repeated parameters (`request-gate.ts` decides).
 * It keeps the caller each request was authenticated as, from the gate to the handler.
 */
import type { Server } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ExecutionCaller } from '../index.js';
import type { Authenticator } from './auth/index.js';
import {
  createRequestGate,
  isLoopbackAddress,
  isRefusal,
  type GateDecision,
  type GatedRequest,
  type GateRefusal,
} from './request-gate.js';

/** What the gate needs besides the request. */
export interface GateHookOptions {
  readonly authenticator: Authenticator | undefined;
  /** Without a mode: the operator token's authenticator (request-gate.ts). */
  readonly operator?: Authenticator | undefined;
  readonly allowedHosts: readonly string[] | undefined;
  /** Told the operator line of a refused authentication. */
  readonly reportAuthLog: (line: string) => void;
  /** Told an authenticator that rejected (answered 500). */
  readonly reportInternalError: (error: unknown, request: FastifyRequest) => void;
}

export interface GateHook {
  /** Runs `next` when the gate lets the request through; else sends its refusal. Synchronous
   * when no authenticator runs. */
  run(request: FastifyRequest, reply: FastifyReply, next: () => void): void;
  /** The caller the gate authenticated the request as (an authentication mode, or the operator
   * token without one). */
  authenticated(request: FastifyRequest): ExecutionCaller | undefined;
  /** Reads, once the server listens, whether it is bound to a loopback address. */
  watch(server: Server): void;
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

export function createGateHook(options: GateHookOptions): GateHook {
  let loopbackBound = false;
  const decide = createRequestGate({
    authenticator: options.authenticator,
    operator: options.operator,
    allowedHosts: options.allowedHosts,
    loopbackBound: () => loopbackBound,
  });
  const authenticated = new WeakMap<FastifyRequest, ExecutionCaller>();
  const apply = (
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
    if (decision.log !== undefined) options.reportAuthLog(decision.log);
    void refuse(reply, decision);
  };
  return {
    // An authenticator that rejects (the modes never do) is an internal error, never a pass.
    run(request, reply, next) {
      const decision = decide(new GatedFastifyRequest(request));
      if (!(decision instanceof Promise)) return apply(request, reply, next, decision);
      decision.then(
        (settled) => apply(request, reply, next, settled),
        (error: unknown) => {
          options.reportInternalError(error, request);
          void reply.code(500).send({ error: 'Internal error' });
        },
      );
    },
    authenticated: (request) => authenticated.get(request),
    watch(server) {
      server.on('listening', () => {
        const address = server.address();
        loopbackBound =
          typeof address === 'object' && address !== null && isLoopbackAddress(address.address);
      });
    },
  };
}
