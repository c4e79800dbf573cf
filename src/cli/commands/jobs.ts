/** `warrant jobs [list|show <id>|verify <id>|verify --all|cancel <id>]`: the job history of a store. */
import { ErrorCode } from '../../errors/error-codes.js';
import type {
  ExecutionCaller,
  Job,
  JobListFilter,
  JobVerification,
  OperatorRuntime,
} from '../../index.js';
import { callerOf, osUserName } from '../caller-option.js';
import {
  answerText,
  CLI_ANSWER,
  jobAnswer,
  jobListAnswer,
  valueAnswer,
} from '../../json/answer.js';
import { formatTable } from '../format-table.js';
import { parseCommand, text } from '../parse.js';
import { createProgramRuntime, DEFAULT_STORE } from '../program-runtime.js';
import { firstLine, UsageError } from '../usage-error.js';

/** Jobs listed when `--limit` is not given, and the largest `--limit` accepted. */
export const DEFAULT_LIST_LIMIT = 50;
export const MAX_LIST_LIMIT = 1000;

export const jobsHelp = `Usage: warrant jobs [list] [--status s] [--capability c] [--limit n] [--store s] [--json]
       warrant jobs show <id> [--store s] [--json]
       warrant jobs verify <id> | --all [--store s] [--json]
       warrant jobs cancel <id> [--reason text] [--caller json] [--store s] [--json]

Lists jobs, newest first, or shows one job with its steps, their decisions and its audit trail
(events). verify checks a job's record: the event chain (SQLite, PostgreSQL; keyed with
WARRANT_AUDIT_KEY when set) and every input and result against its digest. cancel cancels a
job as the caller of --caller (default { id: 'cli:<os user name>' }): a queued or awaiting job
never runs, a running step's signal is aborted by the process running it (within 1 s).
--limit: how many jobs to list, 0 to ${MAX_LIST_LIMIT} (default ${DEFAULT_LIST_LIMIT}).
--store: as for warrant run (default ${DEFAULT_STORE}).
Exit codes: 0 ok (verify: every job intact); 1 unknown job (verify: a job is not intact; cancel:
the caller may not cancel it); 2 bad usage (a --limit above ${MAX_LIST_LIMIT} included) or a
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
    ...decisionLines(job),
    'events:',
    ...job.events.map((event) => {
      const data = event.data === undefined ? '' : ` ${JSON.stringify(valueAnswer(event.data))}`;
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
    all: { type: 'boolean' },
    reason: { type: 'string' },
    caller: { type: 'string' },
  });
  if (values.help) {
    console.log(jobsHelp);
    return 0;
  }
  const [action = 'list', id, extra] = positionals;
  if (extra !== undefined || !['list', 'show', 'verify', 'cancel'].includes(action))
    throw new UsageError(`unknown arguments: ${positionals.join(' ')}`);
  if (action === 'verify' && (id === undefined) === (values.all !== true))
    throw new UsageError('warrant jobs verify: give a job id or --all (not both)');
  if ((action === 'show' || action === 'cancel') && id === undefined)
    throw new UsageError(`warrant jobs ${action} <id>: the job id is missing`);
  const caller =
    action === 'cancel'
      ? callerOf(text(values, 'caller'), () => ({ id: `cli:${osUserName()}` }))
      : undefined;
  const store = text(values, 'store');
  const limit = parseLimit(text(values, 'limit'));
  const runtime = await createProgramRuntime(store === undefined ? {} : { store });
  try {
    if (action === 'verify')
      return await verifyJobs(runtime, id, values.json === true, store ?? DEFAULT_STORE);
    if (action === 'cancel') {
      const reason = text(values, 'reason');
      let job: Job | undefined;
      try {
        job = await runtime.cancelJob(id as string, {
          caller: caller as ExecutionCaller,
          ...(reason === undefined ? {} : { reason }),
        });
      } catch (error) {
        if ((error as { code?: unknown }).code !== ErrorCode.CANCEL_FORBIDDEN) throw error;
        process.stderr.write(`warrant jobs: ${firstLine(error)}\n`);
        return 1;
      }
      if (job === undefined) {
        process.stderr.write(
          `warrant jobs: no job ${JSON.stringify(id)} in ${store ?? DEFAULT_STORE}\n`,
        );
        return 1;
      }
      process.stdout.write(
        values.json
          ? `${answerText(jobAnswer(job, CLI_ANSWER), 2)}\n`
          : `job ${job.id}: ${job.status}\n`,
      );
      return 0;
    }
    if (action === 'show') {
      const job = await runtime.getJob(id as string);
      if (job === undefined) {
        process.stderr.write(
          `warrant jobs: no job ${JSON.stringify(id)} in ${store ?? DEFAULT_STORE}\n`,
        );
        return 1;
      }
      process.stdout.write(
        values.json ? `${answerText(jobAnswer(job, CLI_ANSWER), 2)}\n` : `${showJob(job)}\n`,
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
      process.stdout.write(`${answerText(jobListAnswer(jobs, CLI_ANSWER), 2)}\n`);
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

/** One line per step that reached authorization: its decision, reason and digests. */
function decisionLines(job: Job): string[] {
  const lines = job.steps.flatMap((step) => {
    const { decision } = step;
    if (decision === undefined) return [];
    const by = decision.authorizer === undefined ? '' : ` by ${decision.authorizer}`;
    const reason = decision.reason === undefined ? '' : ` (${decision.reason})`;
    const result = job.events.find(
      (event) => event.type === 'capability.completed' && event.data?.stepId === step.id,
    )?.data?.resultDigest;
    return [
      `  ${step.id}: ${decision.outcome}${reason}${by} at ${decision.decidedAt}, capability version ${decision.capabilityVersion}`,
      `    input ${decision.inputDigest}${typeof result === 'string' ? `, result ${result}` : ''}`,
    ];
  });
  const caller =
    job.caller === undefined ? [] : [`caller: ${JSON.stringify(valueAnswer(job.caller))}`];
  const shown = [...caller, ...(lines.length === 0 ? [] : ['decisions:', ...lines])];
  return shown.length === 0 ? [] : [...shown, ''];
}

function verificationLine(id: string, verification: JobVerification): string {
  if (verification.ok) return `job ${id}: intact (${verification.events} events)`;
  const at = verification.eventIndex === undefined ? '' : `, event ${verification.eventIndex}`;
  const step = verification.stepId === undefined ? '' : `, step ${verification.stepId}`;
  return `job ${id}: NOT INTACT: ${verification.reason}${at}${step}`;
}

/**
 * `warrant jobs verify <id>` or `--all`: exit 0 when every job checked is intact, 1 otherwise
 * (each job that is not is named, with why). `--all` reads every job of the store.
 */
async function verifyJobs(
  runtime: OperatorRuntime,
  id: string | undefined,
  json: boolean,
  storeLabel: string,
): Promise<number> {
  const ids = id === undefined ? (await runtime.listJobs()).map((job) => job.id) : [id];
  const results: { id: string; verification: JobVerification }[] = [];
  for (const jobId of ids) {
    const verification = await runtime.verifyJob(jobId);
    if (verification === undefined) {
      process.stderr.write(`warrant jobs: no job ${JSON.stringify(jobId)} in ${storeLabel}\n`);
      return 1;
    }
    results.push({ id: jobId, verification });
  }
  const broken = results.filter((result) => !result.verification.ok);
  if (json) {
    const answer =
      id === undefined
        ? {
            jobs: results.length,
            intact: results.length - broken.length,
            broken: broken.map((result) => ({ id: result.id, ...result.verification })),
          }
        : { id, ...(results[0] as { verification: JobVerification }).verification };
    process.stdout.write(`${JSON.stringify(answer, null, 2)}\n`);
  } else if (id !== undefined) {
    process.stdout.write(
      `${verificationLine(id, (results[0] as { verification: JobVerification }).verification)}\n`,
    );
  } else {
    for (const result of broken)
      process.stdout.write(`${verificationLine(result.id, result.verification)}\n`);
    process.stdout.write(
      `${results.length} jobs verified: ${results.length - broken.length} intact, ${broken.length} not\n`,
    );
  }
  return broken.length === 0 ? 0 : 1;
}
