/** `warrant jobs [list|show <id>]`: the job history of a store. */
import type { Job, JobListFilter } from '../../index.js';
import { toJsonSafe } from '../../jobs/json-value.js';
import { formatTable } from '../format-table.js';
import { parseCommand, text } from '../parse.js';
import { createProgramRuntime, DEFAULT_STORE } from '../program-runtime.js';
import { UsageError } from '../usage-error.js';

export const jobsHelp = `Usage: warrant jobs [list] [--status s] [--capability c] [--limit n] [--store s] [--json]
       warrant jobs show <id> [--store s] [--json]

Lists jobs, newest first, or shows one job with its steps and audit trail (events).
Default store: ${DEFAULT_STORE}. Exit codes: 0 ok, 1 unknown job, 2 bad usage.`;

function showJob(job: Job): string {
  const lines = [
    `job ${job.id}: ${job.status}${job.error === undefined ? '' : ` (${job.error})`}`,
    `goal: ${job.goal}`,
    `created ${job.createdAt}${job.completedAt === undefined ? '' : `, completed ${job.completedAt}`}`,
    '',
    formatTable(
      ['step', 'capability', 'status', 'error'],
      job.steps.map((step) => [step.id, step.capability, step.status, step.error ?? '']),
    ),
    '',
    'events:',
    ...job.events.map((event) => {
      const data = event.data === undefined ? '' : ` ${JSON.stringify(toJsonSafe(event.data))}`;
      return `  ${event.timestamp}  ${event.type}${data}`;
    }),
  ];
  return lines.join('\n');
}

export async function jobsCommand(args: readonly string[]): Promise<number> {
  const { values, positionals } = parseCommand(args, {
    store: { type: 'string' },
    status: { type: 'string' },
    capability: { type: 'string' },
    limit: { type: 'string' },
    json: { type: 'boolean' },
  });
  if (values.help) {
    console.log(jobsHelp);
    return 0;
  }
  const [action = 'list', id, extra] = positionals;
  if (extra !== undefined || (action !== 'list' && action !== 'show'))
    throw new UsageError(`unknown arguments: ${positionals.join(' ')}`);
  if (action === 'show' && id === undefined)
    throw new UsageError('warrant jobs show <id>: the job id is missing');
  const store = text(values, 'store');
  const runtime = await createProgramRuntime(store === undefined ? {} : { store });
  try {
    if (action === 'show') {
      const job = await runtime.getJob(id as string);
      if (job === undefined) {
        process.stderr.write(
          `warrant jobs: no job ${JSON.stringify(id)} in ${store ?? DEFAULT_STORE}\n`,
        );
        return 1;
      }
      process.stdout.write(
        values.json ? `${JSON.stringify(toJsonSafe(job), null, 2)}\n` : `${showJob(job)}\n`,
      );
      return 0;
    }
    const filter: JobListFilter = { limit: 20 };
    const status = text(values, 'status');
    const capability = text(values, 'capability');
    const limit = text(values, 'limit');
    if (status !== undefined) filter.status = status as JobListFilter['status'];
    if (capability !== undefined) filter.capability = capability;
    if (limit !== undefined) {
      if (!/^\d+$/.test(limit)) throw new UsageError('--limit must be a non-negative integer');
      filter.limit = Number(limit);
    }
    const jobs = await runtime.listJobs(filter);
    if (values.json) {
      process.stdout.write(`${JSON.stringify(toJsonSafe(jobs), null, 2)}\n`);
      return 0;
    }
    const rows = jobs.map((job) => [
      job.id,
      job.status,
      String(job.steps.length),
      job.createdAt,
      job.goal,
    ]);
    process.stdout.write(`${formatTable(['id', 'status', 'steps', 'created', 'goal'], rows)}\n`);
    return 0;
  } finally {
    await runtime.close();
  }
}
