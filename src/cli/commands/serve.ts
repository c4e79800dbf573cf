/** `warrant serve`: the HTTP server of README "HTTP routes", bound to 127.0.0.1 by default. */
import { lookup } from 'node:dns/promises';
import { isIP, type AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { oneLineError } from '../../errors/error-text.js';
import { allowedHostName, isLoopbackAddress } from '../../http/request-gate.js';
import { createHttpServer, JOB_LIST_DEFAULT, JOB_LIST_MAX } from '../../http/server.js';
import { closeMcpConnections } from '../../mcp/outbound.js';
import { parseCommand, text } from '../parse.js';
import {
  createProgramRuntime,
  runtimeOptions,
  runtimeOptionsHelp,
  type RuntimeFlags,
} from '../program-runtime.js';
import { createRateLimitedLog } from '../rate-limited-log.js';
import { UsageError } from '../usage-error.js';
import { loadAuthorizer } from '../load-modules.js';

export const serveHelp = `Usage: warrant serve [options]

Serves plans over HTTP (POST /api/plans, POST /api/capabilities/:name/execute, introspection,
job history, GET /health). Stops gracefully on SIGINT/SIGTERM: in-flight plans finish, the
store is closed. GET /api/jobs answers ${JOB_LIST_DEFAULT} jobs unless ?limit= asks for up to ${JOB_LIST_MAX}.

Options:
  --host <host>         interface to bind (default 127.0.0.1). Without a token, only a
                        loopback address is served (see --insecure-no-auth)
  --port <port>         port (default 3333; 0 picks a free one)
  --token <token>       require "Authorization: Bearer <token>" on every route but GET /health
                        (or set WARRANT_TOKEN; prefer the variable: arguments are visible)
  --allowed-host <name> a Host name to answer besides localhost, 127.0.0.1 and [::1] while
                        bound to loopback (other names get 421; repeatable or comma-separated)
  --insecure-no-auth    serve a non-loopback address without a token (anyone who reaches it
                        runs plans as the server's caller)
  --legacy-routes       enable the two ungoverned legacy routes (see SECURITY notes in README)
${runtimeOptionsHelp}
  -h, --help            show this help

Failures of the store are logged on stderr, at most one line per second.`;

function log(line: string): void {
  process.stderr.write(`warrant serve: ${line}\n`);
}

/** The names of `--allowed-host` (repeatable, comma-separated), checked and lower-cased. */
function allowedHosts(values: readonly string[]): string[] {
  return values
    .flatMap((value) => value.split(','))
    .map((name) => name.trim())
    .filter((name) => name !== '')
    .map((name) => {
      const host = allowedHostName(name);
      if (host === undefined)
        throw new UsageError(
          `--allowed-host takes host names without a port, e.g. warrant.internal; got ${JSON.stringify(name.slice(0, 80))}`,
        );
      return host;
    });
}

/** The addresses `host` binds: itself when it is an IP address, else what it resolves to. */
async function addressesOf(host: string): Promise<string[]> {
  if (isIP(host) !== 0) return [host];
  try {
    return (await lookup(host, { all: true })).map((entry) => entry.address);
  } catch {
    return []; // listen reports the unknown name
  }
}

function refusal(host: string): UsageError {
  return new UsageError(
    `refusing to serve ${host} (not a loopback address) without authentication: add a token with --token <token> or WARRANT_TOKEN=<token>, or pass --insecure-no-auth`,
  );
}

/** Every address the server really bound, as URLs (`http://[::1]:3333`). */
function boundUrls(app: FastifyInstance): { urls: string[]; loopbackOnly: boolean } {
  // Listening on TCP, every bound address is an AddressInfo (a string only for pipes).
  const bound = app.addresses().filter((entry): entry is AddressInfo => typeof entry === 'object');
  return {
    urls: bound.map(({ address, family, port }) =>
      family === 'IPv6' ? `http://[${address}]:${port}` : `http://${address}:${port}`,
    ),
    loopbackOnly: bound.every(({ address }) => isLoopbackAddress(address)),
  };
}

/** One line for the log: the error's code and the first line of its message, never a stack. */
function describeInternalError(error: unknown): string {
  try {
    const code = (error as { code?: unknown } | null)?.code;
    const message = oneLineError(error instanceof Error ? error.message : String(error));
    return typeof code === 'string' ? `${code}: ${message}` : message;
  } catch {
    return 'an unreadable error';
  }
}

export async function serveCommand(args: readonly string[]): Promise<number> {
  const { values, positionals } = parseCommand(args, {
    ...runtimeOptions,
    host: { type: 'string' },
    port: { type: 'string' },
    token: { type: 'string' },
    'allowed-host': { type: 'string', multiple: true },
    'insecure-no-auth': { type: 'boolean' },
    'legacy-routes': { type: 'boolean' },
  });
  if (values.help) {
    console.log(serveHelp);
    return 0;
  }
  if (positionals.length > 0)
    throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`);
  const port = Number(text(values, 'port') ?? 3333);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new UsageError(`--port must be 0..65535, got ${JSON.stringify(values.port)}`);
  const token = text(values, 'token') ?? process.env.WARRANT_TOKEN;
  const authorizerFile = text(values, 'authorizer');
  if (token === '') throw new UsageError('--token must not be empty');
  const host = text(values, 'host') ?? '127.0.0.1';
  const hosts = allowedHosts((values['allowed-host'] as string[] | undefined) ?? []);
  const unauthenticatedAllowed = token !== undefined || values['insecure-no-auth'] === true;
  if (!unauthenticatedAllowed && !(await addressesOf(host)).every(isLoopbackAddress))
    throw refusal(host);

  const runtime = await createProgramRuntime(values as RuntimeFlags);
  const failures = createRateLimitedLog(log, {
    suppressed: (count) =>
      `${count} more internal ${count === 1 ? 'error' : 'errors'} suppressed (at most one line per second)`,
  });
  const app = createHttpServer(runtime, {
    ...(token !== undefined && { token }),
    allowedHosts: hosts,
    legacyRoutes: values['legacy-routes'] === true,
    ...(authorizerFile !== undefined && { legacyAuthorizer: await loadAuthorizer(authorizerFile) }),
    onInternalError: (error, route) =>
      failures.write(`internal error on ${route}: ${describeInternalError(error)}`),
  });
  await app.listen({ host, port });
  const { urls, loopbackOnly } = boundUrls(app);
  if (!loopbackOnly && !unauthenticatedAllowed) {
    // The name resolved to loopback a moment ago and to something else now: stop unserved.
    await app.close();
    await runtime.close();
    throw refusal(host);
  }
  if (!loopbackOnly && token === undefined)
    log('WARNING: no authentication on a non-loopback address (--insecure-no-auth)');
  log(`listening on ${urls.join(', ')}${token === undefined ? '' : ' (bearer token required)'}`);
  if (values['legacy-routes'] === true) log('legacy routes ENABLED (ungoverned bypasses)');
  await new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      log(`${signal}, finishing in-flight requests`);
      resolve();
    };
    process.once('SIGINT', () => stop('SIGINT'));
    process.once('SIGTERM', () => stop('SIGTERM'));
  });
  await app.close();
  await closeMcpConnections();
  await runtime.close();
  failures.close();
  log('stopped');
  return 0;
}
