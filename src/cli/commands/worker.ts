/**
 * `warrant worker`: runs jobs queued on DBOS Transact in the store's PostgreSQL database by any
 * process (`warrant serve --queue`, `submitPlan` of a runtime with `queue: { engine: 'dbos' }`),
 * docs/guide/stores.md, "Many machines", docs/api.md "Workers".
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { ErrorCode } from '../../errors/error-codes.js';
import { closeMcpConnections } from '../../mcp/outbound.js';
import { writeErr } from '../output.js';
import { parseCommand, text } from '../parse.js';
import {
  createProgramRuntime,
  postgresStoreFlag,
  runtimeOptions,
  runtimeOptionsHelpOf,
  storeOf,
  type RuntimeFlags,
} from '../program-runtime.js';
import { shownText } from '../terminal-text.js';
import { UsageError, firstLine } from '../usage-error.js';

export const workerHelp = `Usage: warrant worker [--store <postgres://...>] [options]

Runs queued jobs: plans submitted by "warrant serve --queue" (or by submitPlan of a runtime with
queue: { engine: 'dbos' }) from any process, on DBOS Transact in the store's PostgreSQL
database. Each job runs in one worker at a time, its steps authorized and recorded by Warrant; a
worker that dies has its jobs taken up by a live one within seconds (steps that may have run are
never run twice unless their capability is idempotent). Register the same capabilities as the
submitting processes: a job whose plan no longer admits fails, saying why.
Stops gracefully on SIGINT/SIGTERM: running jobs finish, then the store is closed.

Options:
  --worker-id <id>      this worker's id: unique among live workers, the same across its
                        restarts (default: the host name)
  --concurrency <n>     jobs run at once by each worker, 1 to 1000 (default 4; held in the
                        database for the queue: the last worker started sets it for all)
${runtimeOptionsHelpOf(undefined, {
  store: `  --store <postgres://...>
                        the PostgreSQL store the jobs are queued in (required, or
                        $WARRANT_STORE; memory and sqlite: stores are refused: workers share
                        PostgreSQL; ?statement_timeout=<ms>, default 30000)`,
})}
  -h, --help            show this help`;

function log(line: string): void {
  writeErr(`warrant worker: ${line}\n`);
}

/** A field of a log call, as text on the line, if it is one to show. */
function field(fields: Record<string, unknown>, name: string): string | undefined {
  const value = fields[name];
  return typeof value === 'string' || typeof value === 'number'
    ? shownText(String(value), 500)
    : undefined;
}

/**
 * One log call (message and fields, in either order) as the worker's line: where it happened (job,
 * step, capability) and the error. Only these fields are shown, never the others a capability
 * logs (inputs and secrets stay out of the worker's output).
 */
export function workerLogLine(first: unknown, second: unknown): string {
  const [message, fields] = typeof first === 'string' ? [first, second] : [second, first];
  const given = (typeof fields === 'object' && fields !== null ? fields : {}) as Record<
    string,
    unknown
  >;
  // A line the runtime already prefixed with "warrant:" gets the worker's prefix only.
  const text = shownText(typeof message === 'string' ? message : '', 2000).replace(
    /^warrant(?: worker)?: /,
    '',
  );
  const where = [
    ['job', field(given, 'jobId')],
    ['step', field(given, 'stepId')],
    ['capability', field(given, 'capability')],
  ]
    .filter(([, value]) => value !== undefined)
    .map(([name, value]) => `${name as string} ${value as string}`);
  const error = field(given, 'error');
  return `${text}${where.length === 0 ? '' : ` (${where.join(', ')})`}${error === undefined ? '' : `: ${error}`}`;
}

function logCall(first: unknown, second: unknown): void {
  log(workerLogLine(first, second));
}

export async function workerCommand(args: readonly string[]): Promise<number> {
  const { values, positionals } = parseCommand(args, {
    ...runtimeOptions,
    'worker-id': { type: 'string' },
    concurrency: { type: 'string' },
  });
  if (values.help) {
    console.log(workerHelp);
    return 0;
  }
  if (positionals.length > 0)
    throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`);
  postgresStoreFlag(storeOf(text(values, 'store')), 'warrant worker');
  const concurrency = Number(text(values, 'concurrency') ?? 4);
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 1000)
    throw new UsageError(
      `--concurrency must be an integer from 1 to 1000, got ${JSON.stringify(values.concurrency)}`,
    );
  const workerId = text(values, 'worker-id');
  const policy = text(values, 'policy');
  // Workers with another policy file run another version (docs/decisions.md, "Workers on DBOS").
  const version =
    policy === undefined
      ? undefined
      : `sha256:${createHash('sha256').update(readFileSync(policy)).digest('hex')}`;
  const runtime = await createProgramRuntime(values as RuntimeFlags, {
    queue: { engine: 'dbos', concurrency },
    // Take-overs of dead workers' jobs and store faults are worth a line on stderr.
    logger: { debug() {}, info() {}, warn: logCall, error: logCall },
  });
  let worker;
  try {
    worker = await runtime.startWorker({
      concurrency,
      ...(workerId !== undefined && { id: workerId }),
      ...(version !== undefined && { version }),
    });
  } catch (error) {
    // Closed with its connections, so the process exits (exit 2, this one line).
    await runtime.close().catch(() => {});
    await closeMcpConnections();
    throw new UsageError(
      (error as { code?: unknown }).code === ErrorCode.WORKER_ALREADY_RUNNING
        ? `${ErrorCode.WORKER_ALREADY_RUNNING}: ${firstLine(error)}`
        : `cannot start the worker: ${firstLine(error)}`,
    );
  }
  log(
    `worker ${JSON.stringify(worker.id)} running (version ${worker.version}, concurrency ${concurrency})`,
  );
  await new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      log(`${signal}, finishing running jobs`);
      resolve();
    };
    process.once('SIGINT', () => stop('SIGINT'));
    process.once('SIGTERM', () => stop('SIGTERM'));
  });
  await runtime.close();
  await closeMcpConnections();
  log('stopped');
  return 0;
}
