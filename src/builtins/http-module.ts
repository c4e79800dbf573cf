/**
 * `http.get` (read) and `http.status`: GET requests to allow-listed hosts only, with a timeout
 * and a cap on the body read. An empty allow-list refuses every request. A host-only entry
 * allows ports 80 and 443; `host:port` allows that port only. `http.get` is made with
 * `createHttpCapability` (docs/api.md, "Prepared effects"): the host is resolved before the
 * decision, internal addresses are refused unless `allowPrivate` (`--http-allow-private`), and
 * the request goes to the prepared addresses only, following no redirect. The body is read as a
 * stream and the connection is closed once the cap is reached.
 */
import {
  createCapability,
  createHttpCapability,
  type CapabilityModule,
  type HostResolver,
} from '../index.js';

export interface HttpModuleOptions {
  /** Host names or addresses (`example.com`, `[::1]`), each optionally with `:port`. */
  readonly allowHosts: readonly string[];
  readonly timeoutMs?: number;
  /** Largest body returned, in bytes; the rest is not read. Default 1 MiB. */
  readonly maxBytes?: number;
  /** Reach loopback, private, link-local, unique-local and metadata addresses too (default false). */
  readonly allowPrivate?: boolean;
  /** Resolves host names (default `dns.lookup`): for tests. */
  readonly resolve?: HostResolver;
}

/** One allow-list entry: a host as the URL parser writes it, and a port, or none for 80/443. */
export interface AllowEntry {
  readonly host: string;
  readonly port?: number;
}

const ENTRY = /^(\[[0-9A-Fa-f:.]+\]|[^:[\]/?#@\\\s*]+)(?::(\d{1,5}))?$/;

/** Parses `host`, `host:port`, `[v6]` or `[v6]:port`; throws a one-line error otherwise. */
export function parseAllowEntry(entry: string): AllowEntry {
  const invalid = () =>
    new TypeError(
      `${JSON.stringify(entry)} is not a host or host:port (IPv6 in brackets: [::1]:8080)`,
    );
  const match = ENTRY.exec(entry);
  if (match === null) throw invalid();
  let host: string;
  try {
    // The URL parser normalizes case, IPv4 and IPv6 spellings the same way as for requests.
    host = new URL(`http://${match[1] as string}/`).hostname;
  } catch {
    throw invalid();
  }
  if (match[2] === undefined) return { host };
  const port = Number(match[2]);
  if (port < 1 || port > 65_535) throw invalid();
  return { host, port };
}

const DEFAULT_PORTS: Readonly<Record<string, number>> = { 'http:': 80, 'https:': 443 };

/** True when an entry names the URL's host and allows its port (explicit or the scheme's). */
export function allowsUrl(entries: readonly AllowEntry[], url: URL): boolean {
  const port = url.port === '' ? DEFAULT_PORTS[url.protocol] : Number(url.port);
  return entries.some(
    (entry) =>
      entry.host === url.hostname &&
      (entry.port === undefined ? port === 80 || port === 443 : port === entry.port),
  );
}

const show = (entry: AllowEntry) =>
  entry.port === undefined ? entry.host : `${entry.host}:${entry.port}`;

export function createHttpModule(options: HttpModuleOptions): CapabilityModule {
  const allowed = options.allowHosts.map(parseAllowEntry);
  const timeoutMs = options.timeoutMs ?? 10_000;
  const maxBytes = options.maxBytes ?? 1024 * 1024;
  return {
    manifest: { name: 'builtin-http', version: '1.0.0', capabilities: ['http.get', 'http.status'] },
    capabilities: [
      createHttpCapability<
        { url: string },
        {
          url: string;
          status: number;
          contentType: string | null;
          body: string;
          truncated: boolean;
        }
      >({
        name: 'http.get',
        version: '1.0.0',
        description:
          'GETs a URL on an allow-listed host and returns its status and text body (up to a cap)',
        risk: 'read',
        timeoutMs,
        maxBytes,
        allowPrivate: options.allowPrivate === true,
        ...(options.resolve !== undefined && { resolve: options.resolve }),
        inputSchema: { url: { type: 'string', required: true, description: 'http(s) URL' } },
        outputSchema: {
          type: 'object',
          properties: {
            url: { type: 'string' },
            status: { type: 'number' },
            contentType: { type: ['string', 'null'] },
            body: { type: 'string' },
            truncated: { type: 'boolean' },
          },
          required: ['url', 'status', 'contentType', 'body', 'truncated'],
        },
        request: (input) => {
          let url: URL;
          try {
            url = new URL(input.url);
          } catch {
            throw new Error(`Not a valid URL: ${JSON.stringify(input.url)}`);
          }
          if (url.protocol !== 'http:' && url.protocol !== 'https:')
            throw new Error(`Only http and https URLs are allowed`);
          if (!allowsUrl(allowed, url)) {
            throw new Error(
              `Host ${JSON.stringify(url.host)} is not in the allow-list (an entry without a port allows 80 and 443)`,
            );
          }
          return { url: input.url, headers: { accept: '*/*' } };
        },
        respond: (response) => ({
          url: response.url,
          status: response.status,
          contentType: response.headers['content-type'] ?? null,
          body: response.body,
          truncated: response.truncated,
        }),
      }),
      createCapability<unknown, { provider: string; ready: boolean; allowHosts: string[] }>({
        name: 'http.status',
        version: '1.0.0',
        description: 'Reports the http provider configuration',
        risk: 'read',
        outputSchema: {
          type: 'object',
          properties: {
            provider: { type: 'string' },
            ready: { type: 'boolean' },
            allowHosts: { type: 'array', items: { type: 'string' } },
          },
          required: ['provider', 'ready', 'allowHosts'],
        },
        execute: () => ({
          provider: 'http',
          ready: allowed.length > 0,
          allowHosts: allowed.map(show),
        }),
      }),
    ],
  };
}
