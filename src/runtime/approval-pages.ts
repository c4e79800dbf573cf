/**
 * Pending approval requests in pages and counts (docs/api.md, "Reading and tenants"): the jobs
 * awaiting approval are read from the store in batches, filtered by what the caller may read,
 * and their requests taken from the approval desk.
 */
import { requestStepId, type ApprovalRequest } from '../approvals/approval-request.js';
import type { ExecutionCaller } from '../callers/execution-caller.js';
import { ErrorCode } from '../errors/error-codes.js';
import { createError } from '../errors/warrant-error.js';
import type { Job } from '../jobs/job.js';
import type { AwaitingJob, JobStore } from '../jobs/job-store.js';
import { hasAwaitingIndex } from '../jobs/store-parts.js';
import type { ApprovalDesk, ApprovalHost } from './approval-desk.js';
import { checkApprovalFilter } from './list-filters.js';

/** Whether a caller may read a job (the runtime's read rule). */
export type Readable = (caller: ExecutionCaller, job: Job) => Promise<boolean>;

/** Filter of `runtime.listApprovals()` (docs/api.md, "Approvals"). */
export interface ApprovalListFilter {
  jobId?: string;
  /** Only the requests whose jobs this caller may read (docs/api.md, "Reading and tenants"). */
  caller?: ExecutionCaller;
  /** At most this many, oldest request first, after `cursor`. */
  limit?: number;
  /** Where the previous page ended: its `nextCursor`. */
  cursor?: string;
}

/** One page of `runtime.approvalPage()`. */
export interface ApprovalPage {
  readonly requests: ApprovalRequest[];
  /** The cursor of the next page; absent when no request can follow. */
  readonly nextCursor?: string;
}

/** Filter of `runtime.countApprovals()`. */
export interface ApprovalCountFilter {
  jobId?: string;
  caller?: ExecutionCaller;
}

/** The most jobs awaiting approval read from the store at once, for a page or a count. */
const AWAITING_BATCH_MAX = 1000;

/** Where to read awaiting jobs from: after a position, at most `limit`. */
type AwaitingSource = (after: string | undefined, limit: number) => Promise<readonly AwaitingJob[]>;

/** A cursor's key `[position, jobId, stepId]`, or undefined when it is not one this runtime wrote. */
function cursorKey(cursor: string): [string, string, string] | undefined {
  try {
    const key: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    return Array.isArray(key) && key.length === 3 && key.every((part) => typeof part === 'string')
      ? (key as [string, string, string])
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A page of pending approval requests: see `runtime.approvalPage`.
 * @throws TypeError (JOB_FILTER_INVALID) for a malformed filter or a cursor this runtime did
 * not write.
 */
export async function approvalPage(
  filter: ApprovalListFilter,
  desk: ApprovalDesk | undefined,
  hostOf: () => Promise<ApprovalHost>,
  mayReadJob: Readable,
): Promise<ApprovalPage> {
  const { jobId, caller, limit, cursor } = checkApprovalFilter(filter);
  const after = cursor === undefined ? undefined : cursorKey(cursor);
  if (cursor !== undefined && after === undefined)
    throw createError(
      TypeError,
      ErrorCode.JOB_FILTER_INVALID,
      'listApprovals() filter.cursor is not a cursor of this list',
    );
  if (desk === undefined || limit === 0) return { requests: [] };
  const host = await hostOf();
  if (limit === undefined && after === undefined) {
    const requests = await desk.list(host, jobId);
    if (caller === undefined) return { requests };
    const readable = new Map<string, boolean>();
    const kept: ApprovalRequest[] = [];
    for (const request of requests) {
      let may = readable.get(request.jobId);
      if (may === undefined) {
        const job = await host.deps.store.get(request.jobId);
        may = job !== undefined && (await mayReadJob(caller, job));
        readable.set(request.jobId, may);
      }
      if (may) kept.push(request);
    }
    return { requests: kept };
  }
  const wanted = limit ?? Infinity;
  const source = awaitingSource(host.deps.store, jobId);
  const requests: ApprovalRequest[] = [];
  let lastPosition: string | undefined;
  let more = false;
  const take = (found: readonly ApprovalRequest[], position: (jobId: string) => string) => {
    for (const request of found) {
      if (requests.length >= wanted) return (more = true);
      requests.push(request);
      lastPosition = position(request.jobId);
    }
    return false;
  };
  let position = after?.[0];
  if (after !== undefined) {
    // The rest of the job the previous page ended in (its later steps), then the jobs after it.
    const [at, resumeId, stepId] = after;
    const job = await host.deps.store.get(resumeId);
    if (
      job?.status === 'awaiting_approval' &&
      (caller === undefined || (await mayReadJob(caller, job)))
    ) {
      const from = job.steps.findIndex((step) => step.id === stepId);
      const rest = (await desk.requestsOf(host, [job])).filter(
        (request) => job.steps.findIndex((step) => step.id === requestStepId(request)) > from,
      );
      take(rest, () => at);
    }
  }
  let batch = Math.min(
    Math.max(wanted === Infinity ? AWAITING_BATCH_MAX : wanted + 1, 1),
    AWAITING_BATCH_MAX,
  );
  while (!more) {
    const page = await source(position, batch);
    const readable: Job[] = [];
    const positions = new Map<string, string>();
    for (const entry of page) {
      if (caller !== undefined && !(await mayReadJob(caller, entry.job))) continue;
      readable.push(entry.job);
      positions.set(entry.job.id, entry.position);
    }
    if (take(await desk.requestsOf(host, readable), (id) => positions.get(id) as string)) break;
    if (page.length < batch) break;
    position = page[page.length - 1]?.position;
    // A full page and more jobs in the store: a next page may hold requests (or be empty).
    if (requests.length >= wanted) {
      more = true;
      break;
    }
    batch = Math.min(batch * 4, AWAITING_BATCH_MAX);
  }
  const last = requests[requests.length - 1];
  if (!more || last === undefined || lastPosition === undefined) return { requests };
  const nextCursor = Buffer.from(
    // A plan request's place is the step that holds it (docs/api.md, "Plan warrants").
    JSON.stringify([lastPosition, last.jobId, requestStepId(last)]),
    'utf8',
  ).toString('base64url');
  return { requests, nextCursor };
}

/**
 * How many pending approval requests the filter matches: see `runtime.countApprovals`.
 * @throws TypeError (JOB_FILTER_INVALID) for a malformed filter.
 */
export async function countApprovals(
  filter: ApprovalCountFilter,
  desk: ApprovalDesk | undefined,
  hostOf: () => Promise<ApprovalHost>,
  mayReadJob: Readable,
): Promise<number> {
  const { jobId, caller } = checkApprovalFilter(filter);
  if (desk === undefined) return 0;
  const host = await hostOf();
  const source = awaitingSource(host.deps.store, jobId);
  let count = 0;
  let position: string | undefined;
  for (;;) {
    const page = await source(position, AWAITING_BATCH_MAX);
    const readable: Job[] = [];
    for (const entry of page)
      if (caller === undefined || (await mayReadJob(caller, entry.job))) readable.push(entry.job);
    count += (await desk.requestsOf(host, readable)).length;
    if (page.length < AWAITING_BATCH_MAX) return count;
    position = page[page.length - 1]?.position;
  }
}

/**
 * The jobs awaiting approval to page through: one job (`jobId`), or the store's `listAwaiting`;
 * a store without it is read whole, oldest first, positioned by job id.
 */
function awaitingSource(store: JobStore, jobId: string | undefined): AwaitingSource {
  if (jobId !== undefined)
    return async (after) => {
      if (after !== undefined) return [];
      const job = await store.get(jobId);
      return job?.status === 'awaiting_approval' ? [{ job, position: '' }] : [];
    };
  if (hasAwaitingIndex(store)) return async (after, limit) => store.listAwaiting(after, limit);
  return async (after, limit) => {
    const all = (await store.list({ status: 'awaiting_approval' })).reverse();
    const start = after === undefined ? 0 : all.findIndex((job) => job.id === after) + 1;
    return all.slice(start, start + limit).map((job) => ({ job, position: job.id }));
  };
}
