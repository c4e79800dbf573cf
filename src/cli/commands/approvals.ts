/**
 * `warrant approvals [list]` and `warrant approvals approve|reject <jobId> <stepId> --digest <d>`:
 * pending approval requests of a store, and deciding one as the caller of `--caller`
 * (docs/guide/approvals.md, "From the program"). The runtime runs with approvals on; `--approvers`
 * names the policy. `approve --input <file>` approves with the input of a JSON file instead of
 * the proposed one (docs/api.md, "Approve with edits").
 */
import type { ApprovalRequest, Job, PlanApprovalRequest } from '../../index.js';
import { answerText, CLI_ANSWER, jobAnswer, valueAnswer } from '../../json/answer.js';
import { closeMcpConnections } from '../../mcp/outbound.js';
import { callerOf, callerOptionHelp, osUserName } from '../caller-option.js';
import { exceedsJsonDepth, MAX_JSON_DEPTH } from '../../http/json-depth.js';
import { parseJson } from '../../json/parse-json.js';
import { formatTable } from '../format-table.js';
import { readInputFile } from '../input-file.js';
import { parseCommand, text } from '../parse.js';
import {
  approveCommand,
  createProgramRuntime,
  runtimeOptions,
  runtimeOptionsHelp,
  type RuntimeFlags,
} from '../program-runtime.js';
import { shownText } from '../terminal-text.js';
import { firstLine, UsageError } from '../usage-error.js';
import { writeErr, writeOut } from '../output.js';

export const approvalsHelp = `Usage: warrant approvals [list] [options] [--json]
       warrant approvals approve|reject <jobId> <stepId> --digest <d> [--comment <c>] [options]
       warrant approvals approve <jobId> <stepId> --digest <d> --input <file.json> [options]
       warrant approvals approve|reject <jobId> --plan --digest <planDigest> [options]

Lists the pending approval requests of the store (with --caller, only those the read policy
lets that caller read: of its tenant, submitted by it, or that it may decide; without, all of
them), or decides one as the caller of --caller (the approver; never the caller who submitted
the plan, nor one of another tenant). --digest is the request's inputDigest:
you approve exactly that input, or with --input the JSON input of a file instead (your
edit: checked against the capability's input contract and authorized again; refused, it
exits 1 with APPROVAL_INPUT_INVALID and decides nothing). A plan submitted with
--plan-approval waits for one plan request (step "(plan)" in the list): decide it with --plan
and its planDigest; its steps then run here, each authorized at its turn. An approved step
runs here, so give the same --module, --authorizer and --store as the run that stopped.
Approvals are on (--approvals is implied).
Exit codes: 0 listed, or decided and the job completed (or rejected as asked); 1 the decision
was refused (the line names the code) or the job failed; 2 bad usage; 3 the job stopped at the
next approval.

Options:
${runtimeOptionsHelp}
${callerOptionHelp}
                        (default { "id": "cli:<os user name>" })
  --digest <d>          the inputDigest of the request (approve, reject); with --plan, its
                        planDigest
  --plan                decide the job's plan request (no <stepId>)
  --comment <c>         a comment recorded with the decision
  --input <file>        approve: run the step with this JSON input instead (at most 10 MiB)
  --json                print the requests, or the job, as JSON on stdout
  -h, --help            show this help`;

function listLines(requests: readonly ApprovalRequest[]): string {
  if (requests.length === 0) return 'no pending approvals';
  const table = formatTable(
    ['job', 'step', 'capability', 'risk', 'requested by', 'expires', 'digest'],
    requests.map((request) =>
      request.kind === 'plan'
        ? [
            shownText(request.jobId),
            '(plan)',
            shownText(`${request.steps.length} step${request.steps.length === 1 ? '' : 's'}`),
            '-',
            shownText(request.caller?.id ?? '-'),
            request.expiresAt,
            request.planDigest,
          ]
        : [
            shownText(request.jobId),
            shownText(request.stepId),
            shownText(`${request.capability}@${request.capabilityVersion}`),
            request.risk,
            shownText(request.caller?.id ?? '-'),
            request.expiresAt,
            request.inputDigest,
          ],
    ),
  );
  // Each plan request with every step: what the approver approves (docs/api.md, "Plan warrants").
  const plans = requests.flatMap((request) =>
    request.kind === 'plan' ? [planLines(request)] : [],
  );
  return [table, ...plans].join('\n\n');
}

/** A plan request's steps: each with its preview, its input (references included) and bounds. */
function planLines(request: PlanApprovalRequest): string {
  const rows = request.steps.map((step) => [
    shownText(step.id),
    shownText(`${step.capability}@${step.capabilityVersion}`),
    step.outcome,
    shownText(step.input === undefined ? '-' : JSON.stringify(step.input), 200),
    shownText(step.bounds === undefined ? '-' : JSON.stringify(step.bounds), 200),
  ]);
  return `plan of job ${shownText(request.jobId)}: ${shownText(request.goal)}\n${formatTable(
    ['step', 'capability', 'preview', 'input', 'bounds'],
    rows,
  )}`;
}

/**
 * The JSON of `--input <file>`: a regular file of at most 10 MiB, nested at most as deep as an
 * HTTP body may be; the runtime then checks it as any approver's input.
 */
async function readEditedInput(file: string): Promise<{ value: unknown }> {
  const label = `--input ${file}`;
  const source = (await readInputFile(file, label)).toString('utf8');
  if (exceedsJsonDepth(source))
    throw new UsageError(`${label}: nested deeper than ${MAX_JSON_DEPTH} levels`);
  try {
    return { value: parseJson(source) };
  } catch (error) {
    throw new UsageError(`${label} is not valid JSON: ${firstLine(error)}`);
  }
}

/** The exit code of a decided job: 0 completed (or a rejection, as asked), 3 waiting, else 1. */
function decidedExit(job: Job, decision: 'approve' | 'reject'): number {
  if (job.status === 'awaiting_approval') return 3;
  if (decision === 'reject') return 0;
  return job.status === 'completed' ? 0 : 1;
}

export async function approvalsCommand(args: readonly string[]): Promise<number> {
  const { values, positionals } = parseCommand(args, {
    ...runtimeOptions,
    caller: { type: 'string' },
    digest: { type: 'string' },
    comment: { type: 'string' },
    input: { type: 'string' },
    plan: { type: 'boolean' },
    json: { type: 'boolean' },
  });
  if (values.help) {
    console.log(approvalsHelp);
    return 0;
  }
  const [action = 'list', jobId, stepId, extra] = positionals;
  if (!['list', 'approve', 'reject'].includes(action) || extra !== undefined)
    throw new UsageError(`unknown arguments: ${positionals.join(' ')}`);
  if (action === 'list' && jobId !== undefined)
    throw new UsageError(`unknown arguments: ${positionals.join(' ')}`);
  const digest = text(values, 'digest');
  const plan = values.plan === true;
  if (plan && (action === 'list' || stepId !== undefined))
    throw new UsageError(`warrant approvals ${action} <jobId> --plan --digest <planDigest>`);
  if (plan && (jobId === undefined || digest === undefined))
    throw new UsageError(`warrant approvals ${action} <jobId> --plan --digest <planDigest>`);
  if (
    !plan &&
    action !== 'list' &&
    (jobId === undefined || stepId === undefined || digest === undefined)
  )
    throw new UsageError(`warrant approvals ${action} <jobId> <stepId> --digest <d>`);
  const inputFile = text(values, 'input');
  if (inputFile !== undefined && action !== 'approve')
    throw new UsageError("--input is an approver's edit: only with warrant approvals approve");
  if (inputFile !== undefined && plan)
    throw new UsageError('--input edits the input of a step request: not with --plan');
  // Read before the runtime opens: a file that is not JSON is bad usage, nothing is decided.
  const edited = inputFile === undefined ? undefined : await readEditedInput(inputFile);
  const given = text(values, 'caller');
  const approver = callerOf(given, () => ({ id: `cli:${osUserName()}` }));
  const flags: RuntimeFlags = { ...(values as RuntimeFlags), approvals: true };
  const runtime = await createProgramRuntime(flags);
  try {
    if (action === 'list') {
      // The operator on the store reads every request; a named caller what the policy gives it.
      const requests = await runtime.listApprovals(given === undefined ? {} : { caller: approver });
      if (values.json) writeOut(`${answerText(valueAnswer(requests), 2)}\n`);
      else writeOut(`${listLines(requests)}\n`);
      return 0;
    }
    const decision = action as 'approve' | 'reject';
    const comment = text(values, 'comment');
    let job: Job;
    try {
      const commented = comment === undefined ? {} : { comment };
      job = await runtime.decideApproval(
        plan
          ? // The plan request (docs/api.md, "Plan warrants").
            {
              kind: 'plan',
              jobId: jobId as string,
              planDigest: digest as string,
              approver,
              decision,
              ...commented,
            }
          : {
              jobId: jobId as string,
              stepId: stepId as string,
              inputDigest: digest as string,
              approver,
              decision,
              ...commented,
              ...(edited === undefined ? {} : { input: edited.value }),
            },
      );
    } catch (error) {
      const code = (error as { code?: unknown } | null)?.code;
      if (typeof code !== 'string' || !code.startsWith('APPROVAL_')) throw error;
      writeErr(`warrant: ${code}: ${shownText(String((error as Error).message), 2000)}\n`);
      return 1;
    }
    writeErr(
      `job ${shownText(job.id)} ${job.status}${job.error === undefined ? '' : `: ${shownText(job.error, 2000)}`}\n`,
    );
    // Stopped at its next approval: the command that approves that one, with this run's flags.
    if (job.status === 'awaiting_approval') writeErr(approveCommand(job, flags));
    if (values.json) writeOut(`${answerText(jobAnswer(job, CLI_ANSWER), 2)}\n`);
    else writeOut(`${job.id}\n`);
    return decidedExit(job, decision);
  } finally {
    await closeMcpConnections();
    await runtime.close();
  }
}
