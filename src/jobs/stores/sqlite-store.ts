/**
 * The embedded durable store (`store: 'sqlite:<file>'`, API.md §10), on better-sqlite3: one
 * connection per store, WAL, statements prepared once at open, and one synchronous
 * transaction per state change (STYLE.md rule 17). The executor calls it synchronously, so a
 * change is on disk before the runtime goes on (the "started" record before the capability runs).
 *
 * Values are stored as JSON through toJsonSafe (json-value.ts): what JSON cannot hold is
 * recorded as documented there, and never crashes a write.
 */
import Database from 'better-sqlite3';
import { createError } from '../../errors/warrant-error.js';
import type { Job, JobEvent, JobListFilter, JobStep } from '../job.js';
import type { JobChange, JobStore } from '../job-store.js';
import { isFinished } from '../job.js';
import { toJsonSafe } from '../json-value.js';

/** Schema version this code writes; a database with a newer one is refused. */
export const SQLITE_SCHEMA_VERSION = 1;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS jobs (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  status TEXT NOT NULL,
  goal TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  fixed TEXT NOT NULL,
  state TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS jobs_by_status ON jobs (status, seq);
CREATE INDEX IF NOT EXISTS jobs_by_goal ON jobs (goal, seq);
CREATE TABLE IF NOT EXISTS job_steps (
  job_seq INTEGER NOT NULL REFERENCES jobs (seq),
  position INTEGER NOT NULL,
  capability TEXT NOT NULL,
  status TEXT NOT NULL,
  fixed TEXT NOT NULL,
  state TEXT NOT NULL,
  PRIMARY KEY (job_seq, position)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS job_steps_by_capability ON job_steps (capability, job_seq);
CREATE TABLE IF NOT EXISTS job_events (
  job_seq INTEGER NOT NULL REFERENCES jobs (seq),
  position INTEGER NOT NULL,
  event TEXT NOT NULL,
  PRIMARY KEY (job_seq, position)
) WITHOUT ROWID;
`;

interface JobRow {
  seq: number;
  id: string;
  status: Job['status'];
  goal: string;
  created_at: string;
  updated_at: string;
  fixed: string;
  state: string;
}

interface StepRow {
  capability: string;
  status: JobStep['status'];
  fixed: string;
  state: string;
}

const encode = (value: unknown): string => JSON.stringify(toJsonSafe(value)) ?? 'null';

/** Written once, at creation. */
function jobFixed(job: Job): string {
  return encode({ planId: job.planId, idempotencyKey: job.idempotencyKey, metadata: job.metadata });
}

/** Rewritten on every change of the job. */
function jobState(job: Job): string {
  return encode({
    outcome: job.outcome,
    startedAt: job.startedAt,
    completedAt: job.completedAt,
    result: job.result,
    error: job.error,
  });
}

function stepFixed(step: JobStep): string {
  return encode({
    id: step.id,
    capabilityVersion: step.capabilityVersion,
    input: step.input,
    reason: step.reason,
    idempotencyKey: step.idempotencyKey,
    createdAt: step.createdAt,
  });
}

function stepState(step: JobStep): string {
  return encode({
    startedAt: step.startedAt,
    completedAt: step.completedAt,
    result: step.result,
    error: step.error,
  });
}

/** Copies the keys of a decoded record that are present (JSON drops undefined ones). */
function assignDefined(target: Record<string, unknown>, source: Record<string, unknown>): void {
  for (const key of Object.keys(source)) {
    if (source[key] !== undefined) target[key] = source[key];
  }
}

function storeError(code: string, message: string, cause?: unknown): Error {
  return createError(Error, code, message, cause);
}

export class SqliteJobStore implements JobStore {
  readonly #db: Database.Database;
  readonly #insertJob: Database.Statement;
  readonly #updateJob: Database.Statement;
  readonly #upsertStep: Database.Statement;
  readonly #insertEvent: Database.Statement;
  readonly #jobById: Database.Statement;
  readonly #stepsOf: Database.Statement;
  readonly #eventsOf: Database.Statement;
  readonly #seqOf = new Map<string, number>();
  readonly #listQueries = new Map<string, Database.Statement>();
  readonly #create: (job: Job) => void;
  readonly #update: (job: Job, change: JobChange) => void;

  /** Opens (and creates or migrates) the database at `file`. */
  constructor(file: string) {
    try {
      this.#db = new Database(file);
    } catch (error) {
      throw storeError(
        'STORE_OPEN_FAILED',
        `Cannot open the SQLite store at ${JSON.stringify(file)}: ${(error as Error).message}`,
        error,
      );
    }
    const db = this.#db;
    db.pragma('journal_mode = WAL');
    // In WAL mode NORMAL keeps every committed transaction through a crash of the process
    // (SIGKILL included, test/stores/sqlite-crash.test.ts); only an OS crash or power loss can
    // lose the last transactions. FULL would fsync every transition.
    db.pragma('synchronous = NORMAL');
    db.pragma('busy_timeout = 5000');
    db.pragma('foreign_keys = ON');
    this.#migrate(file);
    this.#insertJob = db.prepare(
      'INSERT INTO jobs (id, status, goal, created_at, updated_at, fixed, state) VALUES (?, ?, ?, ?, ?, ?, ?)',
    );
    this.#updateJob = db.prepare(
      'UPDATE jobs SET status = ?, updated_at = ?, state = ? WHERE seq = ?',
    );
    this.#upsertStep = db.prepare(
      `INSERT INTO job_steps (job_seq, position, capability, status, fixed, state) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (job_seq, position) DO UPDATE SET status = excluded.status, state = excluded.state`,
    );
    this.#insertEvent = db.prepare(
      'INSERT INTO job_events (job_seq, position, event) VALUES (?, ?, ?)',
    );
    this.#jobById = db.prepare('SELECT * FROM jobs WHERE id = ?');
    this.#stepsOf = db.prepare(
      'SELECT capability, status, fixed, state FROM job_steps WHERE job_seq = ? ORDER BY position',
    );
    this.#eventsOf = db.prepare('SELECT event FROM job_events WHERE job_seq = ? ORDER BY position');

    this.#create = db.transaction((job: Job) => {
      const { lastInsertRowid } = this.#insertJob.run(
        job.id,
        job.status,
        job.goal,
        job.createdAt,
        job.updatedAt,
        jobFixed(job),
        jobState(job),
      );
      const seq = Number(lastInsertRowid);
      job.steps.forEach((step, position) => {
        this.#writeStep(seq, position, step);
      });
      job.events.forEach((event, position) => this.#insertEvent.run(seq, position, encode(event)));
      this.#seqOf.set(job.id, seq);
    });
    this.#update = db.transaction((job: Job, change: JobChange) => {
      const seq = this.#seq(job.id);
      this.#updateJob.run(job.status, job.updatedAt, jobState(job), seq);
      // A finished job may have changed every step (later steps become 'skipped').
      const positions = isFinished(job)
        ? job.steps.keys()
        : change.step === undefined
          ? []
          : [change.step];
      for (const position of positions) {
        const step = job.steps[position] as JobStep;
        this.#writeStep(seq, position, step);
      }
      const first = job.events.length - change.events.length;
      change.events.forEach((event, offset) =>
        this.#insertEvent.run(seq, first + offset, encode(event)),
      );
      if (isFinished(job)) this.#seqOf.delete(job.id);
    });
  }

  #writeStep(seq: number, position: number, step: JobStep): void {
    this.#upsertStep.run(
      seq,
      position,
      step.capability,
      step.status,
      stepFixed(step),
      stepState(step),
    );
  }

  #migrate(file: string): void {
    const db = this.#db;
    db.transaction(() => {
      db.exec(SCHEMA);
      const row = db.prepare('SELECT version FROM schema_version').get() as
        { version: number } | undefined;
      if (row === undefined) {
        db.prepare('INSERT INTO schema_version (version) VALUES (?)').run(SQLITE_SCHEMA_VERSION);
      } else if (row.version > SQLITE_SCHEMA_VERSION) {
        throw storeError(
          'STORE_SCHEMA_TOO_NEW',
          `The SQLite store at ${JSON.stringify(file)} has schema version ${row.version}; this Warrant knows up to ${SQLITE_SCHEMA_VERSION}. Upgrade Warrant to open it.`,
        );
      }
      // Versions below SQLITE_SCHEMA_VERSION would be migrated here, step by step.
    })();
  }

  #seq(id: string): number {
    const known = this.#seqOf.get(id);
    if (known !== undefined) return known;
    const row = this.#db.prepare('SELECT seq FROM jobs WHERE id = ?').get(id) as
      { seq: number } | undefined;
    if (row === undefined)
      throw storeError('JOB_NOT_FOUND', `No job ${JSON.stringify(id)} in the SQLite store`);
    return row.seq;
  }

  create(job: Job): void {
    this.#create(job);
  }

  update(job: Job, change: JobChange): void {
    this.#update(job, change);
  }

  get(id: string): Job | undefined {
    const row = this.#jobById.get(id) as JobRow | undefined;
    return row === undefined ? undefined : this.#toJob(row);
  }

  list(filter: JobListFilter): Job[] {
    const conditions: string[] = [];
    const values: unknown[] = [];
    if (filter.status !== undefined) {
      conditions.push('status = ?');
      values.push(filter.status);
    }
    if (filter.goal !== undefined) {
      conditions.push('goal = ?');
      values.push(filter.goal);
    }
    if (filter.capability !== undefined) {
      conditions.push('seq IN (SELECT job_seq FROM job_steps WHERE capability = ?)');
      values.push(filter.capability);
    }
    const where = conditions.length === 0 ? '' : ` WHERE ${conditions.join(' AND ')}`;
    const sql = `SELECT * FROM jobs${where} ORDER BY seq DESC LIMIT ?`;
    let statement = this.#listQueries.get(sql);
    if (statement === undefined) {
      statement = this.#db.prepare(sql);
      this.#listQueries.set(sql, statement);
    }
    const rows = statement.all(...values, filter.limit ?? -1) as JobRow[];
    return rows.map((row) => this.#toJob(row));
  }

  close(): void {
    if (this.#db.open) this.#db.close();
  }

  #toJob(row: JobRow): Job {
    const steps = (this.#stepsOf.all(row.seq) as StepRow[]).map((stepRow) => {
      const step: Record<string, unknown> = {
        capability: stepRow.capability,
        status: stepRow.status,
      };
      assignDefined(step, JSON.parse(stepRow.fixed) as Record<string, unknown>);
      assignDefined(step, JSON.parse(stepRow.state) as Record<string, unknown>);
      return step as unknown as JobStep;
    });
    const events = (this.#eventsOf.all(row.seq) as { event: string }[]).map(
      (eventRow) => JSON.parse(eventRow.event) as JobEvent,
    );
    const job: Record<string, unknown> = {
      id: row.id,
      goal: row.goal,
      status: row.status,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
    };
    assignDefined(job, JSON.parse(row.fixed) as Record<string, unknown>);
    assignDefined(job, JSON.parse(row.state) as Record<string, unknown>);
    job.steps = steps;
    job.events = events;
    return job as unknown as Job;
  }
}
