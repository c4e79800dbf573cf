import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { SqliteJobStore } from '../../../src/stores/sqlite/sqlite-store.js';
import { hammer } from '../fixtures/limits-race.js';
import { runLimitContract } from '../limits-contract.js';

const directory = mkdtempSync(join(tmpdir(), 'warrant-sqlite-limits-'));
after(() => rmSync(directory, { recursive: true, force: true }));

describe('SQLite store: limit counters', () => {
  // A file per test: each starts with no counters.
  let files = 0;
  runLimitContract(() => new SqliteJobStore(join(directory, `window-${++files}.db`)));

  it(
    'four processes on one file never exceed the limit in any window',
    { timeout: 180_000 },
    async () => {
      await hammer(`sqlite:${join(directory, 'race.db')}`, join(directory, 'ledger.txt'));
    },
  );
});
