/**
 * The answers of the server's errors (docs/guide/http.md, "HTTP routes"; docs/api.md, "Store
 * outages"): one line, never a stack trace nor an inner message. A bad request is 400 (413 too
 * large, 415 not JSON) with a fixed message per kind; a store that failed 503 with Retry-After
 * while it is unavailable, with the job's id (and its recorded state) once the job exists;
 * anything else 500 `Internal error`, told to the host; an unknown route 404.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { OperatorRuntime } from '../index.js';
import {
  jobAnswer,
  REMOTE_ANSWER,
  STORE_RETRY_AFTER_SECONDS,
  storeFailureAnswer,
} from '../json/answer.js';
import { JsonBodyError } from './parse-json-body.js';
import { ErrorCode } from '../errors/error-codes.js';

/** A request's caller the caller checker refused (a host's resolveCaller answering a bad chain). */
export class CallerRefused extends Error {}

/** A fixed message per kind of bad request: never the parser's or a driver's own text. */
function clientErrorMessage(error: FastifyError): string {
  return error instanceof JsonBodyError ? error.message : 'Bad request';
}

/** Sets the error and not-found handlers of `app` (before its routes are registered). */
export function setErrorReplies(
  app: FastifyInstance,
  runtime: OperatorRuntime,
  reportInternalError: (error: unknown, request: FastifyRequest) => void,
): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    // A caller the checker refused (a host's resolveCaller answering a bad chain): who is asking
    // is not known, as with a bad token (docs/api.md, "Callers: acting for someone").
    if (error instanceof CallerRefused || error.code === ErrorCode.CALLER_INVALID)
      return reply.code(401).send({ error: `${ErrorCode.CALLER_INVALID}: ${error.message}` });
    const status = error.statusCode;
    if (status === 413) return reply.code(413).send({ error: 'Request body is too large' });
    if (status === 415)
      return reply.code(415).send({ error: 'Content-Type must be application/json' });
    if (status !== undefined && status >= 400 && status < 500) {
      return reply.code(400).send({ error: clientErrorMessage(error) });
    }
    // Unavailable also when the runtime knows the store cannot be written, without asking it.
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
}
