/**
 * The one answer encoder of the edges (HTTP, MCP, the CLI's `--json`): a job, a list of jobs, a
 * value or a refusal becomes the JSON-safe answer an edge sends or prints, in the one encoding of
 * values (`toJsonSafe`; docs/decisions.md, "Stores").
 *
 * The edges differ in one detail, kept by the answer style each passes: HTTP and MCP cut every
 * error text to one line (docs/decisions.md, "HTTP and the program"), while the
 * CLI prints a job as its store recorded it and names the error's code in a refusal
 * (docs/decisions.md, "Progress, suggestions and compiled docs (issue 19)").
 *
 * Jobs are read by shape, not by type: importing the job module would make jobs/ and json/
 * import each other (docs/decisions.md, "House rules").
 */
import { ErrorCode } from '../errors/error-codes.js';
import { oneLineError } from '../errors/error-text.js';
import { toJsonSafe } from './json-value.js';

/** How an edge answers: what it does to error texts, and what a refusal carries. */
export interface AnswerStyle {
  /** `one-line`: every error and denial reason as `oneLineError` cuts it; `as-recorded`: as the
   * store holds it. */
  readonly errors: 'one-line' | 'as-recorded';
  /** A refusal names the error's code (`{ error, code, issues }`), not only `{ error, issues }`. */
  readonly refusalCode: boolean;
}

/** The answers of HTTP and MCP: what leaves the process is one line per error. */
export const REMOTE_ANSWER: AnswerStyle = Object.freeze({
  errors: 'one-line',
  refusalCode: false,
});

/** The CLI's `--json`: the job as recorded; a refusal with its code, so one parser reads both. */
export const CLI_ANSWER: AnswerStyle = Object.freeze({
  errors: 'as-recorded',
  refusalCode: true,
});

/** A refused plan, as the edges answer it (a PlanAdmissionError has this shape). */
export interface Refusal {
  readonly message: string;
  readonly code: string;
  readonly issues: readonly object[];
}

/** An error text as the style answers it. */
export function errorText(text: string, style: AnswerStyle): string {
  return style.errors === 'one-line' ? oneLineError(text) : text;
}

/** A value (a result, a list of approval requests) in the one encoding. */
export function valueAnswer(value: unknown): unknown {
  return toJsonSafe(value);
}

function oneLineField(record: unknown, key: string): void {
  if (typeof record !== 'object' || record === null) return;
  const value = (record as Record<string, unknown>)[key];
  if (typeof value === 'string') (record as Record<string, unknown>)[key] = oneLineError(value);
}

/** A job as answered: JSON-safe, and with `one-line` every error or denial reason in it cut. */
export function jobAnswer(job: object, style: AnswerStyle): unknown {
  const answer = toJsonSafe(job) as { steps?: unknown; events?: unknown };
  if (style.errors === 'as-recorded') return answer;
  oneLineField(answer, 'error');
  if (Array.isArray(answer.steps)) {
    for (const step of answer.steps as { decision?: unknown }[]) {
      oneLineField(step, 'error');
      oneLineField(step.decision, 'reason');
    }
  }
  if (Array.isArray(answer.events)) {
    for (const event of answer.events as { data?: unknown }[]) {
      oneLineField(event.data, 'error');
      oneLineField(event.data, 'reason');
    }
  }
  return answer;
}

/**
 * A list of jobs as answered. Recorded jobs are encoded as one value, as the CLI always printed
 * them (a `toJSON` is handed its index, and depth counts from the list); cut jobs one by one.
 */
export function jobListAnswer(jobs: readonly object[], style: AnswerStyle): unknown {
  if (style.errors === 'as-recorded') return toJsonSafe(jobs);
  return jobs.map((job) => jobAnswer(job, style));
}

/** A refused plan as answered: `{ error, issues }`, or `{ error, code, issues }`. */
export function refusalAnswer(refusal: Refusal, style: AnswerStyle): Record<string, unknown> {
  const error = errorText(refusal.message, style);
  return style.refusalCode
    ? { error, code: refusal.code, issues: refusal.issues }
    : { error, issues: refusal.issues };
}

/**
 * The JSON text of an answer (already JSON-safe); `indent` as `JSON.stringify`'s third argument.
 * Never undefined: a value JSON drops is `null`.
 */
export function answerText(answer: unknown, indent?: number): string {
  return JSON.stringify(answer, null, indent) ?? 'null';
}

/** Seconds a client is told to wait before it sends again while the store is unavailable. */
export const STORE_RETRY_AFTER_SECONDS = 5;

/** True when the error, or one of its causes, says the store could not be reached or written. */
function unreachable(error: unknown): boolean {
  let current = error;
  for (let depth = 0; depth < 4 && typeof current === 'object' && current !== null; depth++) {
    const { code, cause } = current as { code?: unknown; cause?: unknown };
    if (code === ErrorCode.STORE_UNAVAILABLE || code === ErrorCode.JOB_OWNER_LOST) return true;
    current = cause;
  }
  return false;
}

/**
 * What an edge answers for a store that failed (docs/api.md, "Store outages"), or undefined for
 * any other error: `STORE_UNAVAILABLE` before a job exists (nothing was recorded: send again
 * later), or for any error at all when `unwritable` (the edge knows the store cannot be written
 * now); `JOB_STORE_FAILED` with the job's id once it exists (`unavailable` when the store was
 * unreachable, or its owner lock lost, rather than failing). The message is Warrant's own, never
 * the driver's text.
 */
export function storeFailureAnswer(
  error: unknown,
  unwritable = false,
): { error: string; code: ErrorCode; jobId?: string; unavailable: boolean } | undefined {
  const { code, jobId, cause } = (error ?? {}) as {
    code?: unknown;
    jobId?: unknown;
    cause?: unknown;
  };
  const failedJob = code === ErrorCode.JOB_STORE_FAILED && typeof jobId === 'string';
  if (code === ErrorCode.STORE_UNAVAILABLE || (unwritable && !failedJob))
    return {
      error: 'The job store is unavailable; nothing was recorded, send the request again later',
      code: ErrorCode.STORE_UNAVAILABLE,
      unavailable: true,
    };
  if (!failedJob) return undefined;
  const unavailable = unwritable || unreachable(cause);
  return {
    error: unavailable
      ? `The job store became unavailable while job ${jobId} ran; its state is the last one recorded`
      : `The job store failed while job ${jobId} ran; its state is the last one recorded`,
    code,
    jobId,
    unavailable,
  };
}
