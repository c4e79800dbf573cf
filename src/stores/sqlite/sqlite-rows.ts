/**
 * The SQLite store's rows (sqlite-store.ts): the statements that write and read a job, and how a
 * change is encoded into their parameters, a bounded number of rows a statement.
 */
import type Sqlite from 'better-sqlite3';
import type { Job, JobStep } from '../../jobs/job.js';
import type { OutboxEntry } from '../../jobs/job-store.js';
import { type ClaimedRequest } from '../shared/approval-ledger.js';
import { type QueuedChange } from '../shared/group-commit.js';
import { encodeText, stepDecision, stepFixed, stepState } from '../shared/record-columns.js';

/** A job row; the last value is its owner (this store's, or NULL unless queued or executing). */
export const INSERT_JOB =
  'INSERT INTO jobs (id, status, goal, created_at, updated_at, fixed, state, owner) VALUES (?, ?, ?, ?, ?, ?, ?, ?)';

/**
 * The change of a job row: status, time, state, then the status again and this store's owner, the
 * job's seq last. In SET, `status` is the value before the update: a job made queued or executing
 * from neither is taken by this owner, one that stays so keeps its owner, any other has none.
 */
export const UPDATE_JOB = `UPDATE jobs SET status = ?, updated_at = ?, state = ?,
  owner = CASE WHEN ? IN ('queued', 'executing')
    THEN CASE WHEN status IN ('queued', 'executing') THEN owner ELSE ? END END
  WHERE seq = ?`;

export const isActive = (status: string): boolean => status === 'queued' || status === 'executing';

/** The queued and executing jobs of other owners, oldest first, with their owner's process. */
export const OWNED_ELSEWHERE = `
SELECT j.id, j.owner, r.process FROM jobs j
  LEFT JOIN runtime_owners r ON r.owner = j.owner
WHERE j.status IN ('queued', 'executing') AND j.owner <> ?
ORDER BY j.seq`;

// Reads return rows as arrays (better-sqlite3 raw mode): building one object per row cost more
// than the query itself in a 50-job list (issue 8, bench/jobs/sqlite-history.bench.ts).
export const JOB_COLUMNS =
  'jobs.seq, jobs.id, jobs.status, jobs.goal, jobs.created_at, jobs.updated_at, jobs.fixed, jobs.state';
export type JobRow = [
  seq: number,
  id: string,
  status: Job['status'],
  goal: string,
  createdAt: string,
  updatedAt: string,
  fixed: string,
  state: string,
];
export type StepRow = [
  jobSeq: number,
  capability: string,
  status: JobStep['status'],
  fixed: string,
  state: string,
  decision: string | null,
];
export type EventRow = [jobSeq: number, event: string];
export const STEP_COLUMNS = 'job_seq, capability, status, fixed, state, decision';
/** The seqs of a list, bound as one JSON array parameter. */
export const IN_SEQS = 'job_seq IN (SELECT value FROM json_each(?))';

/** Values of one step row: position, capability, status, fixed, state, decision. */
export const STEP_VALUES = 6;

/** Values of one event row: job_seq, position, event, hash. */
export const EVENT_VALUES = 4;

/** Rows written by one multi-row statement at most (7 x 32 parameters for steps). */
export const ROWS_PER_STATEMENT = 32;

/** `(?, ?), (?, ?)` for `rows` rows of `width` values. */
export function placeholders(rows: number, width: number): string {
  const row = `(${Array.from({ length: width }, () => '?').join(', ')})`;
  return Array.from({ length: rows }, () => row).join(', ');
}

/**
 * Appends a step row's values to `into`; the decision column only when this change recorded it
 * (NULL leaves the column as it is).
 */
export function pushStep(
  into: (string | number | null)[],
  position: number,
  step: JobStep,
  decided: boolean,
): void {
  into.push(
    position,
    encodeText(step.capability),
    step.status,
    stepFixed(step),
    stepState(step),
    decided ? stepDecision(step) : null,
  );
}

/** One change of a job, its values already encoded. */
export interface EncodedChange {
  readonly id: string;
  /** The job row of a creation; undefined for a change of a job already created. */
  readonly job: readonly string[] | undefined;
  readonly status: string;
  readonly updatedAt: string;
  readonly state: string;
  /** The job ended with this change. */
  readonly finished: boolean;
  /** Step rows, STEP_VALUES values each. */
  readonly steps: readonly (string | number | null)[];
  /** Position of the first event of `events` in the job. */
  readonly firstEvent: number;
  readonly events: readonly string[];
  /** The chain hash of each of `events`. */
  readonly hashes: readonly string[];
  /** The change consumes the approval request of the step at this position (JobChange). */
  readonly claims:
    | { readonly position: number; readonly status: string; readonly request: ClaimedRequest }
    | undefined;
  /** The notifications the change's events cause (docs/api.md, "Notifications"). */
  readonly outbox: readonly OutboxEntry[] | undefined;
}

/** The statements of the ledger of consumed approvals. */
export interface LedgerStatements {
  readonly events: Sqlite.Statement;
  readonly consume: Sqlite.Statement;
  readonly mark: Sqlite.Statement;
  readonly consumedOf: Sqlite.Statement;
}

/** A change waiting for the next group commit, and how to settle its promise. */
export type PendingWrite = QueuedChange<EncodedChange>;
