/**
 * The PostgreSQL store's rows (postgres-store.ts): the statements that write and read a job, and
 * how a change is encoded into their parameters and a row decoded back into a job.
 */
import { ErrorCode } from '../../errors/error-codes.js';
import { MAX_STATEMENT_TIMEOUT_MS } from './postgres-url.js';
import { createError } from '../../errors/warrant-error.js';
import type { Job, JobEvent, JobStep } from '../../jobs/job.js';
import type { OutboxEntry } from '../../jobs/job-store.js';
import { type QueuedChange } from '../shared/group-commit.js';
import { outboxRows } from './postgres-outbox.js';
import { type LastEvent } from '../shared/write-retry.js';
import {
  decodeEvent,
  decodeJob,
  decodeStep,
  encode,
  encodeText,
  jobState,
  stepDecision,
  stepFixed,
  stepState,
} from '../shared/record-columns.js';

// Exported for the raw pg baseline of bench/stores.ts, which issues the same statements.
export const CREATE_JOB = `
WITH job AS (
  INSERT INTO warrant_jobs (id, status, goal, created_at, updated_at, fixed, state)
  VALUES ($1, $2, $3, $4, $5, $6, $7)
  RETURNING seq
), steps AS (
  INSERT INTO warrant_job_steps (job_seq, position, capability, status, fixed, state)
  SELECT job.seq, s.position, s.capability, s.status, s.fixed, s.state
  FROM job, unnest($8::int[], $9::text[], $10::text[], $11::text[], $12::text[])
    AS s (position, capability, status, fixed, state)
), events AS (
  INSERT INTO warrant_job_events (job_seq, position, event, hash)
  SELECT job.seq, e.position, e.event, e.hash
  FROM job, unnest($13::int[], $14::text[], $15::text[]) AS e (position, event, hash)
)
SELECT seq FROM job`;

export const UPDATE_JOB = `
WITH job AS (
  UPDATE warrant_jobs SET status = $2, updated_at = $3, state = $4
  WHERE id = $1
  RETURNING seq
), steps AS (
  INSERT INTO warrant_job_steps (job_seq, position, capability, status, fixed, state, decision)
  SELECT job.seq, s.position, s.capability, s.status, s.fixed, s.state, s.decision
  FROM job, unnest($5::int[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[])
    AS s (position, capability, status, fixed, state, decision)
  ON CONFLICT (job_seq, position) DO UPDATE SET status = excluded.status, state = excluded.state,
    decision = COALESCE(excluded.decision, warrant_job_steps.decision)
), events AS (
  INSERT INTO warrant_job_events (job_seq, position, event, hash)
  SELECT job.seq, e.position, e.event, e.hash
  FROM job, unnest($11::int[], $12::text[], $13::text[]) AS e (position, event, hash)
)
SELECT seq FROM job`;

/**
 * UPDATE_JOB written only while the job is stored `queued` and its last event is the one the
 * change follows ($14 its position, $15 its chain hash): the condition, the job's row, its steps
 * and events in one statement (JobStore.updateWhileQueued). Under READ COMMITTED a writer holding
 * the row makes this statement wait, then the row is checked again as that writer left it; every
 * writer of a queued job changes its status, and the events' key refuses a second writer at the
 * same positions.
 */
export const UPDATE_WHILE_QUEUED = UPDATE_JOB.replace(
  '  WHERE id = $1\n',
  `  WHERE id = $1 AND status = 'queued'
    AND EXISTS (SELECT 1 FROM warrant_job_events e WHERE e.job_seq = warrant_jobs.seq
      AND e.position = $14 AND COALESCE(e.hash, '') = $15)
    AND NOT EXISTS (SELECT 1 FROM warrant_job_events e WHERE e.job_seq = warrant_jobs.seq
      AND e.position > $14)
`,
);

/**
 * The changes of several jobs (at most one change per job) in one statement: the new jobs'
 * rows, the changed jobs' rows, then the steps and events of both, each array holding the job
 * id of its row. Returns the id of every changed job found (a missing one is JOB_NOT_FOUND).
 */
export const WRITE_BATCH = `
WITH created AS (
  INSERT INTO warrant_jobs (id, status, goal, created_at, updated_at, fixed, state)
  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[])
  RETURNING seq, id
), changed AS (
  UPDATE warrant_jobs j SET status = c.status, updated_at = c.updated_at, state = c.state
  FROM unnest($8::text[], $9::text[], $10::text[], $11::text[]) AS c (id, status, updated_at, state)
  WHERE j.id = c.id
  RETURNING j.seq, j.id
), written AS (
  SELECT seq, id FROM created UNION ALL SELECT seq, id FROM changed
), steps AS (
  INSERT INTO warrant_job_steps (job_seq, position, capability, status, fixed, state, decision)
  SELECT w.seq, s.position, s.capability, s.status, s.fixed, s.state, s.decision
  FROM unnest($12::text[], $13::int[], $14::text[], $15::text[], $16::text[], $17::text[], $18::text[])
    AS s (id, position, capability, status, fixed, state, decision)
  JOIN written w ON w.id = s.id
  ON CONFLICT (job_seq, position) DO UPDATE SET status = excluded.status, state = excluded.state,
    decision = COALESCE(excluded.decision, warrant_job_steps.decision)
), events AS (
  INSERT INTO warrant_job_events (job_seq, position, event, hash)
  SELECT w.seq, e.position, e.event, e.hash
  FROM unnest($19::text[], $20::int[], $21::text[], $22::text[]) AS e (id, position, event, hash)
  JOIN written w ON w.id = e.id
)
SELECT id FROM changed`;

/**
 * WRITE_BATCH with the notification outbox rows of its changes (postgres-outbox.ts), in the
 * same statement: written with their change or not at all. Used only for batches with such rows.
 */
export const WRITE_BATCH_OUTBOX = WRITE_BATCH.replace(
  '\nSELECT id FROM changed',
  `, ${outboxRows(23)}\nSELECT id FROM changed`,
);

/** Of changes' last events (job id, position), those stored, with their chain hashes. */
export const WRITTEN_EVENTS = `
SELECT j.id, e.position, e.hash FROM unnest($1::text[], $2::int[]) AS k (id, position)
JOIN warrant_jobs j ON j.id = k.id
JOIN warrant_job_events e ON e.job_seq = j.seq AND e.position = k.position`;

/**
 * The check-and-set of a decision on an approval request. Under READ COMMITTED a concurrent
 * claim waits for the row lock, then finds the step no longer waiting: exactly one claim of any
 * number of processes on the database updates a row.
 */
export const CLAIM_STEP = `
UPDATE warrant_job_steps SET status = $3
WHERE job_seq = (SELECT seq FROM warrant_jobs WHERE id = $1) AND position = $2
  AND status = 'awaiting_approval'`;

/** A job row with its steps and events, read in one statement (one snapshot). */
export const JOB_COLUMNS = `
SELECT j.id, j.status, j.goal, j.created_at, j.updated_at, j.fixed, j.state,
  ARRAY(SELECT s.capability FROM warrant_job_steps s WHERE s.job_seq = j.seq ORDER BY s.position) AS step_capabilities,
  ARRAY(SELECT s.status FROM warrant_job_steps s WHERE s.job_seq = j.seq ORDER BY s.position) AS step_statuses,
  ARRAY(SELECT s.fixed FROM warrant_job_steps s WHERE s.job_seq = j.seq ORDER BY s.position) AS step_fixed,
  ARRAY(SELECT s.state FROM warrant_job_steps s WHERE s.job_seq = j.seq ORDER BY s.position) AS step_states,
  ARRAY(SELECT s.decision FROM warrant_job_steps s WHERE s.job_seq = j.seq ORDER BY s.position) AS step_decisions,
  ARRAY(SELECT e.event FROM warrant_job_events e WHERE e.job_seq = j.seq ORDER BY e.position) AS events`;
export const SELECT_JOBS = `${JOB_COLUMNS}
FROM warrant_jobs j`;

/**
 * A job with the chain hash of its last event, read in the same statement: what a conditional
 * write of the record read starts its events from (JobStore.updateWhileQueued).
 */
export const SELECT_JOB_HEAD = `${JOB_COLUMNS},
  (SELECT COALESCE(e.hash, '') FROM warrant_job_events e WHERE e.job_seq = j.seq
    ORDER BY e.position DESC LIMIT 1) AS head
FROM warrant_jobs j`;

/** A job with the chain hash of each event, in the same statement (one snapshot). */
export const SELECT_CHAIN = `${JOB_COLUMNS},
  ARRAY(SELECT e.hash FROM warrant_job_events e WHERE e.job_seq = j.seq ORDER BY e.position) AS hashes
FROM warrant_jobs j`;

/** The last chain hash of a job (for a job this store did not create). */
/** A job's status, its row locked for the transaction (the conditional writes of a queued job). */
export const STATUS_FOR_UPDATE = 'SELECT status FROM warrant_jobs WHERE id = $1 FOR UPDATE';

/** The position and chain hash of a job's last event. */
export const LAST_EVENT = `
SELECT e.position, e.hash FROM warrant_job_events e JOIN warrant_jobs j ON j.seq = e.job_seq
WHERE j.id = $1 ORDER BY e.position DESC LIMIT 1`;

export const LAST_HASH = `
SELECT e.hash FROM warrant_job_events e JOIN warrant_jobs j ON j.seq = e.job_seq
WHERE j.id = $1 ORDER BY e.position DESC LIMIT 1`;

export interface JobRow {
  id: string;
  status: Job['status'];
  goal: string;
  created_at: string;
  updated_at: string;
  fixed: string;
  state: string;
  step_capabilities: string[];
  step_statuses: JobStep['status'][];
  step_fixed: string[];
  step_states: string[];
  step_decisions: (string | null)[];
  events: string[];
}

/** The step rows a change writes, as columns. */
export interface StepColumns {
  readonly positions: number[];
  readonly capabilities: string[];
  readonly statuses: string[];
  readonly fixed: string[];
  readonly states: string[];
  /** The decision only for the step whose decision the change recorded (NULL keeps the column). */
  readonly decisions: (string | null)[];
}

/** The events a change appends, as columns. */
export interface EventColumns {
  readonly positions: number[];
  readonly events: string[];
  readonly hashes: string[];
}

/** One change of a job, its values already encoded (when it happened). */
export interface EncodedChange {
  readonly id: string;
  /** The row of a new job (jobRow); undefined for a change of a job already created. */
  readonly row: readonly string[] | undefined;
  readonly status: string;
  readonly updatedAt: string;
  readonly state: string;
  readonly steps: StepColumns;
  readonly events: EventColumns;
  /** The notifications the change's events cause (docs/api.md, "Notifications"). */
  readonly outbox: readonly OutboxEntry[] | undefined;
  /** A change of a job already created: the owner generation its record writes under. */
  readonly generation: number | undefined;
  /** A new job: its record, which writes under the owner generation that created it. */
  readonly job: Job | undefined;
}

/**
 * Where a change's last event goes (lost-commit detection, stores/shared/write-retry.ts); none
 * without events.
 */
export function lastEventOf(change: EncodedChange): LastEvent | undefined {
  const { positions, hashes } = change.events;
  const last = positions.length - 1;
  if (last < 0) return undefined;
  return { id: change.id, position: positions[last] as number, hash: hashes[last] };
}

export function stepColumns(job: Job, positions: Iterable<number>, decided?: number): StepColumns {
  const columns: StepColumns = {
    positions: [],
    capabilities: [],
    statuses: [],
    fixed: [],
    states: [],
    decisions: [],
  };
  for (const position of positions) {
    const step = job.steps[position] as JobStep;
    columns.positions.push(position);
    columns.capabilities.push(encodeText(step.capability));
    columns.statuses.push(step.status);
    columns.fixed.push(stepFixed(step));
    columns.states.push(stepState(step));
    columns.decisions.push(position === decided ? stepDecision(step) : null);
  }
  return columns;
}

export function eventColumns(
  events: readonly JobEvent[],
  first: number,
  hashes: string[],
): EventColumns {
  return {
    positions: events.map((_, offset) => first + offset),
    events: events.map((event) => encode(event)),
    hashes,
  };
}

/**
 * A change of a job already created. `first` (the position of the change's first event) is
 * taken by the caller before it awaits anything, as the job may grow meanwhile.
 */
export function encodedUpdate(
  job: Job,
  steps: StepColumns,
  events: readonly JobEvent[],
  first: number,
  hashes: string[],
  outbox: readonly OutboxEntry[] | undefined,
  generation: number | undefined,
): EncodedChange {
  return {
    id: job.id,
    row: undefined,
    status: job.status,
    updatedAt: job.updatedAt,
    state: jobState(job),
    steps,
    events: eventColumns(events, first, hashes),
    outbox,
    generation,
    job: undefined,
  };
}

/** CREATE_JOB's parameters for a new job (none of its steps is decided yet). */
export function createValues(change: EncodedChange, row: readonly string[]): unknown[] {
  const { steps, events } = change;
  return [
    ...row,
    steps.positions,
    steps.capabilities,
    steps.statuses,
    steps.fixed,
    steps.states,
    events.positions,
    events.events,
    events.hashes,
  ];
}

/** UPDATE_JOB's parameters for a change of a job already created. */
export function updateValues(change: EncodedChange): unknown[] {
  const { steps, events } = change;
  return [
    change.id,
    change.status,
    change.updatedAt,
    change.state,
    steps.positions,
    steps.capabilities,
    steps.statuses,
    steps.fixed,
    steps.states,
    steps.decisions,
    events.positions,
    events.events,
    events.hashes,
  ];
}

/** WRITE_BATCH's parameters for changes of distinct jobs. */
export function batchValues(changes: readonly EncodedChange[]): unknown[] {
  const created: string[][] = [[], [], [], [], [], [], []];
  const changed: string[][] = [[], [], [], []];
  const steps: unknown[][] = [[], [], [], [], [], [], []];
  const events: unknown[][] = [[], [], [], []];
  for (const change of changes) {
    const { id, row } = change;
    if (row === undefined) {
      changed[0]?.push(id);
      changed[1]?.push(change.status);
      changed[2]?.push(change.updatedAt);
      changed[3]?.push(change.state);
    } else {
      row.forEach((value, column) => created[column]?.push(value));
    }
    const s = change.steps;
    s.positions.forEach((position, index) => {
      steps[0]?.push(id);
      steps[1]?.push(position);
      steps[2]?.push(s.capabilities[index]);
      steps[3]?.push(s.statuses[index]);
      steps[4]?.push(s.fixed[index]);
      steps[5]?.push(s.states[index]);
      steps[6]?.push(s.decisions[index]);
    });
    const e = change.events;
    e.positions.forEach((position, index) => {
      events[0]?.push(id);
      events[1]?.push(position);
      events[2]?.push(e.events[index]);
      events[3]?.push(e.hashes[index]);
    });
  }
  return [...created, ...changed, ...steps, ...events];
}

/** A change waiting for the next group commit, and how to settle its promise. */
export type QueuedWrite = QueuedChange<EncodedChange>;

/**
 * True for an error about the data of a statement (SQLSTATE classes 22 and 23): in a batch it
 * may come from one change alone, so the changes are then written one by one. Any other error
 * (connection, time-out, server) fails every change of the batch.
 */
export function isDataError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^2[23][0-9A-Z]{3}$/.test(code);
}

/** True for a unique violation (SQLSTATE 23505). */
export function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === '23505';
}

export function toJob(row: JobRow): Job {
  const steps = row.step_capabilities.map((capability, position) =>
    decodeStep(
      capability,
      row.step_statuses[position] as string,
      row.step_fixed[position] as string,
      row.step_states[position] as string,
      row.step_decisions[position] ?? null,
    ),
  );
  return decodeJob(
    row.id,
    row.status,
    row.goal,
    row.created_at,
    row.updated_at,
    row.fixed,
    row.state,
    steps,
    row.events.map(decodeEvent),
  );
}

/** The URL without its password, for messages (never log secrets). */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'postgres://<unparseable url>';
  }
}

/** Statement time-out when the URL sets none (docs/decisions.md "Stores"). */
export const DEFAULT_STATEMENT_TIMEOUT_MS = 30_000;

/** How much longer than the server's time-out the client waits for an answer or a connection. */
export const CLIENT_MARGIN_MS = 1_000;

export function isTimeout(value: unknown): value is number {
  return (
    Number.isSafeInteger(value) &&
    (value as number) >= 0 &&
    (value as number) <= MAX_STATEMENT_TIMEOUT_MS
  );
}

export function storeError(code: ErrorCode, message: string, cause?: unknown): Error {
  return createError(Error, code, message, cause);
}

export function notFound(id: string): Error {
  return storeError(
    ErrorCode.JOB_NOT_FOUND,
    `No job ${JSON.stringify(id)} in the PostgreSQL store`,
  );
}
