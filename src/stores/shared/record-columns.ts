/**
 * How the durable stores (SQLite, PostgreSQL) split a job record into JSON columns: the parts
 * written once (plan id, metadata, caller, step inputs, a step's decision) apart from the parts
 * rewritten when the job or a step changes. A store is given the record (jobs/transitions.ts),
 * whose values were encoded once, when they happened (toJsonSafe: what JSON cannot hold is recorded
 * as docs/guide/stores.md, "Values JSON cannot hold" documents): a column is the JSON text of
 * record parts, nothing is encoded again.
 */
import { ErrorCode } from '../../errors/error-codes.js';
import { createError } from '../../errors/warrant-error.js';
import type { Job, JobEvent, JobStep } from '../../jobs/job.js';
import { parseJson } from '../../json/parse-json.js';

/** The JSON text of record data (JSON data already; undefined keys are left out). */
export const encode = (value: unknown): string => JSON.stringify(value) ?? 'null';

/**
 * The goal and capability columns hold the string as JSON text: exact for every string (a lone
 * surrogate is escaped as `\udXXX`, U+0000 as `\u0000`; stored raw, SQLite and PostgreSQL turn
 * a lone surrogate into U+FFFD and PostgreSQL refuses U+0000), and one string always gives the
 * same text, so equality filters and their indexes work on the encoded column.
 */
export const encodeText = (text: string): string => JSON.stringify(text);

export const decodeText = (column: string): string => parseColumn(column) as string;

/** Written once, at creation. */
export function jobFixed(job: Job): string {
  return encode({
    planId: job.planId,
    idempotencyKey: job.idempotencyKey,
    metadata: job.metadata,
    caller: job.caller,
    planVersion: job.planVersion,
  });
}

/** Rewritten on every change of the job. */
export function jobState(job: Job): string {
  return encode({
    outcome: job.outcome,
    startedAt: job.startedAt,
    completedAt: job.completedAt,
    result: job.result,
    error: job.error,
  });
}

/**
 * The row of a new job in both SQL stores, in their column order: id, status, goal, created_at,
 * updated_at, fixed, state.
 */
export function jobRow(job: Job): string[] {
  return [
    job.id,
    job.status,
    encodeText(job.goal),
    job.createdAt,
    job.updatedAt,
    jobFixed(job),
    jobState(job),
  ];
}

/** Written once, at creation. */
export function stepFixed(step: JobStep): string {
  return encode({
    id: step.id,
    capabilityVersion: step.capabilityVersion,
    input: step.input,
    bounds: step.bounds,
    reason: step.reason,
    idempotencyKey: step.idempotencyKey,
    createdAt: step.createdAt,
  });
}

/** Rewritten when the step changes. */
export function stepState(step: JobStep): string {
  return encode({
    startedAt: step.startedAt,
    completedAt: step.completedAt,
    result: step.result,
    error: step.error,
  });
}

/**
 * Written by each change that records the step's decision: the decision, the input as
 * authorized and the effect as authorized (NULL until then), and an approver's edit (docs/api.md,
 * "Approve with edits"), written by its grant.
 */
export function stepDecision(step: JobStep): string {
  return encode({
    decision: step.decision,
    resolvedInput: step.resolvedInput,
    proposedInput: step.proposedInput,
    approvedInput: step.approvedInput,
    effect: step.effect,
  });
}

/** A column's JSON; one edited into something else is reported as such (verifyJob says so). */
function parseColumn(column: string): unknown {
  try {
    return parseJson(column);
  } catch (error) {
    throw createError(
      Error,
      ErrorCode.JOB_RECORD_UNREADABLE,
      `the record cannot be read: a column is not JSON (${(error as Error).message})`,
      error,
    );
  }
}

/** Copies the keys of a decoded column that are present (JSON drops undefined ones). */
function assignDefined(target: Record<string, unknown>, column: string): void {
  const source = parseColumn(column) as Record<string, unknown>;
  for (const key of Object.keys(source)) {
    if (source[key] !== undefined) target[key] = source[key];
  }
}

/** A step from the columns of its row: the one decoder of both durable stores. */
export function decodeStep(
  capability: string,
  status: string,
  fixed: string,
  state: string,
  decision: string | null,
): JobStep {
  const step: Record<string, unknown> = { capability: decodeText(capability), status };
  assignDefined(step, fixed);
  assignDefined(step, state);
  if (decision !== null) assignDefined(step, decision);
  return step as unknown as JobStep;
}

export function decodeEvent(column: string): JobEvent {
  return parseColumn(column) as JobEvent;
}

/** A job from the columns of its row, with its decoded steps and events. */
export function decodeJob(
  id: string,
  status: string,
  goal: string,
  createdAt: string,
  updatedAt: string,
  fixed: string,
  state: string,
  steps: JobStep[],
  events: JobEvent[],
): Job {
  const job: Record<string, unknown> = { id, goal: decodeText(goal), status, createdAt, updatedAt };
  assignDefined(job, fixed);
  assignDefined(job, state);
  job.steps = steps;
  job.events = events;
  return job as unknown as Job;
}
