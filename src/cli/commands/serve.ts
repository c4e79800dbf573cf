/** `warrant serve`: the HTTP server of API.md §11, bound to 127.0.0.1 by default. */
import { createHttpServer } from '../../http/server.js';
import { closeMcpConnections } from '../../mcp/outbound.js';
import { parseCommand, text } from '../parse.js';
import {
  createProgramRuntime,
  runtimeOptions,
  runtimeOptionsHelp,
  type RuntimeFlags,
} from '../program-runtime.js';
import { UsageError } from '../usage-error.js';
import { loadAuthorizer } from '../load-modules.js';

export const serveHelp = `Usage: warrant serve [options]

Serves plans over HTTP (POST /api/plans, POST /api/capabilities/:name/execute, introspection,
job history, GET /health). Stops gracefully on SIGINT/SIGTERM: in-flight plans finish, the
store is closed.

Options:
  --host <host>         interface to bind (default 127.0.0.1)
  --port <port>         port (default 3333; 0 picks a free one)
  --token <token>       require "Authorization: Bearer <token>" on /api routes
                        (or set WARRANT_TOKEN; prefer the variable: arguments are visible)
  --legacy-routes       enable the two ungoverned legacy routes (see SECURITY notes in README)
${runtimeOptionsHelp}
  -h, --help            show this help`;

export async function serveCommand(args: readonly string[]): Promise<number> {
  const { values, positionals } = parseCommand(args, {
    ...runtimeOptions,
    host: { type: 'string' },
    port: { type: 'string' },
    token: { type: 'string' },
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
  const runtime = await createProgramRuntime(values as RuntimeFlags);
  const app = createHttpServer(runtime, {
    ...(token !== undefined && { token }),
    legacyRoutes: values['legacy-routes'] === true,
    ...(authorizerFile !== undefined && { legacyAuthorizer: await loadAuthorizer(authorizerFile) }),
  });
  const address = await app.listen({ host: text(values, 'host') ?? '127.0.0.1', port });
  process.stderr.write(
    `warrant serve: listening on ${address}${token === undefined ? '' : ' (bearer token required)'}\n`,
  );
  if (values['legacy-routes'] === true)
    process.stderr.write('warrant serve: legacy routes ENABLED (ungoverned bypasses)\n');
  await new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      process.stderr.write(`warrant serve: ${signal}, finishing in-flight requests\n`);
      resolve();
    };
    process.once('SIGINT', () => stop('SIGINT'));
    process.once('SIGTERM', () => stop('SIGTERM'));
  });
  await app.close();
  await closeMcpConnections();
  await runtime.close();
  process.stderr.write('warrant serve: stopped\n');
  return 0;
}
