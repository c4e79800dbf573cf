import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PostgresJobStore } from '../../../src/stores/postgres/postgres-store.js';
import { startTestPostgres, type TestPostgres } from '../../support/postgres.js';
import { hammer } from '../fixtures/limits-race.js';
import { runLimitContract } from '../limits-contract.js';

const directory = mkdtempSync(join(tmpdir(), 'warrant-postgres-limits-'));
let postgres: TestPostgres;
before(async () => {
  postgres = await startTestPostgres();
});
after(async () => {
  await postgres?.stop();
  rmSync(directory, { recursive: true, force: true });
});

describe('PostgreSQL store: limit counters', () => {
  runLimitContract(async () => new PostgresJobStore(await postgres.createDatabase()), {
    timeout: 120_000,
  });

  it(
    'four processes on one database never exceed the limit in any window',
    { timeout: 240_000 },
    async () => {
      await hammer(await postgres.createDatabase(), join(directory, 'ledger.txt'));
    },
  );
});
