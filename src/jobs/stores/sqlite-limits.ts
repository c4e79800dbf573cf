import type Sqlite from 'better-sqlite3';
import type { LimitCounter, LimitTake, LimitVerdict } from '../job-store.js';

/**
 * Limit counters (docs/api.md, "Limits"): one row per counted invocation, its time and amount,
 * so a counter is a sliding window over recorded times. A table of its own, created when first
 * used. Rows a counter's window no longer holds are deleted whenever that counter is taken.
 */
const LIMITS_SCHEMA = `
CREATE TABLE IF NOT EXISTS limit_usage (
  name TEXT NOT NULL,
  key TEXT NOT NULL,
  at INTEGER NOT NULL,
  amount REAL NOT NULL,
  window_ms INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS limit_usage_by_counter ON limit_usage (name, key, at);
`;

interface Statements {
  readonly expire: Sqlite.Statement;
  readonly used: Sqlite.Statement;
  readonly insert: Sqlite.Statement;
  readonly counters: Sqlite.Statement;
  readonly take: Sqlite.Transaction<(takes: readonly LimitTake[], at: number) => LimitVerdict>;
}

/**
 * The SQLite store's limit counters: a take is one IMMEDIATE transaction (the write lock is held
 * from the first read), so of processes sharing the file one counts at a time and none sees a
 * count another is about to raise.
 */
export class SqliteLimits {
  readonly #db: Sqlite.Database;
  #statements: Statements | undefined;

  constructor(db: Sqlite.Database) {
    this.#db = db;
  }

  take(takes: readonly LimitTake[], at: number): LimitVerdict {
    return (this.#statements ??= this.#prepare()).take.immediate(takes, at);
  }

  counters(at: number): LimitCounter[] {
    const rows = (this.#statements ??= this.#prepare()).counters.all(at) as [
      string,
      string,
      number,
      number,
    ][];
    return rows.map(([name, key, used, windowMs]) => ({ name, key, used, windowMs }));
  }

  #prepare(): Statements {
    const db = this.#db;
    db.exec(LIMITS_SCHEMA);
    const expire = db.prepare('DELETE FROM limit_usage WHERE name = ? AND key = ? AND at <= ?');
    const used = db
      .prepare('SELECT coalesce(sum(amount), 0) FROM limit_usage WHERE name = ? AND key = ?')
      .pluck();
    const insert = db.prepare(
      'INSERT INTO limit_usage (name, key, at, amount, window_ms) VALUES (?, ?, ?, ?, ?)',
    );
    const counters = db
      .prepare(
        'SELECT name, key, sum(amount), max(window_ms) FROM limit_usage WHERE at > ? - window_ms GROUP BY name, key ORDER BY name, key',
      )
      .raw();
    const take = db.transaction((takes: readonly LimitTake[], now: number): LimitVerdict => {
      for (const [index, { name, key, max, windowMs, amount }] of takes.entries()) {
        expire.run(name, key, now - windowMs);
        const count = (used.get(name, key) as number) + amount;
        if (count > max) return { taken: false, index, count };
      }
      for (const { name, key, windowMs, amount } of takes)
        if (amount > 0) insert.run(name, key, now, amount, windowMs);
      return { taken: true };
    });
    return { expire, used, insert, counters, take };
  }
}
