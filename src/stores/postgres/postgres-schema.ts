/**
 * The PostgreSQL store's schema (docs/guide/stores.md, "PostgreSQL"): its tables, their
 * migrations and version, created on first use under an advisory lock; the statements of the
 * owners, the ledger of consumed approvals and the checkpoints (postgres-store.ts uses them).
 */
import type pg from 'pg';
import type { Checkpoint, CheckpointEntry, LedgerEntry } from '../../jobs/job-store.js';
import { originCheckpoint } from '../../record/checkpoint.js';

/**
 * Schema version this code writes; a database with a newer one is refused. Version 2 holds the
 * step's capability as JSON text, like the goal (version 1 held it raw: U+0000 failed the write
 * and a lone surrogate came back as U+FFFD). Version 3 adds the decision record: each step's
 * decision and input as authorized, and each event's chain hash. Older databases are migrated
 * on first use: what they recorded stays readable, with no decisions and no hashes (NULL), and
 * such a job verifies as having no chain. Version 4 adds the ledger of consumed approvals
 * (stores/shared/approval-ledger.ts), empty at migration. Version 5 seals the ledger in the
 * checkpoints: each entry keeps the input digest decided on, and waits marked for the next
 * checkpoint (the entries of a version 4 database are marked at migration).
 */
export const POSTGRES_SCHEMA_VERSION = 5;

/**
 * The ledger of consumed approvals (stores/shared/approval-ledger.ts): created with the schema, or
 * by version 4.
 */
export const APPROVAL_LEDGER = `
CREATE TABLE IF NOT EXISTS warrant_approval_ledger (
  job_id TEXT NOT NULL,
  request_position INTEGER NOT NULL,
  step_id TEXT NOT NULL,
  request_hash TEXT,
  decision TEXT NOT NULL,
  decided_at TEXT NOT NULL,
  input_digest TEXT,
  PRIMARY KEY (job_id, request_position)
);
CREATE TABLE IF NOT EXISTS warrant_approval_ledger_unsealed (
  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  job_id TEXT NOT NULL,
  request_position INTEGER NOT NULL
);
`;

/** Version 4 kept no input digest in the ledger; its entries are sealed by the next checkpoint. */
export const MIGRATE_4_TO_5 = `
ALTER TABLE warrant_approval_ledger ADD COLUMN input_digest TEXT;
INSERT INTO warrant_approval_ledger_unsealed (job_id, request_position)
  SELECT job_id, request_position FROM warrant_approval_ledger;
`;

export const LEDGER_COLUMNS =
  'job_id, request_position, step_id, input_digest, request_hash, decision, decided_at';

/** A ledger row as read: LEDGER_COLUMNS. */
export interface LedgerRow {
  readonly job_id: string;
  readonly request_position: number;
  readonly step_id: string;
  readonly input_digest: string | null;
  readonly request_hash: string | null;
  readonly decision: string;
  readonly decided_at: string;
}

export function ledgerEntry(row: LedgerRow): LedgerEntry {
  return {
    jobId: row.job_id,
    position: row.request_position,
    stepId: row.step_id,
    inputDigest: row.input_digest,
    requestHash: row.request_hash,
    decision: row.decision,
    at: row.decided_at,
  };
}

/** A job's events with their hashes, in order: where the consuming write finds the request. */
export const REQUEST_EVENTS = `
SELECT e.event, e.hash FROM warrant_job_events e JOIN warrant_jobs j ON j.seq = e.job_seq
WHERE j.id = $1 ORDER BY e.position`;

/**
 * Enters a consumed request in the ledger, and marks it for the next checkpoint; no row when it
 * is there already (the insert is the claim: one decision on a request gets in, ever).
 */
export const CONSUME_REQUEST = `
WITH entered AS (
  INSERT INTO warrant_approval_ledger (${LEDGER_COLUMNS})
  VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING
  RETURNING job_id, request_position)
INSERT INTO warrant_approval_ledger_unsealed (job_id, request_position)
SELECT job_id, request_position FROM entered`;

/** The job's requests the ledger holds as consumed. */
export const CONSUMED_OF = `
SELECT request_position, step_id, decision FROM warrant_approval_ledger
WHERE job_id = $1 ORDER BY request_position`;

/** to_json(text)::text writes the JSON text JSON.stringify writes for any text PostgreSQL holds. */
export const MIGRATE_1_TO_2 = 'UPDATE warrant_job_steps SET capability = to_json(capability)::text';

/** Steps and events recorded before version 3 have no decision and no hash (NULL). */
export const MIGRATE_2_TO_3 = `
ALTER TABLE warrant_job_steps ADD COLUMN IF NOT EXISTS decision TEXT;
ALTER TABLE warrant_job_events ADD COLUMN IF NOT EXISTS hash TEXT;
`;

/** True when the database has the schema of this version already (nothing to create or migrate). */
export async function schemaIsCurrent(client: pg.PoolClient): Promise<boolean> {
  const { rows } = await client.query<{ present: boolean }>(
    "SELECT to_regclass('warrant_schema_version') IS NOT NULL AS present",
  );
  if (rows[0]?.present !== true) return false;
  const owners = await client.query<{ present: boolean }>(
    "SELECT to_regclass('warrant_owners') IS NOT NULL AS present",
  );
  if (owners.rows[0]?.present !== true) return false;
  // The store's chain origin is written with this table (markOrigin).
  const origin = await client.query<{ present: boolean }>(
    "SELECT to_regclass('warrant_chain_origin') IS NOT NULL AS present",
  );
  if (origin.rows[0]?.present !== true) return false;
  const version = await client.query<{ version: number }>(
    'SELECT version FROM warrant_schema_version',
  );
  return version.rows[0]?.version === POSTGRES_SCHEMA_VERSION;
}

/** Writes a checkpoint and its entries (one statement each) on `client`, inside its transaction. */
export async function insertCheckpoint(
  client: pg.ClientBase,
  checkpoint: Checkpoint,
  entries: readonly CheckpointEntry[],
): Promise<void> {
  await client.query(
    `INSERT INTO warrant_checkpoints (${CHECKPOINT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6)`,
    [
      checkpoint.seq,
      checkpoint.previous,
      checkpoint.root,
      checkpoint.events,
      checkpoint.at,
      checkpoint.hash,
    ],
  );
  await client.query(
    `INSERT INTO warrant_checkpoint_entries (checkpoint, job_id, events, hash)
     SELECT $1, * FROM unnest($2::text[], $3::int[], $4::text[])`,
    [
      checkpoint.seq,
      entries.map((entry) => entry.jobId),
      entries.map((entry) => entry.events),
      entries.map((entry) => entry.hash),
    ],
  );
}

/**
 * Writes the store's chain origin (record/checkpoint.ts) once: the jobs recorded before the event
 * chain, sealed as such, none in a store created with chains (docs/decisions.md, "Jobs without a
 * chain"). Run in the schema's transaction, under the checkpoint lock.
 */
export async function markOrigin(
  client: pg.PoolClient,
  auditKey: string | undefined,
): Promise<void> {
  const marked = await client.query('SELECT 1 FROM warrant_chain_origin LIMIT 1');
  if (marked.rows.length > 0) return;
  const unchained = await client.query<{ id: string; events: number }>(UNCHAINED_JOBS);
  const head = await client.query<{ seq: number; hash: string }>(
    'SELECT seq, hash FROM warrant_checkpoints ORDER BY seq DESC LIMIT 1',
  );
  const { checkpoint, entries } = originCheckpoint(
    head.rows[0],
    unchained.rows.map((row) => ({ jobId: row.id, events: row.events })),
    new Date().toISOString(),
    auditKey,
  );
  await insertCheckpoint(client, checkpoint, entries);
  await client.query('INSERT INTO warrant_chain_origin (checkpoint) VALUES ($1)', [checkpoint.seq]);
}

/** Arbitrary constant key of the advisory lock that serializes schema creation. */
export const SCHEMA_LOCK = 0x77617272; // "warr"

/**
 * Cancel requests and idempotency claims (docs/api.md, "Queued jobs and cancellation",
 * "Idempotency"): tables of their own, created when missing, with no schema version step.
 */
export const LIFE_SCHEMA = `
CREATE TABLE IF NOT EXISTS warrant_job_cancels (
  job_id TEXT PRIMARY KEY,
  request TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS warrant_idempotency (
  scope TEXT NOT NULL,
  key TEXT NOT NULL,
  job_id TEXT NOT NULL,
  digest TEXT NOT NULL,
  expires_at BIGINT NOT NULL,
  PRIMARY KEY (scope, key)
);
`;

/**
 * Claims a key unless a live claim holds it: the conditional upsert takes the row lock, so of
 * concurrent claims exactly one returns its row.
 */
export const CLAIM_KEY = `INSERT INTO warrant_idempotency (scope, key, job_id, digest, expires_at)
VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (scope, key) DO UPDATE SET job_id = excluded.job_id, digest = excluded.digest,
  expires_at = excluded.expires_at
WHERE warrant_idempotency.expires_at <= $6
RETURNING job_id`;

/**
 * Job owners (docs/api.md, "Recovery"): the owner (one per store opened) of each queued or
 * executing job, and each live owner's advisory lock key. A job's owner is set by a trigger in
 * the very statement that makes it queued or executing (its creation, or the decision that
 * resumes it after an approval), from the connection's `warrant.owner` setting, which this
 * store's pool sets on every connection it opens.
 */
export const OWNER_SCHEMA = `
CREATE TABLE IF NOT EXISTS warrant_job_owners (
  job_id TEXT PRIMARY KEY,
  owner TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS warrant_job_owners_by_owner ON warrant_job_owners (owner);
CREATE TABLE IF NOT EXISTS warrant_owners (
  owner TEXT PRIMARY KEY,
  lock_key BIGINT NOT NULL,
  at TEXT NOT NULL
);
CREATE OR REPLACE FUNCTION warrant_take_owner() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  me TEXT := current_setting('warrant.owner', true);
BEGIN
  IF me IS NOT NULL AND me <> '' AND NEW.status IN ('queued', 'executing')
      AND (TG_OP = 'INSERT' OR OLD.status NOT IN ('queued', 'executing')) THEN
    INSERT INTO warrant_job_owners (job_id, owner) VALUES (NEW.id, me)
      ON CONFLICT (job_id) DO UPDATE SET owner = excluded.owner;
  END IF;
  RETURN NULL;
END $$;
DO $$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgname = 'warrant_jobs_owner'
      AND tgrelid = 'warrant_jobs'::regclass) THEN
    CREATE TRIGGER warrant_jobs_owner AFTER INSERT OR UPDATE OF status ON warrant_jobs
      FOR EACH ROW EXECUTE FUNCTION warrant_take_owner();
  END IF;
END $$;
`;

/** The other owners of queued and executing jobs, with their lock keys (NULL: owner record gone). */
export const OWNERS_ELSEWHERE = `
SELECT DISTINCT o.owner, w.lock_key::text AS lock_key FROM warrant_job_owners o
  JOIN warrant_jobs j ON j.id = o.job_id
  LEFT JOIN warrant_owners w ON w.owner = o.owner
WHERE j.status IN ('queued', 'executing') AND o.owner <> $1`;

/**
 * Whether this session takes an owner's lock: then no live session holds it, and the owner is
 * gone (docs/api.md, "Recovery"). The caller gives it back.
 */
export async function tryOwnerLock(
  client: pg.PoolClient | pg.Client,
  key: string,
): Promise<boolean> {
  const tried = await client.query<{ locked: boolean }>(
    'SELECT pg_try_advisory_lock($1::bigint) AS locked',
    [key],
  );
  return tried.rows[0]?.locked === true;
}

/** Takes a gone owner's queued and executing jobs (conditional: still that owner's); oldest first. */
export const TAKE_JOBS = `
WITH taken AS (
  UPDATE warrant_job_owners SET owner = $1
  WHERE owner = $2 AND job_id IN (
    SELECT id FROM warrant_jobs WHERE status IN ('queued', 'executing'))
  RETURNING job_id
)
SELECT j.id FROM taken JOIN warrant_jobs j ON j.id = taken.job_id ORDER BY j.created_at, j.seq`;

/**
 * Takes those of a gone owner's jobs ($3) that are still its own and queued or executing (the
 * jobs a recovering runtime can admit, docs/api.md "Recovery"); oldest first.
 */
export const TAKE_SOME = `
WITH taken AS (
  UPDATE warrant_job_owners SET owner = $1
  WHERE owner = $2 AND job_id = ANY($3::text[]) AND job_id IN (
    SELECT id FROM warrant_jobs WHERE status IN ('queued', 'executing'))
  RETURNING job_id
)
SELECT j.id FROM taken JOIN warrant_jobs j ON j.id = taken.job_id ORDER BY j.created_at, j.seq`;

/** The queued and executing jobs of an owner. */
export const OWNED_BY = `
SELECT o.job_id AS id FROM warrant_job_owners o JOIN warrant_jobs j ON j.id = o.job_id
WHERE o.owner = $1 AND j.status IN ('queued', 'executing')`;

/**
 * Takes a queued job for owner $1, in one statement: its owner as read ($2 the job), then a
 * compare-and-swap from that owner (a job recorded before owners existed has no owner row: one
 * is inserted, and the row's key refuses a second taker). Under READ COMMITTED a taker that
 * waited for another's row lock finds the owner changed and takes nothing: of workers and
 * recoverers racing exactly one takes it. `owner` is the owner read (null: none, or the job is not
 * queued), `taken` whether this statement took it.
 */
export const TAKE_QUEUED = `
WITH current AS (
  SELECT j.id, o.owner FROM warrant_jobs j LEFT JOIN warrant_job_owners o ON o.job_id = j.id
  WHERE j.id = $2 AND j.status = 'queued'
), inserted AS (
  INSERT INTO warrant_job_owners (job_id, owner)
  SELECT id, $1 FROM current WHERE owner IS NULL
  ON CONFLICT (job_id) DO NOTHING
  RETURNING job_id
), updated AS (
  UPDATE warrant_job_owners o SET owner = $1 FROM current c, warrant_jobs j
  WHERE o.job_id = c.id AND o.owner = c.owner AND c.owner <> $1
    AND j.id = o.job_id AND j.status = 'queued'
  RETURNING o.job_id
)
SELECT (SELECT owner FROM current) AS owner, EXISTS (SELECT 1 FROM current) AS queued,
  EXISTS (SELECT 1 FROM inserted UNION ALL SELECT 1 FROM updated) AS taken`;

/** pg's Client has ref() and unref() (its pool uses them); its types do not declare them. */
export type RefClient = pg.Client & { ref(): void; unref(): void };

/** The advisory lock key of an owner: the first 64 bits of its random id, as a signed bigint. */
export function lockKeyOf(owner: string): string {
  const hex = owner
    .replace(/^owner-/, '')
    .slice(0, 16)
    .padEnd(16, '0');
  return BigInt.asIntN(64, BigInt(`0x${hex}`)).toString();
}

export const SCHEMA = `
CREATE TABLE IF NOT EXISTS warrant_schema_version (version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS warrant_jobs (
  seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  status TEXT NOT NULL,
  goal TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  fixed TEXT NOT NULL,
  state TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS warrant_jobs_by_creation ON warrant_jobs (created_at, seq);
CREATE INDEX IF NOT EXISTS warrant_jobs_by_status ON warrant_jobs (status, created_at, seq);
CREATE INDEX IF NOT EXISTS warrant_jobs_by_goal ON warrant_jobs (goal, created_at, seq);
CREATE TABLE IF NOT EXISTS warrant_job_steps (
  job_seq BIGINT NOT NULL REFERENCES warrant_jobs (seq),
  position INTEGER NOT NULL,
  capability TEXT NOT NULL,
  status TEXT NOT NULL,
  fixed TEXT NOT NULL,
  state TEXT NOT NULL,
  decision TEXT,
  PRIMARY KEY (job_seq, position)
);
CREATE INDEX IF NOT EXISTS warrant_job_steps_by_capability ON warrant_job_steps (capability, job_seq);
CREATE TABLE IF NOT EXISTS warrant_job_events (
  job_seq BIGINT NOT NULL REFERENCES warrant_jobs (seq),
  position INTEGER NOT NULL,
  event TEXT NOT NULL,
  hash TEXT,
  PRIMARY KEY (job_seq, position)
);
`;

/**
 * Store checkpoints (record/checkpoint.ts), created on first use in any schema version: a database
 * written before them gains checkpoints from then on. A statement-level trigger marks the jobs
 * whose events grow, in the writing statement (one insert per statement, not per event), so a
 * crash between a commit and its checkpoint loses no mark; the next seal takes the marks.
 */
export const CHECKPOINT_SCHEMA = `
CREATE TABLE IF NOT EXISTS warrant_checkpoints (
  seq INTEGER PRIMARY KEY,
  previous TEXT NOT NULL,
  root TEXT NOT NULL,
  events INTEGER NOT NULL,
  at TEXT NOT NULL,
  hash TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS warrant_checkpoint_entries (
  checkpoint INTEGER NOT NULL REFERENCES warrant_checkpoints (seq),
  job_id TEXT NOT NULL,
  events INTEGER NOT NULL,
  hash TEXT NOT NULL,
  PRIMARY KEY (checkpoint, job_id)
);
CREATE INDEX IF NOT EXISTS warrant_checkpoint_entries_by_job
  ON warrant_checkpoint_entries (job_id, checkpoint);
CREATE TABLE IF NOT EXISTS warrant_checkpoint_approvals (
  checkpoint INTEGER NOT NULL REFERENCES warrant_checkpoints (seq),
  job_id TEXT NOT NULL,
  request_position INTEGER NOT NULL,
  hash TEXT NOT NULL,
  PRIMARY KEY (job_id, request_position)
);
CREATE TABLE IF NOT EXISTS warrant_checkpoint_unsealed (
  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  job_seq BIGINT NOT NULL
);
CREATE OR REPLACE FUNCTION warrant_mark_unsealed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO warrant_checkpoint_unsealed (job_seq) SELECT DISTINCT job_seq FROM warrant_added_events;
  RETURN NULL;
END $$;
DO $$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgname = 'warrant_job_events_unsealed'
      AND tgrelid = 'warrant_job_events'::regclass) THEN
    CREATE TRIGGER warrant_job_events_unsealed AFTER INSERT ON warrant_job_events
      REFERENCING NEW TABLE AS warrant_added_events
      FOR EACH STATEMENT EXECUTE FUNCTION warrant_mark_unsealed();
  END IF;
END $$;
CREATE TABLE IF NOT EXISTS warrant_chain_origin (checkpoint INTEGER NOT NULL);
`;

/**
 * The jobs recorded before the event chain (schema version 1 or 2), with their numbers of events,
 * for the store's chain origin (record/checkpoint.ts): no event with a hash, and created before the
 * first job whose first event has one (a database migrated from version 2 chains every job it
 * creates after). A store created with chains has none.
 */
export const UNCHAINED_JOBS = `
SELECT j.id, count(*)::int AS events FROM warrant_jobs j
JOIN warrant_job_events e ON e.job_seq = j.seq
WHERE j.seq > 0 AND j.seq < coalesce((SELECT f.job_seq FROM warrant_job_events f
  WHERE f.position = 0 AND f.hash IS NOT NULL ORDER BY f.job_seq LIMIT 1), 9223372036854775807)
GROUP BY j.seq, j.id HAVING count(e.hash) = 0 ORDER BY j.seq`;

/** Arbitrary constant key of the advisory lock that serializes sealing across processes. */
export const CHECKPOINT_LOCK = 0x7365616c; // "seal"

/**
 * The marked jobs (by the marks' ids): each one's id, and the position and hash of its last event
 * (NULL when it has none: sealed as such, record/checkpoint.ts).
 */
export const UNSEALED_HEADS = `
SELECT j.id, e.position, e.hash
FROM (SELECT DISTINCT job_seq FROM warrant_checkpoint_unsealed WHERE id = ANY($1::bigint[])) u
JOIN warrant_jobs j ON j.seq = u.job_seq
JOIN LATERAL (SELECT position, hash FROM warrant_job_events WHERE job_seq = u.job_seq
  ORDER BY position DESC LIMIT 1) e ON true`;

export const CHECKPOINT_COLUMNS = 'seq, previous, root, events, at, hash';

export const SEALED_APPROVAL_COLUMNS =
  'checkpoint, job_id AS "jobId", request_position AS position, hash';
