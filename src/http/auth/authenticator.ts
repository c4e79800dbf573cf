/**
 * What every authentication mode of `warrant serve` answers (README, docs/decisions.md
 * "Authentication modes"): who the caller of one request is, or the `WWW-Authenticate` value of
 * a 401. A mode never answers from a body or query string: only from the request's headers,
 * method, path and address.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { ExecutionCaller } from '../../index.js';

/** The parts of a request a mode may look at. */
export interface AuthRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly ip: string;
}

/**
 * `ok: true` carries a deeply frozen caller that is JSON data with a string `id`. `ok: false`
 * carries the `WWW-Authenticate` value of the 401 and, when the operator should know (a
 * resolver that threw or hung, a JWKS that could not be fetched), one line for stderr.
 */
export type AuthResult = AuthSuccess | AuthFailure;
export interface AuthSuccess {
  readonly ok: true;
  readonly caller: ExecutionCaller;
  /**
   * The mode read the request's `Warrant-On-Behalf-Of` header (a callers-file token allowed to
   * act for that id, or a resolver that answered an actor): without it, a request carrying the
   * header is refused (docs/api.md, "Callers: acting for someone").
   */
  readonly delegated?: true;
}
export interface AuthFailure {
  readonly ok: false;
  readonly challenge: string;
  readonly log?: string;
}

export interface Authenticator {
  authenticate(request: AuthRequest): Promise<AuthResult>;
}

/**
 * The header naming, in a callers file, the entry a token acts for (docs/api.md, "Callers: acting
 * for someone"), as Node names it (lower case).
 */
export const ON_BEHALF_OF_HEADER = 'warrant-on-behalf-of';

/** The request's `Warrant-On-Behalf-Of` value; undefined without one. */
export function onBehalfOf(headers: IncomingHttpHeaders): string | undefined {
  const value = headers[ON_BEHALF_OF_HEADER];
  // Node joins a repeated header of this kind with ", "; an array is never a single id.
  return typeof value === 'string' ? value : Array.isArray(value) ? value.join(', ') : undefined;
}

/** No credentials, or credentials of another scheme (RFC 6750 section 3.1: no error code). */
export const CHALLENGE_NO_CREDENTIALS = 'Bearer';
/** A bearer token was sent and is not accepted (malformed, unknown, expired, badly signed). */
export const CHALLENGE_INVALID_TOKEN = 'Bearer error="invalid_token"';

export const NO_CREDENTIALS: AuthFailure = Object.freeze({
  ok: false,
  challenge: CHALLENGE_NO_CREDENTIALS,
});
export const INVALID_TOKEN: AuthFailure = Object.freeze({
  ok: false,
  challenge: CHALLENGE_INVALID_TOKEN,
});

/**
 * The one error a mode throws while it is set up: a one-line message naming the option or the
 * file entry, and the code `AUTH_OPTIONS_INVALID`. A program error like `UsageError` (the
 * program prints the message and exits 2), so it is a class of this layer, not a runtime error.
 */
export class AuthOptionsError extends Error {
  override readonly name = 'AuthOptionsError';
  readonly code = 'AUTH_OPTIONS_INVALID';
}

export function authOptionsError(message: string, cause?: unknown): AuthOptionsError {
  return new AuthOptionsError(message, cause === undefined ? undefined : { cause });
}

/** True for an error thrown while setting up authentication. */
export function isAuthOptionsError(value: unknown): value is AuthOptionsError {
  return value instanceof AuthOptionsError;
}

/**
 * The bearer credentials of a request: `missing` without an `Authorization` header or with
 * another scheme, `malformed` for `Bearer` with nothing after it, else the token (everything
 * after the scheme and its spaces, trailing spaces removed). The scheme is case-insensitive.
 */
export function bearerToken(
  headers: IncomingHttpHeaders,
): { kind: 'missing' } | { kind: 'malformed' } | { kind: 'token'; token: string } {
  const header = headers.authorization;
  if (typeof header !== 'string') return { kind: 'missing' };
  const match = /^([^ \t]+)(?:[ \t]+(.*))?$/s.exec(header.trim());
  if (match === null || (match[1] as string).toLowerCase() !== 'bearer') return { kind: 'missing' };
  const token = (match[2] ?? '').trim();
  if (token === '' || /[\r\n]/.test(token)) return { kind: 'malformed' };
  return { kind: 'token', token };
}

/** One line, at most `max` characters, for stderr. */
export function oneLine(text: string, max = 200): string {
  const first = text.split(/\r?\n/)[0] ?? '';
  // Control characters become spaces: the line goes to a terminal or a log as it is.
  const line = [...first].map((c) => (c < ' ' || c === '\u007f' ? ' ' : c)).join('');
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}
