/** How the routes learn the caller of a request (`createHttpServer` decides: the
 * `resolveCaller` option, the authenticated caller, or `{ id: 'http' }`). */
import type { FastifyRequest } from 'fastify';
import type { ExecutionCaller } from '../../index.js';

/** The caller of a request; undefined when none could be identified. */
export type RequestCaller = (
  request: FastifyRequest,
) => ExecutionCaller | undefined | Promise<ExecutionCaller | undefined>;

/** Whether the server tells the request's sender apart from everyone else: an authentication
 * mode, a `resolveCaller`, or (without a mode) the operator token on this request. */
export type RequestIdentified = (request: FastifyRequest) => boolean;
