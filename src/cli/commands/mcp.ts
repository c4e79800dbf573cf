/**
 * `warrant mcp`: serves the registered capabilities as MCP tools over stdio (docs/guide/mcp.md, "A
 * local client over stdio"). Stdout carries protocol messages only; every diagnostic goes to
 * stderr.
 */
import { ErrorCode } from '../../errors/error-codes.js';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { McpAdapter, type ExecutionCaller, type OperatorRuntime } from '../../index.js';
import { closeMcpConnections } from '../../mcp/outbound.js';
import { mcpPinCommand } from './mcp-pin.js';
import { programTools } from '../../mcp/program-tools.js';
import { callerOf, callerOptionHelp } from '../caller-option.js';
import { parseCommand, text } from '../parse.js';
import {
  createProgramRuntime,
  decisionFlags,
  runtimeOptions,
  runtimeOptionsHelp,
  type RuntimeFlags,
} from '../program-runtime.js';
import { StdioLineTransport } from '../stdio-transport.js';
import { UsageError } from '../usage-error.js';
import { writeErr } from '../output.js';

export const mcpHelp = `Usage: warrant mcp [options]
       warrant mcp pin --mcp-server <name>=<command line> [--pins <file>]

Serves the capabilities of --module and --mcp-server to an MCP client over stdio: one tool per
capability, each call a one-step plan through the runtime (admission, the authorizer and a
recorded job). Tool names keep A-Z, a-z, 0-9, _ and - (ticket.get is the tool ticket_get).
Stdout carries MCP messages only; diagnostics go to stderr. Stops when stdin closes or on
SIGINT/SIGTERM. Exit codes: 0 stopped; 1 an unexpected failure; 2 bad usage (options, files, a
bad module, two capabilities with one tool name, a store that cannot be opened at start-up).

"warrant mcp pin" writes the pins file that --pins reads: the digest of the definition of each
tool of each --mcp-server ("warrant mcp pin --help"; docs/guide/mcp.md, "Pin the tools you call").

Every tool call runs as the caller of --caller (default { id: 'mcp' }): that is what the
authorizer sees. To serve MCP to remote clients with per-client identities, use
"warrant serve" (MCP over Streamable HTTP at /mcp, with its authentication modes).

Options:
${runtimeOptionsHelp}
${callerOptionHelp}
                        (default { "id": "mcp" })
  --builtins            also serve the built-in capabilities (system.echo, http.*, and fs.*
                        with --fs-root); system.status is never served
  --job-tools           also serve the tool warrant_job_status { jobId, waitMs? }: the
                        status, step statuses and result of a job the caller submitted
                        (or of any job of its tenant, with the scope warrant:audit)
  --plan-tools          also serve the tools warrant_preview_plan { plan } and
                        warrant_submit_plan { plan, idempotencyKey?, approval? }: whole
                        plans (steps with result references), described by the plan
                        schema of the served capabilities; follow a submitted job with
                        warrant_job_status (--job-tools)
  --wait-ms <n>         submit each call's plan and wait at most n milliseconds for it
                        (0 to 2147483647): a job still queued or executing then answers
                        { jobId, status } (follow it with warrant_job_status); default:
                        wait for the job's end
  -h, --help            show this help`;

/** The longest `--wait-ms`: the longest delay a Node timer keeps. */
const MAX_WAIT_MS = 2_147_483_647;

/** `--wait-ms`: undefined when absent; a usage error unless an integer 0..MAX_WAIT_MS. */
function waitMsOf(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const ms = /^\d{1,10}$/.test(value) ? Number(value) : Number.NaN;
  if (!(ms <= MAX_WAIT_MS))
    throw new UsageError(
      `--wait-ms must be an integer from 0 to ${MAX_WAIT_MS}, got ${JSON.stringify(value)}`,
    );
  return ms;
}

function log(line: string): void {
  writeErr(`warrant mcp: ${line}\n`);
}

function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n')[0] ?? '';
}

/**
 * The adapter of the program's tools (src/mcp/program-tools.ts). Two capabilities with one tool
 * name are a usage error (exit 2).
 */
function programAdapter(
  runtime: OperatorRuntime,
  builtins: boolean,
  caller: ExecutionCaller,
  jobTools: boolean,
  waitMs: number | undefined,
  planTools: boolean,
  approveFlags: readonly string[],
): McpAdapter {
  try {
    return new McpAdapter(runtime, {
      caller,
      jobTools,
      planTools,
      approveFlags,
      ...(waitMs !== undefined && { waitMs }),
      include: programTools(builtins),
      onInternalError: (error, tool) => log(`internal error in tool ${tool}: ${firstLine(error)}`),
    });
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code !== ErrorCode.MCP_TOOL_NAME_COLLISION && code !== ErrorCode.MCP_TOOL_NAME_INVALID)
      throw error;
    throw new UsageError(firstLine(error));
  }
}

async function serve(args: readonly string[]): Promise<number> {
  const { values, positionals } = parseCommand(args, {
    ...runtimeOptions,
    caller: { type: 'string' },
    builtins: { type: 'boolean' },
    'job-tools': { type: 'boolean' },
    'plan-tools': { type: 'boolean' },
    'wait-ms': { type: 'string' },
  });
  if (values.help) {
    console.log(mcpHelp);
    return 0;
  }
  if (positionals.length > 0)
    throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`);
  const caller = callerOf(text(values, 'caller'), () => ({ id: 'mcp' }));
  const waitMs = waitMsOf(text(values, 'wait-ms'));
  // A server: it takes up the jobs of gone processes it can admit (docs/guide/stores.md, "Recovery").
  const runtime = await createProgramRuntime(values as RuntimeFlags, { recover: true });
  let adapter: McpAdapter;
  try {
    adapter = programAdapter(
      runtime,
      values.builtins === true,
      caller,
      values['job-tools'] === true,
      waitMs,
      values['plan-tools'] === true,
      // The approve command in "awaiting approval" answers runs the step as this process would.
      decisionFlags(values as RuntimeFlags),
    );
  } catch (error) {
    await closeMcpConnections();
    await runtime.close();
    throw error;
  }
  const transport = new StdioLineTransport(process.stdin, process.stdout);
  const stopped = new Promise<string>((resolve) => {
    process.stdin.once('end', () => resolve('stdin closed'));
    process.stdin.once('close', () => resolve('stdin closed'));
    process.once('SIGINT', () => resolve('SIGINT'));
    process.once('SIGTERM', () => resolve('SIGTERM'));
    // Stdout broken (the client went away) also ends the connection: stop, closing the store.
    void transport.closed.then(() => resolve('connection closed'));
  });
  // serveStdio answers both protocol eras (2025-era `initialize`, 2026-07-28 `server/discover`)
  // and asks the factory for one server per connection; stdio has exactly one connection. The
  // transport answers bad lines itself and keeps serving (stdio-transport.ts).
  const handle = serveStdio(() => adapter.createServer(), {
    transport,
    onerror: (error) => log(`protocol error: ${firstLine(error)}`),
  });
  log(`serving ${adapter.tools.length} tools over stdio`);
  log(`${await stopped}, stopping`);
  await handle.close();
  await closeMcpConnections();
  await runtime.close();
  return 0;
}

/** Runs `warrant mcp <args>`; resolves with the exit code. */
export async function mcpCommand(args: string[]): Promise<number> {
  try {
    if (args[0] === 'pin') return await mcpPinCommand(args.slice(1));
    return await serve(args);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    log(error.message);
    return 2;
  }
}
