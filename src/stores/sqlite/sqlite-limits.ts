import type Sqlite from 'better-sqlite3';
import type { LimitCounter, LimitTake, LimitVerdict } from '../../jobs/job-store.js';

/**
 * Limit counters (docs/api.md, "Limits"): one row per counted invocation, its time and amount,
 * so a counter is a sliding window over recorded times; and per counter the sum and number of
 * the rows its window held when last taken, so a take reads only what expired since. Tables of
 * their own, created when first used. Expired rows are deleted whenever their counter is taken.
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
CREATE TABLE IF NOT EXISTS limit_counters (
  name TEXT NOT NULL,
  key TEXT NOT NULL,
  used REAL NOT NULL,
  rows INTEGER NOT NULL,
  PRIMARY KEY (name, key)
) WITHOUT ROWID;
`;

interface Statements {
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
    const held = db
      .prepare('SELECT used, rows FROM limit_counters WHERE name = ? AND key = ?')
      .raw();
    const expired = db
      .prepare(
        'SELECT coalesce(sum(amount), 0), count(*) FROM limit_usage WHERE name = ? AND key = ? AND at <= ?',
      )
      .raw();
    const expire = db.prepare('DELETE FROM limit_usage WHERE name = ? AND key = ? AND at <= ?');
    const put = db.prepare(
      'INSERT INTO limit_counters (name, key, used, rows) VALUES (?, ?, ?, ?) ON CONFLICT (name, key) DO UPDATE SET used = excluded.used, rows = excluded.rows',
    );
    const insert = db.prepare(
      'INSERT INTO limit_usage (name, key, at, amount, window_ms) VALUES (?, ?, ?, ?, ?)',
    );
    const counters = db
      .prepare(
        'SELECT name, key, sum(amount), max(window_ms) FROM limit_usage WHERE at > ? - window_ms GROUP BY name, key ORDER BY name, key',
      )
      .raw();
    const take = db.transaction((takes: readonly LimitTake[], now: number): LimitVerdict => {
      const sums: [used: number, rows: number][] = [];
      for (const [index, { name, key, max, windowMs, amount }] of takes.entries()) {
        const after = now - windowMs;
        let [used, rows] = (held.get(name, key) as [number, number] | undefined) ?? [0, 0];
        const [gone, goneRows] = expired.get(name, key, after) as [number, number];
        if (goneRows > 0) {
          expire.run(name, key, after);
          rows -= goneRows;
          // An empty window sums to exactly 0, whatever fractions were added and taken away.
          used = rows === 0 ? 0 : used - gone;
          put.run(name, key, used, rows);
        }
        const count = used + amount;
        if (count > max) return { taken: false, index, count };
        sums.push([used, rows]);
      }
      for (const [index, { name, key, windowMs, amount }] of takes.entries()) {
        if (amount === 0) continue;
        const [used, rows] = sums[index] as [number, number];
        insert.run(name, key, now, amount, windowMs);
        put.run(name, key, used + amount, rows + 1);
      }
      return { taken: true };
    });
    return { counters, take };
  }
}
