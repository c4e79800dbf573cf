// The SQLite and PostgreSQL stores as the contract suites drive them (test/stores/contract.ts,
// `StoreUnderTest`): a fresh store per test, reopened by its option, and raw SQL against it
// (`{table}` names a table of the schema, `?` a parameter), shared by every suite file of a
// backend.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { Database } from '../../src/stores/sqlite/sqlite-driver.cjs';
import { SqliteJobStore } from '../../src/stores/sqlite/sqlite-store.js';
import { PostgresJobStore } from '../../src/stores/postgres/postgres-store.js';
import type { TestPostgres } from '../support/postgres.js';
import type { StoreUnderTest } from './contract.js';

/** SQLite files in a fresh temporary directory named after `prefix`. */
export function sqliteUnderTest(prefix: string): StoreUnderTest {
  const directory = mkdtempSync(join(tmpdir(), `warrant-${prefix}-`));
  let files = 0;
  return {
    name: 'sqlite',
    freshStoreOption: () => `sqlite:${join(directory, `jobs-${++files}.db`)}`,
    reopen: (option) => new SqliteJobStore(option.slice('sqlite:'.length)),
    sql: async (option, text, values = []) => {
      const db = new Database(option.slice('sqlite:'.length));
      try {
        const statement = db.prepare(text.replace(/\{(\w+)\}/g, '$1'));
        return statement.reader
          ? (statement.all(...values) as Record<string, unknown>[])
          : (statement.run(...values), []);
      } finally {
        db.close();
      }
    },
  };
}

/** One statement on a new connection to `url`; its rows. */
export async function postgresQuery<T extends pg.QueryResultRow = Record<string, unknown>>(
  url: string,
  text: string,
  values: unknown[] = [],
): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(text, values)).rows;
  } finally {
    await client.end();
  }
}

/** A new database of `server` (started on first use) per store. */
export function postgresUnderTest(server: () => Promise<TestPostgres>): StoreUnderTest {
  return {
    name: 'postgres',
    freshStoreOption: async () => (await server()).createDatabase(),
    reopen: (option) => new PostgresJobStore(option),
    sql: async (option, text, values = []) => {
      let parameter = 0;
      const statement = text
        .replace(/\{(\w+)\}/g, 'warrant_$1')
        .replace(/\?/g, () => `$${++parameter}`);
      return postgresQuery(option, statement, values);
    },
  };
}
