import type pg from 'pg';
import type { LimitCounter, LimitTake, LimitVerdict } from '../../jobs/job-store.js';

/**
 * Limit counters (docs/api.md, "Limits"): one row per counted invocation (a sliding window over
 * recorded times), and one row per counter, holding the sum and number of the rows its window
 * held when last taken, that a take locks: takes of one counter, in any number of processes, run
 * one after the other, and each reads only what expired since. Tables of their own, created
 * when first used.
 */
const LIMITS_SCHEMA = `
CREATE TABLE IF NOT EXISTS warrant_limit_counters (
  name TEXT NOT NULL,
  key TEXT NOT NULL,
  used DOUBLE PRECISION NOT NULL DEFAULT 0,
  rows BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (name, key)
);
CREATE TABLE IF NOT EXISTS warrant_limit_usage (
  name TEXT NOT NULL,
  key TEXT NOT NULL,
  at BIGINT NOT NULL,
  amount DOUBLE PRECISION NOT NULL,
  window_ms BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS warrant_limit_usage_by_counter ON warrant_limit_usage (name, key, at);
`;

/**
 * Locks the counters' rows, in one order (name, key) in every process, so two takes that share
 * counters never deadlock: the upsert takes each row's lock, creating the row if it is new.
 */
const LOCK_COUNTERS = `INSERT INTO warrant_limit_counters (name, key)
SELECT name, key FROM unnest($1::text[], $2::text[]) AS t(name, key) ORDER BY name, key
ON CONFLICT (name, key) DO UPDATE SET name = excluded.name
RETURNING name, key, used, rows`;

/** Deletes what the windows no longer hold; answers the sum and number deleted per counter. */
const EXPIRE = `WITH gone AS (DELETE FROM warrant_limit_usage u
USING unnest($1::text[], $2::text[], $3::bigint[]) AS t(name, key, after)
WHERE u.name = t.name AND u.key = t.key AND u.at <= t.after
RETURNING u.name, u.key, u.amount)
SELECT name, key, sum(amount) AS amount, count(*) AS rows FROM gone GROUP BY name, key`;
const INSERT = `INSERT INTO warrant_limit_usage (name, key, at, amount, window_ms)
SELECT name, key, $3, amount, window_ms
FROM unnest($1::text[], $2::text[], $4::float8[], $5::bigint[]) AS t(name, key, amount, window_ms)
WHERE amount > 0`;
const PUT = `UPDATE warrant_limit_counters c SET used = t.used, rows = t.rows
FROM unnest($1::text[], $2::text[], $3::float8[], $4::bigint[]) AS t(name, key, used, rows)
WHERE c.name = t.name AND c.key = t.key`;
const COUNTERS = `SELECT name, key, sum(amount) AS used, max(window_ms) AS window_ms
FROM warrant_limit_usage WHERE at > $1 - window_ms GROUP BY name, key ORDER BY name, key`;

/** Creates the tables once per store (under the schema lock, so processes do not race). */
export async function createLimitTables(client: pg.PoolClient, schemaLock: number): Promise<void> {
  const { rows } = await client.query<{ found: string | null }>(
    "SELECT to_regclass('warrant_limit_usage')::text AS found",
  );
  if (rows[0]?.found != null) return;
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock($1)', [schemaLock]);
    await client.query(LIMITS_SCHEMA);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  }
}

/**
 * Takes every one of `takes` or none, in one transaction: the counters' rows are locked first,
 * and each later statement (READ COMMITTED) sees every take committed before the lock was had.
 */
export async function takeLimits(
  client: pg.PoolClient,
  takes: readonly LimitTake[],
  at: number,
): Promise<LimitVerdict> {
  const names = takes.map((take) => take.name);
  const keys = takes.map((take) => take.key);
  await client.query('BEGIN');
  try {
    const locked = await client.query<{ name: string; key: string; used: number; rows: string }>({
      name: 'warrant_limit_lock',
      text: LOCK_COUNTERS,
      values: [names, keys],
    });
    const held = new Map<string, [number, number]>(
      locked.rows.map((row) => [`${row.name}\u0000${row.key}`, [row.used, Number(row.rows)]]),
    );
    const gone = await client.query<{ name: string; key: string; amount: number; rows: string }>({
      name: 'warrant_limit_expire',
      text: EXPIRE,
      values: [names, keys, takes.map((take) => at - take.windowMs)],
    });
    for (const row of gone.rows) {
      const id = `${row.name}\u0000${row.key}`;
      const [used, rows] = held.get(id) ?? [0, 0];
      const left = rows - Number(row.rows);
      // An empty window sums to exactly 0, whatever fractions were added and taken away.
      held.set(id, [left <= 0 ? 0 : used - row.amount, Math.max(left, 0)]);
    }
    const sums = takes.map((take) => held.get(`${take.name}\u0000${take.key}`));
    for (const [index, take] of takes.entries()) {
      const count = Number(sums[index]?.[0] ?? Number.NaN) + take.amount;
      // NaN (a counter not locked) is never within the limit: fail closed.
      if (!(count <= take.max)) {
        await client.query('ROLLBACK');
        return { taken: false, index, count };
      }
    }
    await client.query({
      name: 'warrant_limit_insert',
      text: INSERT,
      values: [
        names,
        keys,
        at,
        takes.map((take) => take.amount),
        takes.map((take) => take.windowMs),
      ],
    });
    await client.query({
      name: 'warrant_limit_put',
      text: PUT,
      values: [
        names,
        keys,
        takes.map((take, index) => (sums[index]?.[0] ?? 0) + take.amount),
        takes.map((take, index) => (sums[index]?.[1] ?? 0) + (take.amount > 0 ? 1 : 0)),
      ],
    });
    await client.query('COMMIT');
    return { taken: true };
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  }
}

/** Every counter with something taken in its window ending at `at`. */
export async function limitCounters(pool: pg.Pool, at: number): Promise<LimitCounter[]> {
  const { rows } = await pool.query<{
    name: string;
    key: string;
    used: number;
    window_ms: string;
  }>({ name: 'warrant_limit_counters', text: COUNTERS, values: [at] });
  return rows.map((row) => ({
    name: row.name,
    key: row.key,
    used: Number(row.used),
    windowMs: Number(row.window_ms),
  }));
}
