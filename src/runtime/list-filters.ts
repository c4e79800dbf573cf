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

/** The filter of `listJobs`, each field read once (JOB_FILTER_INVALID when malformed). */
export function checkJobFilter(filter: unknown): JobListFilter {
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
  const field = (key: keyof JobListFilter): unknown =>
    readField(filter, key, (problem) =>
      createError(TypeError, ErrorCode.JOB_FILTER_INVALID, `listJobs() filter.${key} ${problem}`),
    );
  const status = field('status');
  const capability = field('capability');
  const goal = field('goal');
  const limit = field('limit');
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
  const checked: { -readonly [K in keyof JobListFilter]: JobListFilter[K] } = {};
  if (status !== undefined) checked.status = status as JobListFilter['status'];
  if (capability !== undefined) checked.capability = capability as string;
  if (goal !== undefined) checked.goal = goal as string;
  if (limit !== undefined) checked.limit = limit as number;
  return checked;
}

/** The `jobId` of a `listApprovals` filter (JOB_FILTER_INVALID when malformed). */
export function checkApprovalFilter(filter: unknown): string | undefined {
  const fail = (problem: string) =>
    createError(TypeError, ErrorCode.JOB_FILTER_INVALID, `listApprovals() filter ${problem}`);
  if (typeof filter !== 'object' || filter === null)
    throw fail(`must be an object, got ${describeValue(filter)}`);
  const jobId = readField(filter, 'jobId', (problem) => fail(`.jobId ${problem}`));
  if (jobId !== undefined && typeof jobId !== 'string')
    throw fail(`.jobId must be a string, got ${describeValue(jobId)}`);
  return jobId;
}
