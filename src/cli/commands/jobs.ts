/** `warrant jobs [list|show <id>|verify <id>|verify --all|export <id>|cancel <id>]`: the job history of a store. */
import { readFileSync } from 'node:fs';
import { ErrorCode } from '../../errors/error-codes.js';
import type {
  ExecutionCaller,
  Job,
  JobListFilter,
  JobVerification,
  OperatorRuntime,
  StoreVerification,
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
import { createProgramRuntime, DEFAULT_STORE, storeLabel, storeOf } from '../program-runtime.js';
import { shownText } from '../terminal-text.js';
import { firstLine, UsageError } from '../usage-error.js';
import { isKeyedWithoutKey } from '../../record/missing-key.js';
import { writeErr, writeOut } from '../output.js';

/** Jobs listed when `--limit` is not given, and the largest `--limit` accepted. */
export const DEFAULT_LIST_LIMIT = 50;
export const MAX_LIST_LIMIT = 1000;

/**
 * Longest goal, id, error or reason shown in full on a line (docs/guide/cli.md, "Terminal output").
 */
const MAX_TEXT = 2000;

/** A value from the record, on one line, its control characters escaped. */
function shown(value: string): string {
  return shownText(value, MAX_TEXT);
}

export const jobsHelp = `Usage: warrant jobs [list] [--status s[,s...]] [--capability c] [--limit n] [--store s] [--json]
       warrant jobs show <id> [--store s] [--json]
       warrant jobs verify <id> | --all [--since <seq>:<hash>] [--store s] [--json]
       warrant jobs export <id> [--signing-key <pem file>] [--store s]
       warrant jobs cancel <id> [--reason text] [--caller json] [--store s] [--json]

Lists jobs, newest first, or shows one job with its steps, their decisions and its audit trail
(events). verify checks a job's record: the event chain (SQLite, PostgreSQL; keyed with
WARRANT_AUDIT_KEY when set) and every input and result against its digest; --all also checks
the store's checkpoints (every sealed event present and unchanged) and prints the head
(head: <seq> <hash>): keep it elsewhere, and --since <seq>:<hash> reports a rollback of the whole
store. export prints one job's evidence bundle (JSON), signed with an Ed25519 key in PEM when
--signing-key names one; check it with warrant evidence verify. cancel cancels a job as the
caller of --caller (default { id: 'cli:<os user name>' }): a queued or awaiting job never runs, a
running step's signal is aborted by the process running it (within 1 s).
--status: one job status or several separated by commas (queued,executing). A queued or
executing job whose process is gone says what it waits for: a runtime with the capabilities
named (warrant serve takes up the jobs it can admit; docs/guide/stores.md, "Recovery").
--limit: how many jobs to list, 0 to ${MAX_LIST_LIMIT} (default ${DEFAULT_LIST_LIMIT}).
--store: as for warrant run (default: $WARRANT_STORE when set, else ${DEFAULT_STORE}).
Exit codes: 0 ok (verify: every job intact; --all counts the jobs a store migrated from schema
version 1 or 2 recorded before the event chain apart); 1 unknown job (verify: a job is not
intact, a job without a chain in a store that keeps chains included; cancel:
the caller may not cancel it); 2 bad usage (a --limit above ${MAX_LIST_LIMIT} included), a
store that cannot be opened, or verify of a keyed record without WARRANT_AUDIT_KEY.`;

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

/** How long `warrant jobs cancel` waits for a job running elsewhere to settle. */
const CANCEL_WAIT_MS = 10_000;

/** What a cancel did: the job's status after it, and whether the job had finished before. */
function cancelLine(job: Job, before: Job['status'] | undefined): string {
  const id = shown(job.id);
  if (job.status === 'cancelled' && before !== 'cancelled') return `job ${id}: cancelled`;
  if (job.status === 'executing' || job.status === 'queued')
    return `job ${id}: cancel recorded; still ${job.status} (the process running it aborts its step and records the job cancelled)`;
  return `job ${id}: already ${job.status}: nothing to cancel`;
}

function showJob(job: Job): string {
  const lines = [
    `job ${shown(job.id)}: ${job.status}${job.error === undefined ? '' : ` (${shown(job.error)})`}`,
    `goal: ${shown(job.goal)}`,
    `created ${job.createdAt}${job.completedAt === undefined ? '' : `, completed ${job.completedAt}`}`,
    '',
    formatTable(
      ['step', 'capability', 'status', 'error'],
      job.steps.map((step) => [
        shown(step.id),
        shown(step.capability),
        step.status,
        shown(step.error ?? ''),
      ]),
    ),
    '',
    ...valueLines(job),
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
    since: { type: 'string' },
    'signing-key': { type: 'string' },
    reason: { type: 'string' },
    caller: { type: 'string' },
  });
  if (values.help) {
    console.log(jobsHelp);
    return 0;
  }
  const [action = 'list', id, extra] = positionals;
  if (extra !== undefined || !['list', 'show', 'verify', 'export', 'cancel'].includes(action))
    throw new UsageError(`unknown arguments: ${positionals.join(' ')}`);
  if (action === 'verify' && (id === undefined) === (values.all !== true))
    throw new UsageError('warrant jobs verify: give a job id or --all (not both)');
  if ((action === 'show' || action === 'cancel') && id === undefined)
    throw new UsageError(`warrant jobs ${action} <id>: the job id is missing`);
  const caller =
    action === 'cancel'
      ? callerOf(text(values, 'caller'), () => ({ id: `cli:${osUserName()}` }))
      : undefined;
  if (action === 'export' && id === undefined)
    throw new UsageError('warrant jobs export <id>: the job id is missing');
  const since = text(values, 'since');
  if (since !== undefined && !(action === 'verify' && id === undefined))
    throw new UsageError('--since goes with warrant jobs verify --all');
  const signingKeyFile = text(values, 'signing-key');
  const signingKey = signingKeyFile === undefined ? undefined : readKey(signingKeyFile);
  const store = text(values, 'store');
  const limit = parseLimit(text(values, 'limit'));
  const runtime = await createProgramRuntime(store === undefined ? {} : { store });
  const storeName = storeLabel(storeOf(store));
  try {
    if (action === 'verify' && id === undefined)
      return await verifyAll(runtime, since, values.json === true);
    if (action === 'verify')
      return await verifyJob(runtime, id as string, values.json === true, storeName);
    if (action === 'export') {
      const bundle = await runtime
        .exportJob(id as string, signingKey === undefined ? {} : { signingKey })
        .catch((error: unknown) => {
          if ((error as { code?: unknown }).code !== ErrorCode.EVIDENCE_KEY_INVALID) throw error;
          throw new UsageError(`--signing-key: ${(error as Error).message}`);
        });
      if (bundle === undefined) {
        writeErr(`warrant jobs: no job ${JSON.stringify(id)} in ${storeName}\n`);
        return 1;
      }
      writeOut(`${JSON.stringify(bundle, null, 2)}\n`);
      return 0;
    }
    if (action === 'cancel') {
      const reason = text(values, 'reason');
      let job: Job | undefined;
      const before = await runtime.getJob(id as string);
      try {
        job = await runtime.cancelJob(id as string, {
          caller: caller as ExecutionCaller,
          ...(reason === undefined ? {} : { reason }),
        });
      } catch (error) {
        if ((error as { code?: unknown }).code !== ErrorCode.CANCEL_FORBIDDEN) throw error;
        writeErr(
          `warrant jobs: ${shown(firstLine(error))}; give --caller the submitter's caller, or one with "scopes":["warrant:cancel"] in the job's tenant\n`,
        );
        return 1;
      }
      if (job === undefined) {
        writeErr(`warrant jobs: no job ${JSON.stringify(id)} in ${storeName}\n`);
        return 1;
      }
      // A job another process runs is cancelled once its running step settles (within 1 s of
      // the recorded cancel): wait for that, bounded, so the line says what the cancel did.
      if (job.status === 'executing' || job.status === 'queued')
        job = (await runtime.waitForJob(job.id, { timeoutMs: CANCEL_WAIT_MS })) ?? job;
      writeOut(
        values.json
          ? `${answerText(jobAnswer(job, CLI_ANSWER), 2)}\n`
          : `${cancelLine(job, before?.status)}\n`,
      );
      return 0;
    }
    if (action === 'show') {
      const job = await runtime.getJob(id as string);
      if (job === undefined) {
        writeErr(`warrant jobs: no job ${JSON.stringify(id)} in ${storeName}\n`);
        return 1;
      }
      writeOut(
        values.json ? `${answerText(jobAnswer(job, CLI_ANSWER), 2)}\n` : `${showJob(job)}\n`,
      );
      return 0;
    }
    const filter: JobListFilter = { limit };
    const statuses = statusesOf(text(values, 'status'));
    const capability = text(values, 'capability');
    if (capability !== undefined) filter.capability = capability;
    const jobs = await listByStatus(runtime, filter, statuses);
    const waiting = await waitingOf(runtime, jobs);
    if (values.json) {
      const answers = jobListAnswer(jobs, CLI_ANSWER) as Record<string, unknown>[];
      const noted = answers.map((answer, index) => {
        const why = waiting.get((jobs[index] as Job).id);
        return why === undefined ? answer : { ...answer, waiting: why };
      });
      writeOut(`${answerText(noted, 2)}\n`);
      return 0;
    }
    const rows = jobs.map((job) => [
      shown(job.id),
      job.status,
      String(job.steps.length),
      job.createdAt,
      shown(job.goal),
      ...(waiting.size === 0 ? [] : [waiting.get(job.id) ?? '']),
    ]);
    const columns = ['id', 'status', 'steps', 'created', 'goal'];
    if (waiting.size > 0) columns.push('waiting');
    writeOut(`${formatTable(columns, rows)}\n`);
    return 0;
  } finally {
    await runtime.close();
  }
}

const STATUSES: readonly string[] = [
  'created',
  'queued',
  'executing',
  'awaiting_approval',
  'completed',
  'failed',
  'cancelled',
];

/** `--status a,b`: each a job status, or a usage error naming the ones there are. */
function statusesOf(value: string | undefined): JobListFilter['status'][] {
  if (value === undefined) return [];
  const statuses = value.split(',').map((status) => status.trim());
  for (const status of statuses)
    if (!STATUSES.includes(status))
      throw new UsageError(
        `--status: ${JSON.stringify(status)} is not a job status (${STATUSES.join(', ')}; several separated by commas)`,
      );
  return [...new Set(statuses)] as JobListFilter['status'][];
}

/** The jobs of any of `statuses` (all without), newest first, at most the filter's limit. */
async function listByStatus(
  runtime: OperatorRuntime,
  filter: JobListFilter,
  statuses: readonly JobListFilter['status'][],
): Promise<Job[]> {
  if (statuses.length <= 1)
    return runtime.listJobs(statuses.length === 0 ? filter : { ...filter, status: statuses[0] });
  const lists = await Promise.all(
    statuses.map((status) => runtime.listJobs({ ...filter, status })),
  );
  const jobs = lists.flat().sort((a, b) => b.createdAt.localeCompare(a.createdAt));
  return filter.limit === undefined ? jobs : jobs.slice(0, filter.limit);
}

/**
 * Why each listed job that is queued or executing waits (docs/guide/stores.md, "Recovery"):
 * its process is gone and no runtime that can admit it took it up.
 */
async function waitingOf(
  runtime: OperatorRuntime,
  jobs: readonly Job[],
): Promise<Map<string, string>> {
  const why = new Map<string, string>();
  if (!jobs.some((job) => job.status === 'queued' || job.status === 'executing')) return why;
  for (const { jobId, needs } of await runtime.waitingJobs())
    why.set(
      jobId,
      needs.length === 0
        ? 'waiting for a runtime to take it up (its process is gone)'
        : `waiting for a runtime with ${needs.map(shown).join(', ')}`,
    );
  return why;
}

/** A recorded value on one line: its JSON, control characters escaped, cut at MAX_TEXT. */
function shownValue(value: unknown): string {
  return shown(JSON.stringify(valueAnswer(value)) ?? String(value));
}

/**
 * Each step's input as submitted, the input as authorized when its references were resolved,
 * and its result: what `--json` shows, one line each.
 */
function valueLines(job: Job): string[] {
  const lines = job.steps.flatMap((step) => {
    const values = [
      ...(step.input === undefined ? [] : [`    input ${shownValue(step.input)}`]),
      ...(step.resolvedInput === undefined
        ? []
        : [`    resolved input ${shownValue(step.resolvedInput)}`]),
      ...('result' in step && step.result !== undefined
        ? [`    result ${shownValue(step.result)}`]
        : []),
    ];
    return values.length === 0 ? [] : [`  ${shown(step.id)}:`, ...values];
  });
  return lines.length === 0 ? [] : ['inputs and results:', ...lines, ''];
}

/** One line per step that reached authorization: its decision, reason and digests. */
function decisionLines(job: Job): string[] {
  const lines = job.steps.flatMap((step) => {
    const { decision } = step;
    if (decision === undefined) return [];
    const by = decision.authorizer === undefined ? '' : ` by ${shown(decision.authorizer)}`;
    const reason = decision.reason === undefined ? '' : ` (${shown(decision.reason)})`;
    const result = job.events.find(
      (event) => event.type === 'capability.completed' && event.data?.stepId === step.id,
    )?.data?.resultDigest;
    return [
      `  ${shown(step.id)}: ${decision.outcome}${reason}${by} at ${decision.decidedAt}, capability version ${decision.capabilityVersion}`,
      `    input ${decision.inputDigest}${typeof result === 'string' ? `, result ${result}` : ''}`,
    ];
  });
  const caller =
    job.caller === undefined ? [] : [`caller: ${JSON.stringify(valueAnswer(job.caller))}`];
  const listed = [...caller, ...(lines.length === 0 ? [] : ['decisions:', ...lines])];
  return listed.length === 0 ? [] : [...listed, ''];
}

function verificationLine(id: string, verification: JobVerification): string {
  if (verification.ok) {
    const unproven =
      verification.unproven === undefined
        ? ''
        : `; written before its events carried every field, it cannot prove: ${verification.unproven.join(', ')}`;
    return `job ${shown(id)}: intact (${verification.events} events${shown(unproven)})`;
  }
  const at = verification.eventIndex === undefined ? '' : `, event ${verification.eventIndex}`;
  const step = verification.stepId === undefined ? '' : `, step ${shown(verification.stepId)}`;
  return `job ${shown(id)}: NOT INTACT: ${shown(verification.reason)}${at}${step}`;
}

/** `warrant jobs verify <id>`: exit 0 when the job is intact, 1 otherwise (with why). */
async function verifyJob(
  runtime: OperatorRuntime,
  id: string,
  json: boolean,
  storeLabel: string,
): Promise<number> {
  const verification = await runtime.verifyJob(id);
  if (verification === undefined) {
    writeErr(`warrant jobs: no job ${JSON.stringify(id)} in ${storeLabel}\n`);
    return 1;
  }
  if (!verification.ok && isKeyedWithoutKey(verification.reason))
    throw missingAuditKey(`job ${shown(id)}`);
  writeOut(
    json
      ? `${JSON.stringify({ id, ...verification }, null, 2)}\n`
      : `${verificationLine(id, verification)}\n`,
  );
  return verification.ok ? 0 : 1;
}

/**
 * A keyed record verified without WARRANT_AUDIT_KEY: the key is missing, which says nothing of
 * tampering (docs/api.md, "runtime.verifyJob"), so a usage error (exit 2), not NOT INTACT.
 */
export function missingAuditKey(what: string): UsageError {
  return new UsageError(
    `${what} is keyed (hmac-sha256) and WARRANT_AUDIT_KEY is not set: set it to the store's audit key to verify (a missing key, not a sign of tampering)`,
  );
}

/** A key file's PEM text; a file that cannot be read is a usage error. */
export function readKey(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    throw new UsageError(
      `cannot read the key file ${JSON.stringify(file)}: ${(error as NodeJS.ErrnoException).code ?? 'unreadable'}`,
    );
  }
}

function problemLine(problem: StoreVerification['problems'][number]): string {
  const at = problem.eventIndex === undefined ? '' : `, event ${problem.eventIndex}`;
  const step = problem.stepId === undefined ? '' : `, step ${problem.stepId}`;
  const who = problem.kind === 'record' ? `job ${problem.jobId ?? '?'}` : 'store';
  return `${who}: NOT INTACT: ${problem.reason}${at}${step}`;
}

/**
 * `warrant jobs verify --all [--since <seq>:<hash>]`: the whole store (runtime.verifyStore):
 * each job, every checkpoint and sealed event; prints the head. Exit 0 when nothing is wrong.
 */
async function verifyAll(
  runtime: OperatorRuntime,
  since: string | undefined,
  json: boolean,
): Promise<number> {
  let verification: StoreVerification;
  try {
    verification = await runtime.verifyStore(since === undefined ? {} : { since });
  } catch (error) {
    if ((error as { code?: unknown }).code === ErrorCode.STORE_HEAD_INVALID)
      throw new UsageError(
        `--since ${(error as Error).message.replace(/^A kept head/, 'the head')}`,
      );
    throw error;
  }
  const { problems } = verification;
  if (problems.some((problem) => isKeyedWithoutKey(problem.reason)))
    throw missingAuditKey('the store');
  const brokenJobs = new Set(
    problems
      .filter((problem) => problem.kind === 'record' || problem.kind === 'sealed')
      .map((problem) => problem.jobId),
  );
  // Jobs recorded before the event chain, as the store's chain origin sealed them: neither
  // intact nor broken (docs/api.md, "runtime.verifyStore").
  const intact = verification.jobs - brokenJobs.size - verification.unchained;
  const head =
    verification.head === undefined
      ? 'head: none (nothing sealed yet)'
      : `head: ${verification.head.seq} ${verification.head.hash}`;
  if (json) {
    const broken = [...brokenJobs].map((jobId) => {
      const first = problems.find((problem) => problem.jobId === jobId) as (typeof problems)[0];
      return {
        id: jobId,
        ok: false,
        reason: first.reason,
        ...(first.eventIndex === undefined ? {} : { eventIndex: first.eventIndex }),
        ...(first.stepId === undefined ? {} : { stepId: first.stepId }),
      };
    });
    const answer = {
      jobs: verification.jobs,
      intact,
      broken,
      ...(verification.head === undefined ? {} : { head: verification.head }),
      checkpoints: verification.checkpoints,
      sealedEvents: verification.sealedEvents,
      unsealed: verification.unsealed,
      unchained: verification.unchained,
      problems,
    };
    writeOut(`${JSON.stringify(answer, null, 2)}\n`);
  } else {
    for (const problem of problems) writeOut(`${problemLine(problem)}\n`);
    const unchained =
      verification.unchained === 0
        ? ''
        : `, ${verification.unchained} recorded before the event chain (schema version 1 or 2): nothing to check them with`;
    writeOut(
      `${verification.jobs} jobs verified: ${intact} intact, ${brokenJobs.size} not${unchained}\n`,
    );
    const pending =
      verification.unsealed === 0 ? '' : `, ${verification.unsealed} jobs not yet sealed`;
    writeOut(
      `${verification.checkpoints} checkpoints sealing ${verification.sealedEvents} events${pending}\n${head}\n`,
    );
  }
  return problems.length === 0 ? 0 : 1;
}
