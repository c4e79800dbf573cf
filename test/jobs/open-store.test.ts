import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { checkStoreOption, openStore } from '../../src/jobs/open-store.js';
import { MemoryJobStore } from '../../src/jobs/stores/memory-store.js';
import { SqliteJobStore } from '../../src/jobs/stores/sqlite-store.js';

describe('store selection', () => {
  it('accepts memory (default) and sqlite:<file>, opening nothing while checking', () => {
    for (const option of [undefined, 'memory', 'sqlite:/no/such/dir/jobs.db', 'sqlite::memory:']) {
      assert.doesNotThrow(() => checkStoreOption(option), String(option));
    }
  });

  it('refuses unknown stores, sqlite: without a file, and PostgreSQL (not in this version) with RUNTIME_OPTIONS_INVALID', () => {
    for (const option of [
      'redis://x',
      'sqlite:',
      'postgres://u@localhost/db',
      'postgresql://x',
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

  it('opens the store the option names', () => {
    assert.ok(openStore(undefined, { maxJobs: 5 }) instanceof MemoryJobStore);
    assert.ok(openStore('memory', { maxJobs: 5 }) instanceof MemoryJobStore);
    const sqlite = openStore(
      `sqlite:${join(mkdtempSync(join(tmpdir(), 'warrant-open-')), 'jobs.db')}`,
      { maxJobs: 5 },
    );
    assert.ok(sqlite instanceof SqliteJobStore);
    sqlite.close();
  });
});
