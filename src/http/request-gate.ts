/**
 * Who may reach a route of `warrant serve`. The server asks `createRequestGate` once per request,
 * after the router has matched the route and before any body is read or any handler runs
 * (README "HTTP routes", docs/decisions.md "HTTP and the program"):
 *
 * 1. Host (DNS rebinding): while the server is bound to a loopback address, the `Host` header
 *    must name loopback (`localhost`, `127.0.0.1`, `[::1]`, any port, any case) or an allowed
 *    host; otherwise 421, on every route.
 * 2. Bearer token: when one is configured, every route but `GET /health` needs it (401). The
 *    decision is made on the route the router matched, never on the URL text, so no spelling of
 *    a target (percent-encoding, dot segments, doubled slashes, absolute form) can reach a
 *    handler without the token; a target that matches no route needs the token too.
 * 3. A repeated query parameter is refused with 400 before any handler reads it.
 */
import { timingSafeEqual } from 'node:crypto';
import { BlockList, isIP } from 'node:net';

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

/** True for `GET /health` and its `HEAD`, the only routes open without the token. */
export function isOpenRoute(method: string, route: string | undefined): boolean {
  return route === '/health' && (method === 'GET' || method === 'HEAD');
}

/** True when `header` is exactly `Bearer <token>` (constant-time comparison). */
export function bearerTokenMatches(header: string | undefined, token: string): boolean {
  if (header === undefined || !header.startsWith('Bearer ')) return false;
  const given = Buffer.from(header.slice(7));
  const expected = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** What the gate reads of a request: the method, the matched route (if any) and headers. */
export interface GatedRequest {
  readonly method: string;
  /** The route pattern the router matched (e.g. `/api/jobs/:id`); undefined for none. */
  readonly route: string | undefined;
  readonly host: string | undefined;
  readonly authorization: string | undefined;
  /** The parsed query: a repeated parameter is an array. */
  readonly query: unknown;
}

export interface GateRefusal {
  readonly status: 400 | 401 | 421;
  readonly error: string;
  readonly headers?: Readonly<Record<string, string>>;
}

export interface RequestGateOptions {
  readonly token?: string | undefined;
  /** Host names answered besides the loopback names, lower-cased, without a port. */
  readonly allowedHosts?: readonly string[] | undefined;
  /** Whether the server is bound to a loopback address now (checked per request). */
  readonly loopbackBound: () => boolean;
}

const HOST_REFUSED: GateRefusal = Object.freeze({ status: 421, error: 'Host not allowed' });
const UNAUTHORIZED: GateRefusal = Object.freeze({
  status: 401,
  error: 'Unauthorized',
  headers: Object.freeze({ 'www-authenticate': 'Bearer' }),
});

function repeatedParameter(query: unknown): string | undefined {
  if (typeof query !== 'object' || query === null) return undefined;
  for (const [name, value] of Object.entries(query)) if (Array.isArray(value)) return name;
  return undefined;
}

/** The checks above as one function: a refusal to send, or undefined to go on. */
export function createRequestGate(
  options: RequestGateOptions,
): (request: GatedRequest) => GateRefusal | undefined {
  const hosts = new Set([...LOOPBACK_HOST_NAMES, ...(options.allowedHosts ?? [])]);
  const { token, loopbackBound } = options;
  return (request) => {
    if (loopbackBound()) {
      const name = hostNameOf(request.host);
      if (name === undefined || !hosts.has(name)) return HOST_REFUSED;
    }
    if (
      token !== undefined &&
      !isOpenRoute(request.method, request.route) &&
      !bearerTokenMatches(request.authorization, token)
    ) {
      return UNAUTHORIZED;
    }
    const repeated = repeatedParameter(request.query);
    if (repeated !== undefined)
      return {
        status: 400,
        error: `Query parameter ${JSON.stringify(repeated.slice(0, 40))} is repeated`,
      };
    return undefined;
  };
}
