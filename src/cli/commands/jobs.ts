/** `warrant jobs [list|show <id>]`: the job history of a store. */
import type { Job, JobListFilter } from '../../index.js';
import { toJsonSafe } from '../../jobs/json-value.js';
import { formatTable } from '../format-table.js';
import { parseCommand, text } from '../parse.js';
import { createProgramRuntime, DEFAULT_STORE } from '../program-runtime.js';
import { UsageError } from '../usage-error.js';

/** Jobs listed when `--limit` is not given, and the largest `--limit` accepted. */
export const DEFAULT_LIST_LIMIT = 50;
export const MAX_LIST_LIMIT = 1000;

export const jobsHelp = `Usage: warrant jobs [list] [--status s] [--capability c] [--limit n] [--store s] [--json]
       warrant jobs show <id> [--store s] [--json]

Lists jobs, newest first, or shows one job with its steps and audit trail (events).
--limit: how many jobs to list, 0 to ${MAX_LIST_LIMIT} (default ${DEFAULT_LIST_LIMIT}).
--store: as for warrant run (default ${DEFAULT_STORE}).
Exit codes: 0 ok; 1 unknown job; 2 bad usage (a --limit above ${MAX_LIST_LIMIT} included) or a
store that cannot be opened.`;

/** The `--limit` option: an integer from 0 to MAX_LIST_LIMIT, else a usage error. */
function parseLimit(limit: string | undefined): number {
  if (limit === undefined) return DEFAULT_LIST_LIMIT;
  const value = /^\d{1,7}$/.test(limit) ? Number(limit) : Number.NaN;
  if (!(value <= MAX_LIST_LIMIT))
    throw new UsageError(
      `--limit must be an integer from 0 to ${MAX_LIST_LIMIT}, got ${JSON.stringify(limit.length > 20 ? `${limit.slice(0, 17)}...` : limit)}`,
    );
  return value;
}

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
  const limit = parseLimit(text(values, 'limit'));
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
    const filter: JobListFilter = { limit };
    const status = text(values, 'status');
    const capability = text(values, 'capability');
    if (status !== undefined) filter.status = status as JobListFilter['status'];
    if (capability !== undefined) filter.capability = capability;
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
