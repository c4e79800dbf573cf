/** `warrant run <plan.json>`: admits and executes a plan, with progress and a summary. */
import {
  isPlanAdmissionError,
  type ExecutionCaller,
  type ExecutionPlan,
  type Job,
  type PlanAdmissionError,
  type PlanPreview,
  type RuntimeEvent,
} from '../../index.js';
import {
  answerText,
  CLI_ANSWER,
  jobAnswer,
  refusalAnswer,
  valueAnswer,
} from '../../json/answer.js';
import { closeMcpConnections } from '../../mcp/outbound.js';
import { callerOf, callerOptionHelp, osUserName } from '../caller-option.js';
import { parseCommand, text as optionText } from '../parse.js';
import {
  approveCommand,
  createProgramRuntime,
  runtimeOptions,
  runtimeOptionsHelp,
  type RuntimeFlags,
} from '../program-runtime.js';
import { readInputFile } from '../input-file.js';
import { printable, RunProgress } from '../run-progress.js';
import { summaryTable } from '../run-summary.js';
import { waitingFor } from '../unsettled.js';
import { parseJson } from '../../json/parse-json.js';
import { firstLine, UsageError } from '../usage-error.js';
import { writeErr, writeOut } from '../output.js';

/** Longest admission issue or job error shown on stderr (issue texts are bounded to 500). */
const MAX_SHOWN_ERROR_CHARS = 500;

export const runHelp = `Usage: warrant run <plan.json> [options]

Admits and executes an ExecutionPlan. Progress goes to stderr: the job id first, then each
step as it starts ("[3/200] running fs.read (read-3)"; on a terminal one live line with the
elapsed time, otherwise a line per step) and each step denied, failed or awaiting approval; a
summary table follows (for more than 20 steps: the first and last 5, the steps that did not
complete, and a count per status). Stdout gets the job id. The plan, --module and --authorizer files must be regular files of at most
10 MiB. Exit codes: 0 job completed; 1 job failed, or the job never settled (an authorizer or
a capability whose promise never settles: the line names the step); 2 plan refused at
admission, or bad usage (options, files, modules, a store that cannot be opened); 3 the job
awaits approval (--approvals): the command that approves it is printed; 130 interrupted:
Ctrl-C cancels the job (its running step's signal aborts, the job is recorded cancelled), a
second Ctrl-C exits at once.

The authorizer sees the caller of --caller, by default { id: 'cli:<os user name>' }.

Options:
${runtimeOptionsHelp}
${callerOptionHelp}
                        (default { "id": "cli:<os user name>" })
  --json                print the job as JSON on stdout; a plan refused at admission
                        prints { "error", "code", "issues" } (as over HTTP) instead
  --plan-approval       one approval for the whole plan (implies --approvals): every step
                        is previewed first; a step previewed deny fails the job
                        (PLAN_DENIED), otherwise the plan waits for one plan request
                        (exit 3, the command that approves it is printed) before any step
                        runs; each step is still authorized at its turn
  --dry-run             run nothing, record nothing (memory store): print each step's
                        decision, a step waiting on earlier results as unknown (with
                        --json: { "steps": [...] } on stdout); exit 0 when no step would be
                        refused, 1 when one would (denied, invalid, error, input_rejected)
  -h, --help            show this help`;

/** Where the job is, from its events: to name what never settled when the event loop drains. */
class JobPosition {
  #jobId: string | undefined;
  #completed = 0;
  #running: string | undefined;
  readonly #plan: ExecutionPlan;

  constructor(plan: ExecutionPlan) {
    this.#plan = plan;
  }

  observe(event: RuntimeEvent): void {
    this.#jobId ??= event.jobId;
    if (event.type === 'capability.started') this.#running = event.stepId;
    if (event.type === 'capability.completed') {
      this.#running = undefined;
      this.#completed += 1;
    }
  }

  describe(): string {
    if (this.#jobId === undefined) return 'the job never settled: the store never recorded it';
    const step = this.#plan.steps[this.#completed];
    const where =
      step === undefined
        ? 'its last record was never written'
        : `step ${JSON.stringify(step.id)} (capability ${JSON.stringify(step.capability)}) ${
            this.#running === undefined ? 'is still waiting for the authorizer' : 'is still running'
          }`;
    return `the job never settled: ${where} (job ${this.#jobId})`;
  }
}

/** The step ids of an admitted plan, in order (admission checked that they are strings). */
function stepIdsOf(plan: ExecutionPlan): string[] {
  const steps: unknown = plan.steps;
  return Array.isArray(steps)
    ? steps.map((step: unknown) => {
        const id = (step as { id?: unknown } | null)?.id;
        return typeof id === 'string' ? id : '';
      })
    : [];
}

/**
 * An admission refusal as `--json` prints it on stdout: `{ error, code, issues }`, the shape of the
 * HTTP answer to a refused plan plus the error's code (docs/guide/cli.md, "Progress of `warrant
 * run`").
 */
export function admissionJson(error: PlanAdmissionError): string {
  return answerText(refusalAnswer(error, CLI_ANSWER), 2);
}

/**
 * After a step the default policy denied (no --authorizer, --policy or --approvals), what the
 * user can do about it: the denial's own reason does not say (docs/guide/cli.md, "Options of the
 * commands that run plans").
 */
function defaultDenialHint(job: Job, flags: RuntimeFlags): string {
  if (flags.authorizer !== undefined || flags.policy !== undefined || flags.approvals === true)
    return '';
  // Without those the default policy decides: every denial not over a limit is its own.
  const denied = job.steps.find(
    (step) => step.decision?.outcome === 'deny' && step.decision.limit === undefined,
  );
  if (denied === undefined) return '';
  return `hint: the default policy denies writes and destructive work (step ${printable(denied.id)}): add --approvals to ask a person to approve each one (docs/guide/approvals.md), or --policy <file.cedar> to allow what your policies permit (docs/guide/policies.md)\n`;
}

/** Outcomes of a preview that mean the plan would not run through. */
const REFUSED = new Set(['deny', 'invalid', 'error', 'input_rejected']);

/**
 * `--dry-run`: the plan previewed (docs/api.md, "runtime.previewPlan") on a memory store, so
 * nothing is recorded anywhere; one line per step on stderr, the preview as JSON with --json.
 */
async function dryRun(
  plan: ExecutionPlan,
  caller: ExecutionCaller,
  flags: RuntimeFlags,
  json: unknown,
): Promise<number> {
  const runtime = await createProgramRuntime({ ...flags, store: 'memory' });
  try {
    let preview: PlanPreview;
    try {
      waitingFor('the preview never settled (an authorizer whose promise never settles)');
      preview = await runtime.previewPlan(plan, { caller });
    } catch (error) {
      if (!isPlanAdmissionError(error)) throw error;
      writeErr(`Plan refused at admission (${error.code}):\n`);
      for (const issue of error.issues)
        writeErr(`  ${issue.code}: ${printable(issue.message, MAX_SHOWN_ERROR_CHARS)}\n`);
      if (json === true) writeOut(`${admissionJson(error)}\n`);
      return 2;
    }
    for (const step of preview.steps) {
      const parts = [
        `${printable(step.id, 200)} ${printable(step.capability, 200)}: ${step.outcome}`,
      ];
      if (step.reason !== undefined) parts.push(printable(step.reason, MAX_SHOWN_ERROR_CHARS));
      if (step.policies !== undefined)
        parts.push(`policies: ${step.policies.length === 0 ? 'none' : step.policies.join(', ')}`);
      if (step.waitsFor !== undefined) parts.push(`waits for: ${step.waitsFor.join(', ')}`);
      writeErr(`${parts.join(' | ')}\n`);
    }
    if (json === true) writeOut(`${answerText(valueAnswer(preview), 2)}\n`);
    return preview.steps.some((step) => REFUSED.has(step.outcome)) ? 1 : 0;
  } finally {
    await closeMcpConnections();
    await runtime.close();
  }
}

export async function runCommand(args: readonly string[]): Promise<number> {
  const { values, positionals } = parseCommand(args, {
    ...runtimeOptions,
    caller: { type: 'string' },
    json: { type: 'boolean' },
    'dry-run': { type: 'boolean' },
    'plan-approval': { type: 'boolean' },
  });
  if (values.help) {
    console.log(runHelp);
    return 0;
  }
  if (positionals.length !== 1)
    throw new UsageError('expected exactly one plan file: warrant run <plan.json>');
  const caller = callerOf(optionText(values, 'caller'), () => ({ id: `cli:${osUserName()}` }));
  const file = positionals[0] as string;
  const text = (await readInputFile(file, `plan file ${file}`)).toString('utf8');
  let plan: ExecutionPlan;
  try {
    plan = parseJson(text) as ExecutionPlan;
  } catch (error) {
    throw new UsageError(`${file} is not valid JSON: ${firstLine(error)}`);
  }
  if (values['dry-run'] === true) return dryRun(plan, caller, values as RuntimeFlags, values.json);
  // A plan warrant needs approvals (docs/api.md, "Plan warrants"): the flag turns them on.
  const planApproval = values['plan-approval'] === true;
  const flags: RuntimeFlags = planApproval
    ? { ...(values as RuntimeFlags), approvals: true }
    : (values as RuntimeFlags);
  const runtime = await createProgramRuntime(flags);
  const position = new JobPosition(plan);
  const progress = new RunProgress({ stream: process.stderr, stepIds: stepIdsOf(plan) });
  // Ctrl-C cancels the job (docs/guide/cli.md, "Exit codes"): its running step's signal aborts, the
  // job is recorded cancelled and the command exits 130; a second Ctrl-C exits at once.
  let jobId: string | undefined;
  let interrupted = false;
  const cancel = (): void => {
    if (jobId === undefined) return;
    runtime.cancelJob(jobId, { caller, reason: 'interrupted (Ctrl-C)' }).catch((error: unknown) => {
      writeErr(`warrant: could not cancel job ${jobId}: ${firstLine(error)}\n`);
    });
  };
  const onInterrupt = (): void => {
    if (interrupted) process.exit(130);
    interrupted = true;
    writeErr('\nwarrant: cancelling the job (Ctrl-C again to exit at once)\n');
    cancel();
  };
  process.on('SIGINT', onInterrupt);
  runtime.subscribe('*', (event) => {
    if (jobId === undefined) {
      jobId = event.jobId;
      if (interrupted) cancel();
    }
    position.observe(event);
    progress.observe(event);
  });
  try {
    let job: Job;
    try {
      waitingFor(() => {
        // Asked only when the event loop drains with the job unsettled: the live line goes first.
        progress.finish();
        return position.describe();
      });
      job = await runtime.executePlan(
        plan,
        planApproval ? { caller, approval: 'plan' } : { caller },
      );
    } catch (error) {
      if (!isPlanAdmissionError(error)) throw error;
      writeErr(`Plan refused at admission (${error.code}):\n`);
      for (const issue of error.issues)
        writeErr(`  ${issue.code}: ${printable(issue.message, MAX_SHOWN_ERROR_CHARS)}\n`);
      if (values.json) writeOut(`${admissionJson(error)}\n`);
      return 2;
    } finally {
      progress.finish();
    }
    writeErr(`\n${summaryTable(job, progress.durations)}\n`);
    writeErr(
      `\njob ${job.id} ${job.status}${job.error === undefined ? '' : `: ${printable(job.error, MAX_SHOWN_ERROR_CHARS)}`}\n`,
    );
    if (job.status === 'awaiting_approval') writeErr(approveCommand(job, flags));
    writeErr(defaultDenialHint(job, flags));
    if (values.json) writeOut(`${answerText(jobAnswer(job, CLI_ANSWER), 2)}\n`);
    else writeOut(`${job.id}\n`);
    if (job.status === 'awaiting_approval') return 3;
    if (interrupted) return 130;
    return job.status === 'completed' ? 0 : 1;
  } finally {
    process.off('SIGINT', onInterrupt);
    await closeMcpConnections();
    await runtime.close();
  }
}
