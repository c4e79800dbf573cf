/** How the routes learn the caller of a request (`createHttpServer` decides: the
 * `resolveCaller` option, the authenticated caller, or `{ id: 'http' }`), and what the governed
 * route plugins are given. */
import type { FastifyRequest } from 'fastify';
import type { ExecutionCaller, OperatorRuntime } from '../../index.js';

/** The caller of a request; undefined when none could be identified. */
export type RequestCaller = (
  request: FastifyRequest,
) => ExecutionCaller | undefined | Promise<ExecutionCaller | undefined>;

/** The options of a governed route plugin: the runtime, and the caller of each request. */
export interface GovernedRouteOptions {
  readonly runtime: OperatorRuntime;
  readonly callerOf: RequestCaller;
}

/** ...and whether callers are told apart (an authentication mode, or `resolveCaller`). */
export interface IdentifiedRouteOptions extends GovernedRouteOptions {
  readonly identified: boolean;
}
