/** `warrant run <plan.json>`: admits and executes a plan, with progress and a summary. */
import { readFile } from 'node:fs/promises';
import {
  isPlanAdmissionError,
  type ExecutionPlan,
  type Job,
  type RuntimeEvent,
} from '../../index.js';
import { toJsonSafe } from '../../jobs/json-value.js';
import { closeMcpConnections } from '../../mcp/outbound.js';
import { parseCommand } from '../parse.js';
import {
  createProgramRuntime,
  runtimeOptions,
  runtimeOptionsHelp,
  type RuntimeFlags,
} from '../program-runtime.js';
import { UsageError } from '../usage-error.js';
import { formatTable } from '../format-table.js';

export const runHelp = `Usage: warrant run <plan.json> [options]

Admits and executes an ExecutionPlan. Progress goes to stderr as each step ends; a summary
table follows. Exit codes: 0 job completed, 1 job failed, 2 plan refused at admission or bad usage.

Options:
${runtimeOptionsHelp}
  --json                print the job as JSON on stdout
  -h, --help            show this help`;

interface StepLine {
  decision: string;
  started?: number;
  durationMs?: number;
}

export async function runCommand(args: readonly string[]): Promise<number> {
  const { values, positionals } = parseCommand(args, {
    ...runtimeOptions,
    json: { type: 'boolean' },
  });
  if (values.help) {
    console.log(runHelp);
    return 0;
  }
  if (positionals.length !== 1)
    throw new UsageError('expected exactly one plan file: warrant run <plan.json>');
  const file = positionals[0] as string;
  let plan: ExecutionPlan;
  try {
    plan = JSON.parse(await readFile(file, 'utf8')) as ExecutionPlan;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(
      code === 'ENOENT'
        ? `plan file not found: ${file}`
        : `${file} is not valid JSON: ${(error as Error).message}`,
    );
  }
  const runtime = await createProgramRuntime(values as RuntimeFlags);
  const lines = new Map<string, StepLine>();
  const progress = (event: RuntimeEvent): void => {
    const stepId = event.stepId;
    if (stepId === undefined) return;
    const line = lines.get(stepId) ?? { decision: '-' };
    lines.set(stepId, line);
    const capability = String(event.data?.capability ?? '');
    if (event.type === 'capability.started') {
      line.decision = 'allow';
      line.started = performance.now();
      return;
    }
    if (line.started !== undefined) line.durationMs = performance.now() - line.started;
    const took = line.durationMs === undefined ? '' : ` in ${line.durationMs.toFixed(1)} ms`;
    if (event.type === 'capability.completed')
      process.stderr.write(`  ✔ ${stepId} (${capability}) allowed, completed${took}\n`);
    if (event.type === 'capability.denied') {
      line.decision = 'deny';
      process.stderr.write(`  ✖ ${stepId} (${capability}) denied: ${String(event.data?.reason)}\n`);
    }
    if (event.type === 'capability.failed')
      process.stderr.write(
        `  ✖ ${stepId} (${capability}) failed${took}: ${String(event.data?.error)}\n`,
      );
  };
  runtime.subscribe('*', progress);
  try {
    let job: Job;
    try {
      job = await runtime.executePlan(plan);
    } catch (error) {
      if (!isPlanAdmissionError(error)) throw error;
      process.stderr.write(`Plan refused at admission (${error.code}):\n`);
      for (const issue of error.issues) process.stderr.write(`  ${issue.code}: ${issue.message}\n`);
      return 2;
    }
    const rows = job.steps.map((step) => {
      const line = lines.get(step.id);
      return [
        step.id,
        step.capability,
        line?.decision ?? '-',
        step.status,
        line?.durationMs === undefined ? '-' : `${line.durationMs.toFixed(1)} ms`,
      ];
    });
    process.stderr.write(
      `\n${formatTable(['step', 'capability', 'decision', 'status', 'duration'], rows)}\n`,
    );
    process.stderr.write(
      `\njob ${job.id} ${job.status}${job.error === undefined ? '' : `: ${job.error}`}\n`,
    );
    if (values.json) process.stdout.write(`${JSON.stringify(toJsonSafe(job), null, 2)}\n`);
    else process.stdout.write(`${job.id}\n`);
    return job.status === 'completed' ? 0 : 1;
  } finally {
    await closeMcpConnections();
    await runtime.close();
  }
}
