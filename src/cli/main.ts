#!/usr/bin/env node
/**
 * The `warrant` executable. Exit codes (docs/guide/cli.md, "Exit codes"): 0 success; 1 a failed
 * job, an unknown id or capability, work that never settled, or an unexpected failure; 2 bad
 * usage (options, files, modules, a store that cannot be opened) or a plan refused at
 * admission. Errors are one line, never a stack trace.
 */
import { storeFailureAnswer } from '../json/answer.js';
import { unsettledLine } from './unsettled.js';
import { firstLine, UsageError } from './usage-error.js';
import { guardProgramOutputs, writeErr } from './output.js';

const usage = `Usage: warrant <command> [options]

Commands:
  run <plan.json>        admit and execute a plan (progress on stderr)
  serve                  serve plans over HTTP on 127.0.0.1
  mcp                    serve capabilities to an MCP client over stdio
  mcp pin                pin the tools of downstream MCP servers (the pins file)
  worker                 run queued jobs from a PostgreSQL store (DBOS Transact)
  jobs [list|show <id>]  job history and audit trail
  approvals [approve|reject <jobId> <stepId> --digest <d>]
                         pending approval requests, and deciding one
  notifications          notifications not delivered: pending, failed, dropped
  limits                 limit counters: what each caller, tenant or all used in the window
  capabilities [name]    what is registered (introspection)
  policy schema|validate <file.cedar>
                         the Cedar schema of what is registered; check policies against it
  evidence verify <file> check a job's evidence bundle offline

Run "warrant <command> --help" for the options of a command.

Exit codes: 0 success; 1 a failed job, an unknown job or capability, or work that never
settled; 2 bad usage (options, files, modules, a store that cannot be opened) or a plan
refused at admission.`;

type Command = (args: readonly string[]) => Promise<number>;

// Each command's module loads when it runs, so that `warrant jobs` never loads the HTTP stack
// `serve` needs, nor `warrant run` the MCP SDK (docs/decisions.md, "Light import").
const commands: Record<string, () => Promise<Command>> = {
  run: async () => (await import('./commands/run.js')).runCommand,
  serve: async () => (await import('./commands/serve.js')).serveCommand,
  worker: async () => (await import('./commands/worker.js')).workerCommand,
  mcp: async () => {
    const { mcpCommand } = await import('./commands/mcp.js');
    return (args) => mcpCommand([...args]);
  },
  jobs: async () => (await import('./commands/jobs.js')).jobsCommand,
  approvals: async () => (await import('./commands/approvals.js')).approvalsCommand,
  notifications: async () => (await import('./commands/notifications.js')).notificationsCommand,
  limits: async () => (await import('./commands/limits.js')).limitsCommand,
  capabilities: async () => (await import('./commands/capabilities.js')).capabilitiesCommand,
  policy: async () => (await import('./commands/policy.js')).policyCommand,
  evidence: async () => (await import('./commands/evidence.js')).evidenceCommand,
};

async function main(argv: readonly string[]): Promise<number> {
  guardProgramOutputs();
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    console.log(usage);
    return name === undefined ? 2 : 0;
  }
  if (name === '--version' || name === '-v') {
    console.log('0.2.0');
    return 0;
  }
  const load = Object.hasOwn(commands, name) ? commands[name] : undefined;
  if (load === undefined) {
    writeErr(`warrant: unknown command ${JSON.stringify(name)}\n\n${usage}\n`);
    return 2;
  }
  // The event loop drained while the command still waits (a module, an authorizer or a
  // capability whose promise never settles): without this, Node would exit 0.
  let finished = false;
  process.once('beforeExit', () => {
    if (finished) return;
    writeErr(`warrant ${name}: ${unsettledLine()}\n`);
    process.exitCode = 1;
  });
  try {
    const command = await load();
    return await command(rest);
  } catch (error) {
    if (error instanceof UsageError) {
      writeErr(`warrant ${name}: ${error.message}\n`);
      return 2;
    }
    // A store that failed: Warrant's own words and the job's id (docs/api.md, "Store outages").
    const failed = storeFailureAnswer(error);
    writeErr(
      `warrant ${name}: ${failed === undefined ? firstLine(error) : `${failed.code}: ${failed.error}`}\n`,
    );
    return 1;
  } finally {
    finished = true;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  () => {
    process.exitCode = 1;
  },
);
