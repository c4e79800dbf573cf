/**
 * What the MCP face answers about jobs (docs/api.md, "new McpAdapter"): the `structuredContent`
 * of a call that has no result yet (awaiting approval, queued, executing), and the tool
 * `warrant_job_status` (`jobTools: true`, `warrant mcp --job-tools`): its listing, its arguments,
 * who may read a job, and its answer. Like the rest of the adapter it reads jobs through the
 * runtime only and decides nothing about them.
 */
import type { Tool } from '@modelcontextprotocol/server';
import { approveCommandLine } from '../approvals/approve-command.js';
import type { Job } from '../jobs/job.js';

/** The tool name of the job status tool. */
export const JOB_STATUS_TOOL = 'warrant_job_status';

/** The longest `waitMs` of `warrant_job_status`, as for `GET /api/jobs/:id` (docs/api.md). */
export const JOB_STATUS_WAIT_MAX_MS = 30_000;

/** The longest job id the tool looks up: ids are UUIDs; anything much longer is not one. */
const MAX_JOB_ID_CHARS = 200;

/** The `tools/list` entry of `warrant_job_status`: a fresh object on every call. */
export function jobStatusListing(): Tool {
  return {
    name: JOB_STATUS_TOOL,
    description:
      'The status, step statuses and result of a Warrant job (the jobId a tool call answered while awaiting approval or queued). waitMs: wait up to that many milliseconds for the job to settle (while it is queued, executing or awaiting approval).',
    inputSchema: {
      type: 'object',
      properties: {
        jobId: { type: 'string', description: 'The job id' },
        waitMs: {
          type: 'integer',
          minimum: 0,
          maximum: JOB_STATUS_WAIT_MAX_MS,
          description:
            'Wait up to this long (ms) while the job is queued, executing or awaiting approval',
        },
      },
      required: ['jobId'],
    },
    annotations: { readOnlyHint: true },
  };
}

/** The arguments of one `warrant_job_status` call, or the one-line reason they are refused. */
export function readJobStatusArgs(
  args: unknown,
): { jobId: string; waitMs: number | undefined } | { problem: string } {
  if (typeof args !== 'object' || args === null || Array.isArray(args))
    return { problem: 'Invalid arguments: expected an object with jobId' };
  const { jobId, waitMs } = args as { jobId?: unknown; waitMs?: unknown };
  if (typeof jobId !== 'string' || jobId === '' || jobId.length > MAX_JOB_ID_CHARS)
    return {
      problem: `Invalid arguments: jobId must be a string of 1 to ${MAX_JOB_ID_CHARS} characters`,
    };
  if (
    waitMs !== undefined &&
    (typeof waitMs !== 'number' ||
      !Number.isInteger(waitMs) ||
      waitMs < 0 ||
      waitMs > JOB_STATUS_WAIT_MAX_MS)
  )
    return {
      problem: `Invalid arguments: waitMs must be an integer from 0 to ${JOB_STATUS_WAIT_MAX_MS}`,
    };
  return { jobId, waitMs: waitMs as number | undefined };
}

/** The longest pause between two reads of a job awaiting approval while the tool waits. */
const APPROVAL_POLL_MS = 200;

/**
 * Waits up to `waitMs` for the job to settle: while it is queued or executing (the runtime's
 * `waitForJob`), and while it awaits approval (a decision may come from another process on the
 * store, so the job is read again, 10 ms at first, at most every APPROVAL_POLL_MS). Resolves when
 * it completed, failed or was cancelled, or when the time is up.
 */
export async function waitUntilSettled(
  runtime: {
    waitForJob(id: string, options: { timeoutMs: number }): Promise<Job | undefined>;
  },
  jobId: string,
  waitMs: number,
): Promise<void> {
  const deadline = Date.now() + waitMs;
  let pause = 10;
  for (;;) {
    const left = deadline - Date.now();
    if (left <= 0) return;
    const job = await runtime.waitForJob(jobId, { timeoutMs: left });
    if (job?.status !== 'awaiting_approval') return;
    const rest = deadline - Date.now();
    if (rest <= 0) return;
    await new Promise((resolve) => setTimeout(resolve, Math.min(pause, rest)));
    pause = Math.min(pause * 2, APPROVAL_POLL_MS);
  }
}

/**
 * What to do about a call awaiting approval: who decides it and how, and how to get its result
 * (`warrant_job_status` with jobTools; else the job's record: calling the tool again would run a
 * new job once this one is decided).
 */
export function approvalNextStep(
  content: Record<string, string>,
  jobTools: boolean,
  approveFlags: readonly string[] = [],
): string {
  const { jobId, stepId = 'call', inputDigest } = content;
  const command =
    inputDigest === undefined || jobId === undefined
      ? `warrant approvals approve ${jobId ?? ''} ${stepId}`
      : approveCommandLine(jobId, stepId, inputDigest, approveFlags);
  const decide = `Nothing ran yet: an approver decides it (${command}, POST /api/jobs/${jobId ?? ''}/steps/${stepId}/approval, or the console).`;
  const result = jobTools
    ? ` Then call ${JOB_STATUS_TOOL} with {"jobId":"${jobId ?? ''}","waitMs":${JOB_STATUS_WAIT_MAX_MS}} for its result.`
    : ` Its result is then in the job's record (warrant jobs show ${jobId ?? ''}).`;
  return `${decide}${result}`;
}

/** The step a job waits on: the one awaiting approval, else none. */
function waitingStep(job: Job): Job['steps'][number] | undefined {
  return job.steps.find((step) => step.status === 'awaiting_approval');
}

/**
 * The `structuredContent` of a call that has no result yet: `{ jobId, stepId?, status,
 * inputDigest? }` (the step awaiting approval and the digest its request carries).
 */
export function pendingContent(job: Job): Record<string, string> {
  const content: Record<string, string> = { jobId: job.id };
  const step = job.status === 'awaiting_approval' ? waitingStep(job) : undefined;
  if (step !== undefined) content.stepId = step.id;
  content.status = job.status;
  const digest = step?.decision?.inputDigest;
  if (typeof digest === 'string') content.inputDigest = digest;
  return content;
}

/**
 * What `warrant_job_status` answers about a readable job, in the encoding of the edges (`answer`
 * is `jobAnswer(job, REMOTE_ANSWER)`): id, status, each step's id, capability and status (and its
 * error), the result once completed, the error once failed.
 */
export function jobStatusContent(answer: unknown): Record<string, unknown> {
  const job = answer as {
    id: string;
    status: string;
    steps: { id: string; capability: string; status: string; error?: unknown }[];
    result?: unknown;
    error?: unknown;
  };
  const content: Record<string, unknown> = {
    jobId: job.id,
    status: job.status,
    steps: job.steps.map((step) => {
      const listed: Record<string, unknown> = {
        id: step.id,
        capability: step.capability,
        status: step.status,
      };
      if (step.error !== undefined) listed.error = step.error;
      return listed;
    }),
  };
  if (job.status === 'completed' && 'result' in job) content.result = job.result ?? null;
  if (job.error !== undefined) content.error = job.error;
  return content;
}
