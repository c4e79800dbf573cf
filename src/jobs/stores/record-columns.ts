/**
 * How the durable stores (SQLite, PostgreSQL) split a job record into JSON columns: the parts
 * written once (plan id, metadata, step inputs) apart from the parts rewritten at every
 * transition, so a transition re-encodes only what changed. Values go through toJsonSafe, so what
 * JSON cannot hold is recorded as the README documents and never crashes a write.
 */
import type { Job, JobStep } from '../job.js';
import { toJsonText } from '../json-value.js';

export const encode = (value: unknown): string => toJsonText(value);

/**
 * The goal and capability columns hold the string as JSON text: exact for every string (a lone
 * surrogate is escaped as `\udXXX`, U+0000 as `\u0000`; stored raw, SQLite and PostgreSQL turn
 * a lone surrogate into U+FFFD and PostgreSQL refuses U+0000), and one string always gives the
 * same text, so equality filters and their indexes work on the encoded column.
 */
export const encodeText = (text: string): string => JSON.stringify(text);

export const decodeText = (column: string): string => JSON.parse(column) as string;

/** Written once, at creation. */
export function jobFixed(job: Job): string {
  return encode({ planId: job.planId, idempotencyKey: job.idempotencyKey, metadata: job.metadata });
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

/** Written once, at creation. */
export function stepFixed(step: JobStep): string {
  return encode({
    id: step.id,
    capabilityVersion: step.capabilityVersion,
    input: step.input,
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

/** Copies the keys of a decoded column that are present (JSON drops undefined ones). */
export function assignDefined(
  target: Record<string, unknown>,
  source: Record<string, unknown>,
): void {
  for (const key of Object.keys(source)) {
    if (source[key] !== undefined) target[key] = source[key];
  }
}
