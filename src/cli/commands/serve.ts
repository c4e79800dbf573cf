/**
 * `warrant serve`: the HTTP server of docs/guide/http.md, "HTTP routes" (and MCP over Streamable
 * HTTP at `/mcp`), bound to 127.0.0.1 by default, with at most one authentication mode
 * (`src/http/auth/`, docs/decisions.md "Authentication modes").
 */
import { ErrorCode } from '../../errors/error-codes.js';
import { lookup } from 'node:dns/promises';
import { isIP, type AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { oneLineError } from '../../errors/error-text.js';
import {
  authCliOptions,
  authOptionsFromValues,
  authOptionsHelp,
  createAuthenticator,
  createOperatorToken,
  isAuthOptionsError,
  type ConfiguredAuthenticator,
} from '../../http/auth/index.js';
import { allowedHostName, isLoopbackAddress } from '../../http/request-gate.js';
import { JOB_LIST_DEFAULT, JOB_LIST_MAX } from '../../http/routes/jobs.js';
import { createHttpServer } from '../../http/server.js';
import { closeMcpConnections } from '../../mcp/outbound.js';
import { parseCommand, text } from '../parse.js';
import {
  createProgramRuntime,
  postgresStoreFlag,
  storeOf,
  runtimeOptions,
  runtimeOptionsHelp,
  type RuntimeFlags,
} from '../program-runtime.js';
import { createRateLimitedLog } from '../rate-limited-log.js';
import { UsageError } from '../usage-error.js';
import { writeErr, writeOut } from '../output.js';
import { loadAuthorizer, loadResolverModule } from '../load-modules.js';

export const serveHelp = `Usage: warrant serve [options]

Serves plans over HTTP (POST /api/plans, POST /api/capabilities/:name/execute, introspection,
job history, GET /health) and MCP over Streamable HTTP at /mcp (one tool per capability of
--module and --mcp-server, named as by "warrant mcp"; stateless). Stops gracefully on SIGINT/SIGTERM: in-flight plans finish, the store is closed.
GET /api/jobs answers ${JOB_LIST_DEFAULT} jobs unless ?limit= asks for up to ${JOB_LIST_MAX}.
The audit console is at / (open http://127.0.0.1:3333/ in a browser): jobs, timelines,
pending approvals, capabilities. Its static files need no credentials (they hold no data);
the page asks for a token once and sends it with every API request.

The caller the authorizer sees is the authenticated one (every route and every MCP tool call);
without a mode, { id: 'http' }. A request without valid credentials gets 401 with
WWW-Authenticate: Bearer (or Bearer error="invalid_token") and runs nothing.

Without an authentication mode, the server makes a random operator token at start and prints
the console's address with it on stdout (http://127.0.0.1:3333/#token=...), the only place it
is ever shown: a request carrying it as a bearer token is { id: 'operator', scopes:
['warrant:audit'] }, reads every job and may approve; a request without an Authorization
header stays { id: 'http' }.

Options:
  --host <host>         interface to bind (default 127.0.0.1). Without an authentication
                        mode, only a loopback address is served (see --insecure-no-auth)
  --port <port>         port (default 3333; 0 picks a free one)
  --allowed-host <name> a Host name to answer besides localhost, 127.0.0.1 and [::1] while
                        bound to loopback (other names get 421; repeatable or comma-separated)
  --insecure-no-auth    serve a non-loopback address without authentication (anyone who
                        reaches it runs plans as { id: 'http' })
  --legacy-routes       enable the two ungoverned legacy routes, known bypasses of the
                        authorizer or of admission (SECURITY.md, in the package)
  --queue               plans (HTTP and MCP) are queued for \`warrant worker\` processes on the
                        PostgreSQL store (docs/guide/stores.md): this server runs none;
                        a plan waits for its job (Prefer: respond-async answers 202 at once)
  --builtins            also serve the built-in capabilities as MCP tools at /mcp (the HTTP
                        routes always reach them); system.status is never a tool
${runtimeOptionsHelp}
  -h, --help            show this help

${authOptionsHelp}

A malformed callers file, key, JWKS file or resolver module stops the server at start (exit 2).
Failures of the store and authentication problems the operator should know about (a resolver
that throws or hangs, a JWKS that cannot be fetched) are logged on stderr, at most one line per
second each; a bad or missing token is never logged.`;

function log(line: string): void {
  writeErr(`warrant serve: ${line}\n`);
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
    `refusing to serve ${host} (not a loopback address) without authentication: add --token <token> (or WARRANT_TOKEN=<token>), --callers <file>, --jwt-secret/--jwt-public-key/--jwks with --jwt-issuer and --jwt-audience, or --caller-resolver <module>; or pass --insecure-no-auth`,
  );
}

/** The configured authentication mode, or none; a set-up problem is a UsageError (exit 2). */
async function authentication(
  values: Readonly<Record<string, unknown>>,
): Promise<ConfiguredAuthenticator | undefined> {
  try {
    return await createAuthenticator({
      ...authOptionsFromValues(values, process.env),
      importResolver: loadResolverModule,
    });
  } catch (error) {
    if (isAuthOptionsError(error)) throw new UsageError(error.message);
    throw error;
  }
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

/** Two capabilities with one MCP tool name (src/mcp/tool-names.ts) are bad usage (exit 2). */
function toolNameUsageError(error: unknown): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  const toolName =
    code === ErrorCode.MCP_TOOL_NAME_COLLISION || code === ErrorCode.MCP_TOOL_NAME_INVALID;
  return toolName ? new UsageError((error as Error).message.split('\n')[0] ?? '') : error;
}

export async function serveCommand(args: readonly string[]): Promise<number> {
  const { values, positionals } = parseCommand(args, {
    ...runtimeOptions,
    ...authCliOptions,
    host: { type: 'string' },
    port: { type: 'string' },
    'allowed-host': { type: 'string', multiple: true },
    'insecure-no-auth': { type: 'boolean' },
    'legacy-routes': { type: 'boolean' },
    builtins: { type: 'boolean' },
    queue: { type: 'boolean' },
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
  const authorizerFile = text(values, 'authorizer');
  const host = text(values, 'host') ?? '127.0.0.1';
  const hosts = allowedHosts((values['allowed-host'] as string[] | undefined) ?? []);
  const auth = await authentication(values);
  const unauthenticatedAllowed = auth !== undefined || values['insecure-no-auth'] === true;
  if (!unauthenticatedAllowed && !(await addressesOf(host)).every(isLoopbackAddress))
    throw refusal(host);

  const queue = values.queue === true;
  if (queue) postgresStoreFlag(storeOf(text(values, 'store')), '--queue');
  // Each state at most one line per second: a flapping store cannot flood stderr.
  const outageLines = createRateLimitedLog(log, {
    suppressed: (count) =>
      `${count} more store outage ${count === 1 ? 'line' : 'lines'} suppressed (at most one line per second)`,
  });
  const outageEnds = createRateLimitedLog(log, {
    suppressed: (count) =>
      `${count} more store outage ${count === 1 ? 'end' : 'ends'} suppressed (at most one line per second)`,
  });
  // A server takes up the jobs of processes that ended on its store (docs/guide/stores.md,
  // "Recovery"); with --queue it runs no job: workers take those up (docs/guide/stores.md, "Many
  // machines"). It says when its store stops answering writes and when it answers again
  // (docs/guide/stores.md, "Store outages").
  const runtime = await createProgramRuntime(values as RuntimeFlags, {
    ...(queue ? { queue: { engine: 'dbos' as const } } : { recover: true }),
    onStoreOutage: (state) =>
      state === 'down'
        ? outageLines.write(
            'store outage: writes to the job store are failing; retrying (jobs given up are recorded once it answers)',
          )
        : outageEnds.write('store outage ended: the job store answers writes again'),
  });
  const failures = createRateLimitedLog(log, {
    suppressed: (count) =>
      `${count} more internal ${count === 1 ? 'error' : 'errors'} suppressed (at most one line per second)`,
  });
  const authLines = createRateLimitedLog(log, {
    suppressed: (count) =>
      `${count} more authentication ${count === 1 ? 'line' : 'lines'} suppressed (at most one line per second)`,
  });
  const legacyAuthorizer =
    authorizerFile === undefined ? undefined : await loadAuthorizer(authorizerFile);
  // Without a mode, the console's own credentials (docs/api.md, "The operator token").
  const operatorToken = auth === undefined ? createOperatorToken() : undefined;
  let app: FastifyInstance;
  try {
    app = createHttpServer(runtime, {
      ...(auth !== undefined && { authenticator: auth.authenticator }),
      ...(operatorToken !== undefined && { operatorToken }),
      onAuthLog: (line) => authLines.write(`authentication refused: ${line}`),
      allowedHosts: hosts,
      legacyRoutes: values['legacy-routes'] === true,
      mcpBuiltins: values.builtins === true,
      queuePlans: queue,
      ...(legacyAuthorizer !== undefined && { legacyAuthorizer }),
      onInternalError: (error, route) =>
        failures.write(`internal error on ${route}: ${describeInternalError(error)}`),
    });
  } catch (error) {
    await runtime.close();
    throw toolNameUsageError(error);
  }
  await app.listen({ host, port });
  const { urls, loopbackOnly } = boundUrls(app);
  if (!loopbackOnly && !unauthenticatedAllowed) {
    // The name resolved to loopback a moment ago and to something else now: stop unserved.
    await app.close();
    await runtime.close();
    throw refusal(host);
  }
  for (const warning of auth?.warnings ?? []) log(warning);
  if (!loopbackOnly && auth === undefined)
    log('WARNING: no authentication on a non-loopback address (--insecure-no-auth)');
  log(`listening on ${urls.join(', ')}${auth === undefined ? '' : ` (${auth.summary})`}`);
  if (values['legacy-routes'] === true) log('legacy routes ENABLED (ungoverned bypasses)');
  // The one place the operator token is shown: stdout, not the log lines of stderr.
  if (operatorToken !== undefined)
    writeOut(
      `Audit console (operator token for this run, may approve): ${urls[0]}/#token=${operatorToken}\n`,
    );
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
  authLines.close();
  outageLines.close();
  outageEnds.close();
  log('stopped');
  return 0;
}
