/**
 * The filters of `runtime.listJobs()` and `runtime.listApprovals()` (docs/api.md), read once and
 * checked: a malformed one is a TypeError with JOB_FILTER_INVALID naming the field
 * (docs/errors.md). Kept apart from the runtime so the runtime holds behaviour only
 * (docs/decisions.md, "House rules").
 */
import { ErrorCode } from '../errors/error-codes.js';
import { describeValue } from '../errors/describe-value.js';
import { isArrayValue, readField } from '../values/hostile-reads.js';
import { createError } from '../errors/warrant-error.js';
import type { JobListFilter } from '../jobs/job.js';
import { frozenCallerCopy } from '../callers/caller-check.js';
import type { ExecutionCaller } from '../callers/execution-caller.js';

/** The caller of a filter, checked like any caller from outside (JOB_FILTER_INVALID). */
function checkFilterCaller(value: unknown, name: string): ExecutionCaller | undefined {
  if (value === undefined) return undefined;
  const checked = frozenCallerCopy(value, `${name} filter.caller`);
  if (!checked.ok) throw createError(TypeError, ErrorCode.JOB_FILTER_INVALID, checked.reason);
  return checked.caller;
}

/** The filter of `listJobs`, each field read once (JOB_FILTER_INVALID when malformed). */
export function checkJobFilter(filter: unknown): JobListFilter & { caller?: ExecutionCaller } {
  if (filter === undefined) return {};
  const notObject = (problem: string) =>
    createError(TypeError, ErrorCode.JOB_FILTER_INVALID, `listJobs() filter ${problem}`);
  if (typeof filter !== 'object' || filter === null || isArrayValue(filter, notObject)) {
    throw createError(
      TypeError,
      ErrorCode.JOB_FILTER_INVALID,
      `listJobs() filter must be an object, got ${describeValue(filter)}`,
    );
  }
  const field = (key: keyof JobListFilter | 'caller'): unknown =>
    readField(filter, key, (problem) =>
      createError(TypeError, ErrorCode.JOB_FILTER_INVALID, `listJobs() filter.${key} ${problem}`),
    );
  const status = field('status');
  const capability = field('capability');
  const goal = field('goal');
  const limit = field('limit');
  const caller = checkFilterCaller(field('caller'), 'listJobs()');
  for (const [name, value] of [
    ['status', status],
    ['capability', capability],
    ['goal', goal],
  ] as const) {
    if (value !== undefined && typeof value !== 'string') {
      throw createError(
        TypeError,
        ErrorCode.JOB_FILTER_INVALID,
        `listJobs() filter.${name} must be a string, got ${describeValue(value)}`,
      );
    }
  }
  if (
    limit !== undefined &&
    (typeof limit !== 'number' || !Number.isSafeInteger(limit) || limit < 0)
  ) {
    throw createError(
      TypeError,
      ErrorCode.JOB_FILTER_INVALID,
      `listJobs() filter.limit must be a non-negative integer, got ${describeValue(limit)}`,
    );
  }
  // The values read here are what the store filters by: a getter is not read twice.
  const checked: { -readonly [K in keyof JobListFilter]: JobListFilter[K] } & {
    caller?: ExecutionCaller;
  } = {};
  if (status !== undefined) checked.status = status as JobListFilter['status'];
  if (capability !== undefined) checked.capability = capability as string;
  if (goal !== undefined) checked.goal = goal as string;
  if (limit !== undefined) checked.limit = limit as number;
  if (caller !== undefined) checked.caller = caller;
  return checked;
}

/** A `listApprovals` filter as checked. */
export interface CheckedApprovalFilter {
  readonly jobId?: string;
  readonly caller?: ExecutionCaller;
  readonly limit?: number;
  readonly cursor?: string;
}

/** The filter of `listApprovals` (JOB_FILTER_INVALID when malformed), each field read once. */
export function checkApprovalFilter(filter: unknown): CheckedApprovalFilter {
  const fail = (problem: string) =>
    createError(TypeError, ErrorCode.JOB_FILTER_INVALID, `listApprovals() filter ${problem}`);
  if (typeof filter !== 'object' || filter === null)
    throw fail(`must be an object, got ${describeValue(filter)}`);
  const field = (key: string) => readField(filter, key, (problem) => fail(`.${key} ${problem}`));
  const jobId = field('jobId');
  const caller = checkFilterCaller(field('caller'), 'listApprovals()');
  const limit = field('limit');
  const cursor = field('cursor');
  if (jobId !== undefined && typeof jobId !== 'string')
    throw fail(`.jobId must be a string, got ${describeValue(jobId)}`);
  if (
    limit !== undefined &&
    (typeof limit !== 'number' || !Number.isSafeInteger(limit) || limit < 0)
  )
    throw fail(`.limit must be a non-negative integer, got ${describeValue(limit)}`);
  if (cursor !== undefined && typeof cursor !== 'string')
    throw fail(`.cursor must be a string, got ${describeValue(cursor)}`);
  const checked: {
    jobId?: string;
    caller?: ExecutionCaller;
    limit?: number;
    cursor?: string;
  } = {};
  if (jobId !== undefined) checked.jobId = jobId;
  if (caller !== undefined) checked.caller = caller;
  if (limit !== undefined) checked.limit = limit as number;
  if (cursor !== undefined) checked.cursor = cursor;
  return checked;
}
