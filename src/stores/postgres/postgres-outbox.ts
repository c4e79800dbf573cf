import type pg from 'pg';
import type { Job, JobEvent } from '../../jobs/job.js';
import type {
  JobStoreOutbox,
  OutboxEntry,
  OutboxRecord,
  OutboxStatus,
  OutboxWriter,
} from '../../jobs/job-store.js';

/**
 * The notification outbox (docs/api.md, "Notifications"): created when notifications are first
 * attached (under the store's schema lock, so processes that start together do not race on
 * `CREATE TABLE`), so a database without them has no such table and a write nothing more.
 */
const OUTBOX_SCHEMA = `
CREATE TABLE IF NOT EXISTS warrant_notification_outbox (
  seq BIGSERIAL PRIMARY KEY,
  id TEXT NOT NULL,
  destination TEXT NOT NULL,
  job_id TEXT NOT NULL,
  type TEXT NOT NULL,
  at TEXT NOT NULL,
  body TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'pending',
  attempts INTEGER NOT NULL DEFAULT 0,
  next_at BIGINT NOT NULL DEFAULT 0,
  leased_until BIGINT NOT NULL DEFAULT 0,
  error TEXT
);
CREATE INDEX IF NOT EXISTS warrant_notification_outbox_pending
  ON warrant_notification_outbox (status, destination, job_id, seq);`;

const TABLE_EXISTS = "SELECT to_regclass('warrant_notification_outbox') IS NOT NULL AS present";

/** The number of values outboxRows takes. */
export const OUTBOX_VALUES = 8;

/**
 * Common table expressions that write the outbox rows of a statement's changes, after a CTE
 * `written (id, ...)` of the jobs the statement wrote (a row of a job not written is not
 * inserted), with values `$first`.. (outboxValues): the entries as columns, the bound of pending
 * rows per destination and the error of a dropped row. The bound holds in the same statement:
 * of a destination's pending rows (those already stored and the new ones, all newer) the oldest
 * beyond the bound are dropped, new ones inserted as dropped at once. The statement's CTEs all
 * see one snapshot, so a new row is never updated by it, only inserted with its status.
 */
export function outboxRows(first: number): string {
  const [ids, destinations, jobs, types, ats, bodies, bound, dropped] = Array.from(
    { length: OUTBOX_VALUES },
    (_, index) => `$${first + index}`,
  );
  return `new_outbox AS (
  SELECT o.id, o.destination, o.job_id, o.type, o.at, o.body, o.n,
    row_number() OVER (PARTITION BY o.destination ORDER BY o.n DESC) AS newer
  FROM unnest(${ids}::text[], ${destinations}::text[], ${jobs}::text[], ${types}::text[],
    ${ats}::text[], ${bodies}::text[]) WITH ORDINALITY AS o (id, destination, job_id, type, at, body, n)
  JOIN written w ON w.id = o.job_id
), outbox AS (
  INSERT INTO warrant_notification_outbox (id, destination, job_id, type, at, body, status, error)
  SELECT id, destination, job_id, type, at, body,
    CASE WHEN newer > ${bound}::int THEN 'dropped' ELSE 'pending' END,
    CASE WHEN newer > ${bound}::int THEN ${dropped}::text END
  FROM new_outbox ORDER BY n
), outbox_dropped AS (
  UPDATE warrant_notification_outbox SET status = 'dropped', error = ${dropped}::text
  WHERE seq IN (
    SELECT s.seq FROM (
      SELECT seq, destination,
        row_number() OVER (PARTITION BY destination ORDER BY seq DESC) AS newer
      FROM warrant_notification_outbox
      WHERE status = 'pending' AND destination IN (SELECT destination FROM new_outbox)
    ) s JOIN (SELECT destination, count(*) AS added FROM new_outbox GROUP BY destination) c
      ON c.destination = s.destination
    WHERE s.newer + c.added > ${bound}::int)
)`;
}

/** The outbox rows of a change consuming an approval, inside its transaction (one job). */
const WRITE_OUTBOX = `
WITH written AS (SELECT id FROM warrant_jobs WHERE id = $1), ${outboxRows(2)}
SELECT 1`;

const COLUMNS = `seq, id, destination, job_id AS "jobId", type, at, body, status, attempts,
  next_at AS "nextAt", error`;

interface Row {
  seq: string;
  id: string;
  destination: string;
  jobId: string;
  type: string;
  at: string;
  body: string;
  status: OutboxStatus;
  attempts: number;
  nextAt: string;
  error: string | null;
}

/** A row as read: BIGINT columns come back as text from `pg`. */
function recordOf(row: Row): OutboxRecord {
  const { seq, nextAt, error, ...rest } = row;
  const record = { ...rest, seq: Number(seq), nextAt: Number(nextAt) };
  return error === null ? record : { ...record, error };
}

/**
 * Claims due rows across processes: the candidates are locked `FOR UPDATE SKIP LOCKED`, so a
 * row another transaction is claiming is skipped, and one claimed and committed meanwhile fails
 * the lease condition when PostgreSQL checks it again on its newest version; each row therefore
 * goes to one claim. Of each job and destination only the oldest pending row is a candidate: a
 * job's notifications go out in order, each after the one before it was delivered or given up.
 */
const claimSql = (and: string) => `
UPDATE warrant_notification_outbox SET attempts = attempts + 1, leased_until = $1
WHERE seq IN (
  SELECT o.seq FROM warrant_notification_outbox o
  WHERE o.status = 'pending' AND o.next_at <= $2 AND o.leased_until <= $2 ${and}
    AND NOT EXISTS (SELECT 1 FROM warrant_notification_outbox p WHERE p.status = 'pending'
      AND p.destination = o.destination AND p.job_id = o.job_id AND p.seq < o.seq)
  ORDER BY o.seq LIMIT $3
  FOR UPDATE SKIP LOCKED)
RETURNING ${COLUMNS}`;
const CLAIM = claimSql('');
/** CLAIM narrowed to one destination (`$4`). */
const CLAIM_FOR = claimSql('AND o.destination = $4');

const DELIVERED = "DELETE FROM warrant_notification_outbox WHERE seq = $1 AND status = 'pending'";
const RETRY = `UPDATE warrant_notification_outbox SET error = $2, next_at = $3, leased_until = 0
WHERE seq = $1 AND status = 'pending'`;
const FAILED = `UPDATE warrant_notification_outbox SET status = 'failed', error = $2, leased_until = 0
WHERE seq = $1 AND status = 'pending'`;
const LIST = `SELECT ${COLUMNS} FROM warrant_notification_outbox WHERE seq > $2 ORDER BY seq LIMIT $1`;

/**
 * The PostgreSQL store's outbox: rows written by the store in the very statement (or
 * transaction) of the change that causes them, claimed atomically across processes.
 */
export class PostgresOutbox implements JobStoreOutbox {
  readonly #pool: pg.Pool;
  /** The store's schema, created or checked (and its advisory lock's key). */
  readonly #storeReady: () => Promise<void>;
  readonly #schemaLock: number;
  #writer: OutboxWriter | undefined;
  #table: Promise<void> | undefined;

  constructor(pool: pg.Pool, storeReady: () => Promise<void>, schemaLock: number) {
    this.#pool = pool;
    this.#storeReady = storeReady;
    this.#schemaLock = schemaLock;
  }

  /** True once notifications are attached: the store's changes then carry outbox rows. */
  get attached(): boolean {
    return this.#writer !== undefined;
  }

  attachOutbox(writer: OutboxWriter): void {
    this.#writer = writer;
    // Created now, not at the first write; a failure is reported by the write that waits for it.
    this.ready().catch(() => {});
  }

  /** Resolves once the table exists; a failure is tried again on the next call. */
  ready(): Promise<void> {
    this.#table ??= this.#createTable().catch((error: unknown) => {
      this.#table = undefined;
      throw error;
    });
    return this.#table;
  }

  async #createTable(): Promise<void> {
    await this.#storeReady();
    const client = await this.#pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock($1)', [this.#schemaLock]);
      // No DDL when it is there (CREATE INDEX IF NOT EXISTS would still lock the table).
      const { rows } = await client.query<{ present: boolean }>(TABLE_EXISTS);
      if (rows[0]?.present !== true) await client.query(OUTBOX_SCHEMA);
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }

  /** The entries a change's events cause; undefined (at no cost) without notifications. */
  entriesOf(job: Job, events: readonly JobEvent[]): readonly OutboxEntry[] | undefined {
    const entries = this.#writer?.entries(job, events);
    return entries === undefined || entries.length === 0 ? undefined : entries;
  }

  /** outboxRows' values for `entries`. */
  values(entries: readonly OutboxEntry[]): unknown[] {
    const maxPending = (this.#writer as OutboxWriter).maxPending;
    return [
      entries.map((entry) => entry.id),
      entries.map((entry) => entry.destination),
      entries.map((entry) => entry.jobId),
      entries.map((entry) => entry.type),
      entries.map((entry) => entry.at),
      entries.map((entry) => entry.body),
      maxPending,
      `dropped: more than ${maxPending} notifications pending for this destination`,
    ];
  }

  /** Inside the transaction of a change of job `jobId`: writes its entries. */
  async writeIn(client: pg.PoolClient, jobId: string, entries: readonly OutboxEntry[]) {
    await client.query({
      name: 'warrant_write_outbox',
      text: WRITE_OUTBOX,
      values: [jobId, ...this.values(entries)],
    });
  }

  /** After a commit that wrote rows: wakes the deliverer. */
  written(): void {
    this.#writer?.written();
  }

  async claimNotifications(
    now: number,
    leaseMs: number,
    limit: number,
    destination?: string,
  ): Promise<OutboxRecord[]> {
    if (this.#writer === undefined) return [];
    await this.ready();
    const { rows } = await this.#pool.query<Row>(
      destination === undefined
        ? { name: 'warrant_claim_outbox', text: CLAIM, values: [now + leaseMs, now, limit] }
        : {
            name: 'warrant_claim_outbox_for',
            text: CLAIM_FOR,
            values: [now + leaseMs, now, limit, destination],
          },
    );
    return rows.map(recordOf).sort((a, b) => a.seq - b.seq);
  }

  async settleNotification(
    seq: number,
    outcome: { delivered: true } | { delivered: false; error: string; nextAt?: number },
  ): Promise<void> {
    if (this.#writer === undefined) return;
    if (outcome.delivered) await this.#pool.query(DELIVERED, [seq]);
    else if (outcome.nextAt === undefined) await this.#pool.query(FAILED, [seq, outcome.error]);
    else await this.#pool.query(RETRY, [seq, outcome.error, outcome.nextAt]);
  }

  async listNotifications(limit: number, after = 0): Promise<OutboxRecord[]> {
    if (this.#writer === undefined) {
      // A process without notifications (`warrant notifications`) reads what others wrote.
      await this.#storeReady();
      const { rows } = await this.#pool.query<{ present: boolean }>(TABLE_EXISTS);
      if (rows[0]?.present !== true) return [];
    } else {
      await this.ready();
    }
    const { rows } = await this.#pool.query<Row>(LIST, [limit, after]);
    return rows.map(recordOf);
  }
}
