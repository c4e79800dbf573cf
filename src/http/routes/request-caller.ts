/** How the routes learn the caller of a request (`createHttpServer` decides: the
 * `resolveCaller` option, the authenticated caller, or `{ id: 'http' }`), and what the governed
 * route plugins are given. */
import type { FastifyRequest } from 'fastify';
import type { ExecutionCaller, OperatorRuntime } from '../../index.js';

/** The caller of a request; undefined when none could be identified. */
export type RequestCaller = (
  request: FastifyRequest,
) => ExecutionCaller | undefined | Promise<ExecutionCaller | undefined>;

/** Whether the server tells the request's sender apart from everyone else: an authentication
 * mode, a `resolveCaller`, or (without a mode) the operator token on this request. */
export type RequestIdentified = (request: FastifyRequest) => boolean;

/** The options of a governed route plugin: the runtime, and the caller of each request. */
export interface GovernedRouteOptions {
  readonly runtime: OperatorRuntime;
  readonly callerOf: RequestCaller;
}

/** ...and whether the request's sender is told apart (RequestIdentified). */
export interface IdentifiedRouteOptions extends GovernedRouteOptions {
  readonly identified: RequestIdentified;
}
