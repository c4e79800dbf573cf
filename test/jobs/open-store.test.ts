import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { checkStoreOption, openStore } from '../../src/jobs/open-store.js';
import { MemoryJobStore } from '../../src/jobs/stores/memory-store.js';
import { PostgresJobStore } from '../../src/jobs/stores/postgres-store.js';
import { SqliteJobStore } from '../../src/jobs/stores/sqlite-store.js';

describe('store selection', () => {
  it('accepts memory (default), sqlite:<file> and postgres URLs, opening nothing while checking', () => {
    for (const option of [
      undefined,
      'memory',
      'sqlite:/no/such/dir/jobs.db',
      'sqlite::memory:',
      'postgres://user:pw@127.0.0.1:1/none',
      'postgresql://localhost/db',
      'postgres://localhost/db?statement_timeout=0',
      'postgres://localhost/db?statement_timeout=5000',
    ]) {
      assert.doesNotThrow(() => checkStoreOption(option), String(option));
    }
  });

  it('refuses unknown stores, sqlite: without a file, malformed postgres URLs and statement time-outs with RUNTIME_OPTIONS_INVALID', () => {
    for (const option of [
      'redis://x',
      'sqlite:',
      'postgres://u@[bad/db',
      'postgres:/x',
      'postgres://localhost/db?statement_timeout=5s',
      'postgres://localhost/db?statement_timeout=-1',
      'postgres://localhost/db?statement_timeout=1&statement_timeout=2',
      42,
      {},
      '',
    ]) {
      assert.throws(
        () => checkStoreOption(option),
        { name: 'TypeError', code: 'RUNTIME_OPTIONS_INVALID' },
        String(option),
      );
    }
  });

  it('opens the store the option names (PostgreSQL connects on first use, not here)', async () => {
    assert.ok(openStore(undefined, { maxJobs: 5 }) instanceof MemoryJobStore);
    assert.ok(openStore('memory', { maxJobs: 5 }) instanceof MemoryJobStore);
    const sqlite = openStore(
      `sqlite:${join(mkdtempSync(join(tmpdir(), 'warrant-open-')), 'jobs.db')}`,
      { maxJobs: 5 },
    );
    assert.ok(sqlite instanceof SqliteJobStore);
    sqlite.close();
    const postgres = openStore('postgres://user:pw@127.0.0.1:1/none', { maxJobs: 5 });
    assert.ok(postgres instanceof PostgresJobStore);
    await postgres.close();
  });
});
