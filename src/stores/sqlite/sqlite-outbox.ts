import type Sqlite from 'better-sqlite3';
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
 * attached, so a store without them has no such table and writes nothing more.
 */
const OUTBOX_SCHEMA = `
CREATE TABLE IF NOT EXISTS notification_outbox (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL,
  destination TEXT NOT NULL,
  job_id TEXT NOT NULL,
  type TEXT NOT NULL,
  at TEXT NOT NULL,
  body TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'pending',
  attempts INTEGER NOT NULL DEFAULT 0,
  next_at INTEGER NOT NULL DEFAULT 0,
  leased_until INTEGER NOT NULL DEFAULT 0,
  error TEXT
);
CREATE INDEX IF NOT EXISTS notification_outbox_pending
  ON notification_outbox (status, destination, job_id, seq);
`;

const COLUMNS = 'seq, id, destination, job_id, type, at, body, status, attempts, next_at, error';
type Row = [
  seq: number,
  id: string,
  destination: string,
  jobId: string,
  type: string,
  at: string,
  body: string,
  status: OutboxStatus,
  attempts: number,
  nextAt: number,
  error: string | null,
];

function recordOf(row: Row): OutboxRecord {
  const [seq, id, destination, jobId, type, at, body, status, attempts, nextAt, error] = row;
  const record = { seq, id, destination, jobId, type, at, body, status, attempts, nextAt };
  return error === null ? record : { ...record, error };
}

interface Statements {
  readonly insert: Sqlite.Statement;
  readonly drop: Sqlite.Statement;
  readonly claim: Sqlite.Statement;
  readonly claimFor: Sqlite.Statement;
  readonly delivered: Sqlite.Statement;
  readonly retry: Sqlite.Statement;
  readonly failed: Sqlite.Statement;
  readonly list: Sqlite.Statement;
}

/**
 * Claims due rows (`and` narrows them: to one destination). Of each job and destination only the
 * oldest pending row: a job's notifications go out in order, each after the one before it was
 * delivered or given up.
 */
function claimSql(and: string): string {
  return `UPDATE notification_outbox SET attempts = attempts + 1, leased_until = ? WHERE seq IN (
    SELECT o.seq FROM notification_outbox o
    WHERE o.status = 'pending' AND o.next_at <= ? AND o.leased_until <= ? ${and}
      AND NOT EXISTS (SELECT 1 FROM notification_outbox p WHERE p.status = 'pending'
        AND p.destination = o.destination AND p.job_id = o.job_id AND p.seq < o.seq)
    ORDER BY o.seq LIMIT ?)
  RETURNING ${COLUMNS}`;
}

/**
 * The SQLite store's outbox: rows written by the store inside the transaction of the change
 * that causes them (`write`), claimed by one conditional UPDATE (SQLite runs one writer at a
 * time, so of processes sharing the file one alone claims a row).
 */
export class SqliteOutbox implements JobStoreOutbox {
  readonly #db: Sqlite.Database;
  #writer: OutboxWriter | undefined;
  #statements: Statements | undefined;

  constructor(db: Sqlite.Database) {
    this.#db = db;
  }

  attachOutbox(writer: OutboxWriter): void {
    this.#statements ??= this.#prepare();
    this.#writer = writer;
  }

  /** The entries a change's events cause; undefined (at no cost) without notifications. */
  entriesOf(job: Job, events: readonly JobEvent[]): readonly OutboxEntry[] | undefined {
    const entries = this.#writer?.entries(job, events);
    return entries === undefined || entries.length === 0 ? undefined : entries;
  }

  /** Inside the change's transaction: inserts the entries, then drops what exceeds the bound. */
  write(entries: readonly OutboxEntry[]): void {
    const statements = this.#statements as Statements;
    const writer = this.#writer as OutboxWriter;
    const destinations = new Set<string>();
    for (const entry of entries) {
      statements.insert.run(
        entry.id,
        entry.destination,
        entry.jobId,
        entry.type,
        entry.at,
        entry.body,
      );
      destinations.add(entry.destination);
    }
    for (const destination of destinations)
      statements.drop.run(
        `dropped: more than ${writer.maxPending} notifications pending for this destination`,
        destination,
        writer.maxPending,
      );
    // The deliverer wakes on a later turn, once this transaction has committed.
    writer.written();
  }

  claimNotifications(
    now: number,
    leaseMs: number,
    limit: number,
    destination?: string,
  ): OutboxRecord[] {
    const statements = this.#statements;
    if (statements === undefined) return [];
    const rows = (
      destination === undefined
        ? statements.claim.all(now + leaseMs, now, now, limit)
        : statements.claimFor.all(now + leaseMs, now, now, destination, limit)
    ) as Row[];
    return rows.map(recordOf).sort((a, b) => a.seq - b.seq);
  }

  settleNotification(
    seq: number,
    outcome: { delivered: true } | { delivered: false; error: string; nextAt?: number },
  ): void {
    const statements = this.#statements;
    if (statements === undefined) return;
    if (outcome.delivered) statements.delivered.run(seq);
    else if (outcome.nextAt === undefined) statements.failed.run(outcome.error, seq);
    else statements.retry.run(outcome.error, outcome.nextAt, seq);
  }

  listNotifications(limit: number, after = 0): OutboxRecord[] {
    let list = this.#statements?.list;
    if (list === undefined) {
      // A process without notifications (`warrant notifications`) reads what others wrote.
      const exists = this.#db
        .prepare(
          "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'notification_outbox'",
        )
        .get();
      if (exists === undefined) return [];
      list = this.#db
        .prepare(`SELECT ${COLUMNS} FROM notification_outbox WHERE seq > ? ORDER BY seq LIMIT ?`)
        .raw();
    }
    return (list.all(after, limit) as Row[]).map(recordOf);
  }

  #prepare(): Statements {
    const db = this.#db;
    db.exec(OUTBOX_SCHEMA);
    return {
      insert: db.prepare(
        'INSERT INTO notification_outbox (id, destination, job_id, type, at, body) VALUES (?, ?, ?, ?, ?, ?)',
      ),
      drop: db.prepare(
        `UPDATE notification_outbox SET status = 'dropped', error = ? WHERE seq IN (
           SELECT seq FROM notification_outbox WHERE destination = ? AND status = 'pending'
           ORDER BY seq DESC LIMIT -1 OFFSET ?)`,
      ),
      claim: db.prepare(claimSql('')).raw(),
      claimFor: db.prepare(claimSql('AND o.destination = ?')).raw(),
      delivered: db.prepare("DELETE FROM notification_outbox WHERE seq = ? AND status = 'pending'"),
      retry: db.prepare(
        "UPDATE notification_outbox SET error = ?, next_at = ?, leased_until = 0 WHERE seq = ? AND status = 'pending'",
      ),
      failed: db.prepare(
        "UPDATE notification_outbox SET status = 'failed', error = ?, leased_until = 0 WHERE seq = ? AND status = 'pending'",
      ),
      list: db
        .prepare(`SELECT ${COLUMNS} FROM notification_outbox WHERE seq > ? ORDER BY seq LIMIT ?`)
        .raw(),
    };
  }
}
