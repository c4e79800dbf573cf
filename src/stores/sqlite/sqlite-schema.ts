/**
 * The SQLite store's schema (docs/guide/stores.md, "Which store"): its tables, their migrations and
 * version, applied when a file is opened; the statements of the ledger of consumed approvals and
 * of the checkpoints (sqlite-store.ts uses them).
 */
import type Sqlite from 'better-sqlite3';
import type { LedgerEntry } from '../../jobs/job-store.js';

/**
 * Schema version this code writes; a database with a newer one is refused. Version 2 holds the
 * goal and capability columns as JSON text (version 1 held them raw, which turned lone
 * surrogates into U+FFFD). Version 3 adds the decision record: each step's decision and input
 * as authorized, and each event's chain hash. Older files are migrated when they are opened:
 * what they recorded stays readable, with no decisions and no hashes (NULL), and such a job
 * verifies as having no chain. Version 4 adds the ledger of consumed approvals
 * (stores/shared/approval-ledger.ts), empty at migration. Version 5 seals the ledger in the
 * checkpoints: each entry keeps the input digest decided on, and waits marked for the next
 * checkpoint (the entries of a version 4 file are marked at migration). Version 6 keeps each queued
 * or executing job's owner in its row (version 5 wrote a job_owners row per job): stop processes of
 * an older version before one of this version opens the file, their owner rows are no longer read.
 */
export const SQLITE_SCHEMA_VERSION = 6;

/**
 * The ledger of consumed approvals (stores/shared/approval-ledger.ts): created with the schema, or
 * by version 4.
 */
export const APPROVAL_LEDGER = `
CREATE TABLE IF NOT EXISTS approval_ledger (
  job_id TEXT NOT NULL,
  request_position INTEGER NOT NULL,
  step_id TEXT NOT NULL,
  request_hash TEXT,
  decision TEXT NOT NULL,
  decided_at TEXT NOT NULL,
  input_digest TEXT,
  PRIMARY KEY (job_id, request_position)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS approval_ledger_unsealed (
  job_id TEXT NOT NULL,
  request_position INTEGER NOT NULL,
  PRIMARY KEY (job_id, request_position)
) WITHOUT ROWID;
`;

/** Version 4 kept no input digest in the ledger; its entries are sealed by the next checkpoint. */
export const MIGRATE_4_TO_5 = `
ALTER TABLE approval_ledger ADD COLUMN input_digest TEXT;
INSERT INTO approval_ledger_unsealed (job_id, request_position)
  SELECT job_id, request_position FROM approval_ledger;
`;

/** Version 6: the owner of each queued or executing job, from the job_owners of version 5. */
export const MIGRATE_OWNERS = `
UPDATE jobs SET owner = (SELECT o.owner FROM job_owners o WHERE o.job_id = jobs.id)
  WHERE status IN ('queued', 'executing');
`;

export const LEDGER_COLUMNS =
  'job_id, request_position, step_id, input_digest, request_hash, decision, decided_at';

/** Rewrites the raw text columns of version 1 as JSON text (json_quote = JSON.stringify here). */
export const MIGRATE_1_TO_2 = `
UPDATE jobs SET goal = json_quote(goal);
UPDATE job_steps SET capability = json_quote(capability);
`;

/** Steps and events recorded before version 3 have no decision and no hash (NULL). */
export const MIGRATE_2_TO_3 = `
ALTER TABLE job_steps ADD COLUMN decision TEXT;
ALTER TABLE job_events ADD COLUMN hash TEXT;
`;

export const SCHEMA = `
CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS jobs (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  status TEXT NOT NULL,
  goal TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  fixed TEXT NOT NULL,
  state TEXT NOT NULL,
  owner TEXT
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
  decision TEXT,
  PRIMARY KEY (job_seq, position)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS job_steps_by_capability ON job_steps (capability, job_seq);
CREATE TABLE IF NOT EXISTS job_events (
  job_seq INTEGER NOT NULL REFERENCES jobs (seq),
  position INTEGER NOT NULL,
  event TEXT NOT NULL,
  hash TEXT,
  PRIMARY KEY (job_seq, position)
) WITHOUT ROWID;
`;

/**
 * Store checkpoints (record/checkpoint.ts), created on open in any schema version: a database
 * written before them gains checkpoints from then on. A trigger marks each job whose events grow,
 * in the writing transaction (so a crash between a commit and its checkpoint loses no mark); the
 * next seal takes the marks.
 */
export const CHECKPOINT_SCHEMA = `
CREATE TABLE IF NOT EXISTS checkpoints (
  seq INTEGER PRIMARY KEY,
  previous TEXT NOT NULL,
  root TEXT NOT NULL,
  events INTEGER NOT NULL,
  at TEXT NOT NULL,
  hash TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS checkpoint_entries (
  checkpoint INTEGER NOT NULL REFERENCES checkpoints (seq),
  job_id TEXT NOT NULL,
  events INTEGER NOT NULL,
  hash TEXT NOT NULL,
  PRIMARY KEY (checkpoint, job_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS checkpoint_entries_by_job ON checkpoint_entries (job_id, checkpoint);
CREATE TABLE IF NOT EXISTS checkpoint_unsealed (job_seq INTEGER PRIMARY KEY);
CREATE TABLE IF NOT EXISTS checkpoint_approvals (
  checkpoint INTEGER NOT NULL REFERENCES checkpoints (seq),
  job_id TEXT NOT NULL,
  request_position INTEGER NOT NULL,
  hash TEXT NOT NULL,
  PRIMARY KEY (job_id, request_position)
) WITHOUT ROWID;
CREATE TRIGGER IF NOT EXISTS job_events_unsealed AFTER INSERT ON job_events
BEGIN
  INSERT OR IGNORE INTO checkpoint_unsealed (job_seq) VALUES (NEW.job_seq);
END;
CREATE TABLE IF NOT EXISTS chain_origin (checkpoint INTEGER NOT NULL);
`;

/**
 * The jobs recorded before the event chain (schema version 1 or 2), with their numbers of events,
 * for the store's chain origin (record/checkpoint.ts): no event with a hash, and created before the
 * first job whose first event has one (a store migrated from version 2 chains every job it creates
 * after). A store created with chains has none.
 */
export const UNCHAINED_JOBS = `
SELECT j.id, count(*) FROM jobs j JOIN job_events e ON e.job_seq = j.seq
WHERE j.seq > 0 AND j.seq < coalesce((SELECT f.job_seq FROM job_events f
  WHERE f.position = 0 AND f.hash IS NOT NULL ORDER BY f.job_seq LIMIT 1), 9223372036854775807)
GROUP BY j.seq HAVING count(e.hash) = 0 ORDER BY j.seq`;

/**
 * Each marked job's id, the position and hash of its last event (NULL when it has none: sealed as
 * such, record/checkpoint.ts), and the events and hash of its last checkpoint entry (NULL for a job
 * no checkpoint holds yet). CROSS JOIN fixes the order: from the marks to each job's last event by
 * key. Left to the planner (the file has no statistics) it scanned every row of job_events on
 * each seal, a cost growing with the store. The last entry is found by key in the same
 * statement: asked for apart, with the ids as a JSON array, it was an eighth of a seal's time.
 */
export const UNSEALED_HEADS = `
SELECT j.id, e.position, e.hash, c.events, c.hash FROM checkpoint_unsealed u
CROSS JOIN jobs j ON j.seq = u.job_seq
CROSS JOIN job_events e ON e.job_seq = u.job_seq
  AND e.position = (SELECT max(position) FROM job_events WHERE job_seq = u.job_seq)
LEFT JOIN checkpoint_entries c ON c.job_id = j.id
  AND c.checkpoint = (SELECT max(checkpoint) FROM checkpoint_entries WHERE job_id = j.id)`;

export const CHECKPOINT_COLUMNS = 'seq, previous, root, events, at, hash';

/** The statements of a seal (prepared on the first). */
export interface SealStatements {
  readonly unsealed: Sqlite.Statement;
  readonly head: Sqlite.Statement;
  readonly insertCheckpoint: Sqlite.Statement;
  readonly insertEntry: Sqlite.Statement;
  readonly clear: Sqlite.Statement;
  readonly unsealedApprovals: Sqlite.Statement;
  readonly insertApprovals: Sqlite.Statement;
  readonly clearApprovals: Sqlite.Statement;
}

export type LedgerRow = [
  jobId: string,
  position: number,
  stepId: string,
  inputDigest: string | null,
  requestHash: string | null,
  decision: string,
  at: string,
];

export function ledgerEntry(row: LedgerRow): LedgerEntry {
  const [jobId, position, stepId, inputDigest, requestHash, decision, at] = row;
  return { jobId, position, stepId, inputDigest, requestHash, decision, at };
}

/**
 * Cancel requests (docs/api.md, "runtime.cancelJob"): one row per cancelled job, written by any
 * process on the file and polled by the one running the job; idempotency claims, one row per
 * caller scope and key. Tables of their own, created when missing, so files of earlier versions
 * gain them without a schema version step.
 */
export const CANCEL_SCHEMA = `
CREATE TABLE IF NOT EXISTS job_cancels (
  job_id TEXT PRIMARY KEY,
  request TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS job_idempotency (
  scope TEXT NOT NULL,
  key TEXT NOT NULL,
  job_id TEXT NOT NULL,
  digest TEXT NOT NULL,
  expires_at INTEGER NOT NULL,
  PRIMARY KEY (scope, key)
) WITHOUT ROWID;
`;

/**
 * Job owners (docs/api.md, "Recovery"): which owner (one per store opened,
 * stores/shared/owner-identity.ts) has each queued or executing job (the `owner` column of its row,
 * schema version 6), and the process each owner lives in (a table of its own, created when
 * missing). A job's owner is written by the very statement that makes it queued or executing: its
 * creation, or the decision that resumes it after an approval (INSERT_JOB, UPDATE_JOB); and cleared
 * by the one that makes it neither (it ends, or waits for an approval).
 */
export const OWNER_SCHEMA = `
CREATE TABLE IF NOT EXISTS runtime_owners (
  owner TEXT PRIMARY KEY,
  process TEXT NOT NULL,
  at TEXT NOT NULL
) WITHOUT ROWID;
`;
