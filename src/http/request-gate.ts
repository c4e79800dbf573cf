/**
 * Who may reach a route of `warrant serve`, and as whom. The server asks `createRequestGate` once
 * per request, after the router has matched the route and before any body is read or any handler
 * runs (docs/guide/http.md, "Who reaches a route", docs/decisions.md "HTTP and the program" and
 * "Authentication modes"):
 *
 * 1. Host (DNS rebinding): while the server is bound to a loopback address, the `Host` header
 *    must name loopback (`localhost`, `127.0.0.1`, `[::1]`, any port, any case) or an allowed
 *    host; otherwise 421, on every route.
 * 2. Authentication: when a mode is configured (`src/http/auth/`), every route but `GET /health`
 *    and the console's static files (`console/routes.ts`: no data) needs its credentials (401 with the mode's `WWW-Authenticate` challenge); the caller it
 *    answers is the request's caller. The decision is made on the route the router matched,
 *    never on the URL text, so no spelling of a target (percent-encoding, dot segments, doubled
 *    slashes, absolute form) can reach a handler unauthenticated; a target that matches no route
 *    needs credentials too.
 *    Without a mode, the operator token (`warrant serve` makes one at start; docs/api.md, "The
 *    operator token") is optional: a request without an `Authorization` header goes on without a
 *    caller (the server's `http`), one with a header must carry that token (else 401).
 *    `Warrant-On-Behalf-Of` is 401 on every route but the open ones unless the mode read it
 *    (a callers-file token whose `mayActFor` names that id, a resolver answering an actor).
 * 3. A repeated query parameter is refused with 400 before any handler reads it.
 *
 * Only step 2 can take time (a resolver, a JWKS fetch): the gate answers synchronously unless it
 * runs an authenticator, so a server without a mode pays no promise per request.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { BlockList, isIP } from 'node:net';
import type { ExecutionCaller } from '../index.js';
import {
  CHALLENGE_INVALID_TOKEN,
  CHALLENGE_NO_CREDENTIALS,
  ON_BEHALF_OF_HEADER,
  type AuthFailure,
  type Authenticator,
} from './auth/index.js';
import { CONSOLE_ROUTES } from './console/routes.js';

/** The Host names a loopback-bound server always answers. */
export const LOOPBACK_HOST_NAMES: readonly string[] = Object.freeze([
  'localhost',
  '127.0.0.1',
  '[::1]',
]);

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/** True for an IP address in 127.0.0.0/8 or `::1` (IPv4-mapped forms included). */
export function isLoopbackAddress(address: string): boolean {
  const family = isIP(address);
  return family !== 0 && LOOPBACK.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

// A host name (letters, digits, `.`, `-`, `_`, `~`) or a bracketed IPv6 literal.
const NAME = String.raw`(\[[0-9a-f:.]+\]|[a-z0-9._~-]+)`;
const HOST_HEADER = new RegExp(`^${NAME}(?::\\d{0,5})?$`, 'i');
const HOST_NAME = new RegExp(`^${NAME}$`, 'i');

/** The lower-cased name of a `Host` header without its port; undefined when malformed or absent. */
export function hostNameOf(header: string | undefined): string | undefined {
  const match = header === undefined ? null : HOST_HEADER.exec(header);
  return match?.[1]?.toLowerCase();
}

/** An `--allowed-host` name, lower-cased; undefined unless it is a bare name (no port). */
export function allowedHostName(name: string): string | undefined {
  return HOST_NAME.test(name) ? name.toLowerCase() : undefined;
}

/** True for `GET /health` and the console's static files (they hold no data; SECURITY.md), and
 * their `HEAD`: the only routes open without credentials. */
export function isOpenRoute(method: string, route: string | undefined): boolean {
  return (
    (method === 'GET' || method === 'HEAD') &&
    route !== undefined &&
    (route === '/health' || CONSOLE_ROUTES.includes(route))
  );
}

/** What the gate reads of a request: the method, the matched route (if any), the target,
 * headers, the peer address and the parsed query. */
export interface GatedRequest {
  readonly method: string;
  /** The route pattern the router matched (e.g. `/api/jobs/:id`); undefined for none. */
  readonly route: string | undefined;
  /** The request target as received (what a caller resolver sees). */
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  /** The peer address. */
  readonly ip: string;
  /** The parsed query: a repeated parameter is an array. */
  readonly query: unknown;
}

export interface GateRefusal {
  readonly status: 400 | 401 | 421;
  readonly error: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** One line for the operator (a resolver that threw, a JWKS that could not be fetched). */
  readonly log?: string;
}

/** The request may go on, as this authenticated caller. */
export interface GateAdmission {
  readonly caller: ExecutionCaller;
}

/** A refusal to send, an authenticated caller, or undefined to go on without one. */
export type GateDecision = GateRefusal | GateAdmission | undefined;

export interface RequestGateOptions {
  /** The authentication mode; none: every route is open (the program allows that on loopback
   * only, or with --insecure-no-auth). */
  readonly authenticator?: Authenticator | undefined;
  /** Without a mode: the operator token's authenticator, asked only about requests that carry
   * an `Authorization` header (the others go on without a caller). */
  readonly operator?: Authenticator | undefined;
  /** Host names answered besides the loopback names, lower-cased, without a port. */
  readonly allowedHosts?: readonly string[] | undefined;
  /** Whether the server is bound to a loopback address now (checked per request). */
  readonly loopbackBound: () => boolean;
}

const HOST_REFUSED: GateRefusal = Object.freeze({ status: 421, error: 'Host not allowed' });

function unauthorized(challenge: string): GateRefusal {
  return Object.freeze({
    status: 401,
    error: 'Unauthorized',
    headers: Object.freeze({ 'www-authenticate': challenge }),
  });
}

const UNAUTHORIZED: Readonly<Record<string, GateRefusal>> = Object.freeze({
  [CHALLENGE_NO_CREDENTIALS]: unauthorized(CHALLENGE_NO_CREDENTIALS),
  [CHALLENGE_INVALID_TOKEN]: unauthorized(CHALLENGE_INVALID_TOKEN),
});

/**
 * `Warrant-On-Behalf-Of` on a request the mode did not read it for: only a callers-file token
 * allowed to act for that id (or a resolver answering an actor) may send it (docs/api.md,
 * "Callers: acting for someone").
 */
const ACTING_REFUSED = UNAUTHORIZED[CHALLENGE_INVALID_TOKEN] as GateRefusal;

/** The 401 of a failed authentication: the mode's challenge, and its log line if any. */
function refusalOf(failure: AuthFailure): GateRefusal {
  const refusal = UNAUTHORIZED[failure.challenge] ?? unauthorized(failure.challenge);
  return failure.log === undefined ? refusal : { ...refusal, log: failure.log };
}

/** True when a decision refuses the request. */
export function isRefusal(decision: GateDecision): decision is GateRefusal {
  return decision !== undefined && 'status' in decision;
}

function repeatedParameter(query: unknown): string | undefined {
  if (typeof query !== 'object' || query === null) return undefined;
  // Own enumerable keys, as Object.entries, without building the entries of every request.
  for (const name in query)
    if (Object.hasOwn(query, name) && Array.isArray((query as Record<string, unknown>)[name]))
      return name;
  return undefined;
}

function queryRefusal(query: unknown): GateRefusal | undefined {
  const repeated = repeatedParameter(query);
  return repeated === undefined
    ? undefined
    : {
        status: 400,
        error: `Query parameter ${JSON.stringify(repeated.slice(0, 40))} is repeated`,
      };
}

/**
 * The checks above as one function: a decision, or a promise of one while an authenticator
 * runs. The promise rejects only if the authenticator itself rejects (the modes never do); the
 * server answers that as an internal error, never as a pass.
 */
export function createRequestGate(
  options: RequestGateOptions,
): (request: GatedRequest) => GateDecision | Promise<GateDecision> {
  const hosts = new Set([...LOOPBACK_HOST_NAMES, ...(options.allowedHosts ?? [])]);
  const { loopbackBound } = options;
  // Without a mode, the operator token is asked about the requests that carry credentials.
  const authenticator = options.authenticator ?? options.operator;
  const optional = options.authenticator === undefined;
  return (request) => {
    if (loopbackBound()) {
      const name = hostNameOf(
        typeof request.headers.host === 'string' ? request.headers.host : undefined,
      );
      if (name === undefined || !hosts.has(name)) return HOST_REFUSED;
    }
    // The router takes the asterisk form (`GET *`) for `/`; it names no resource, so it is
    // never an open route.
    const open = request.url !== '*' && isOpenRoute(request.method, request.route);
    const acting = request.headers[ON_BEHALF_OF_HEADER] !== undefined;
    if (authenticator === undefined || (optional && request.headers.authorization === undefined))
      return acting && !open ? ACTING_REFUSED : queryRefusal(request.query);
    if (open) return queryRefusal(request.query);
    return authenticator
      .authenticate({
        method: request.method,
        url: request.url,
        headers: request.headers,
        ip: request.ip,
      })
      .then((result): GateDecision => {
        if (!result.ok) return refusalOf(result);
        // Only a mode that read the header acts on it; anything else with it is a 401.
        if (acting && result.delegated !== true) return ACTING_REFUSED;
        return queryRefusal(request.query) ?? { caller: result.caller };
      });
  };
}
