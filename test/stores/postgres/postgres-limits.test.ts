import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PostgresJobStore } from '../../../src/stores/postgres/postgres-store.js';
import { startTestPostgres, type TestPostgres } from '../../support/postgres.js';
import { hammer } from '../fixtures/limits-race.js';

const directory = mkdtempSync(join(tmpdir(), 'warrant-postgres-limits-'));
let postgres: TestPostgres;
before(async () => {
  postgres = await startTestPostgres();
});
after(async () => {
  await postgres?.stop();
  rmSync(directory, { recursive: true, force: true });
});

const take = (max: number, windowMs = 1_000, amount = 1) => [
  { name: 'l', key: '[]', max, windowMs, amount },
];

describe('PostgreSQL store: limit counters', () => {
  it(
    'counts a sliding window over recorded times, all takes or none',
    { timeout: 120_000 },
    async () => {
      const store = new PostgresJobStore(await postgres.createDatabase());
      try {
        assert.deepEqual(await store.takeLimits(take(2), 1_000), { taken: true });
        assert.deepEqual(await store.takeLimits(take(2), 1_500), { taken: true });
        assert.deepEqual(await store.takeLimits(take(2), 1_999), {
          taken: false,
          index: 0,
          count: 3,
        });
        // At 2,000 the take of 1,000 has left the window (1,000, 2,000]; the one of 1,500 has not.
        assert.deepEqual(await store.takeLimits(take(2), 2_000), { taken: true });
        const both = [...take(10), { name: 'm', key: '["t"]', max: 0, windowMs: 1_000, amount: 1 }];
        assert.deepEqual(await store.takeLimits(both, 2_100), { taken: false, index: 1, count: 1 });
        assert.deepEqual(await store.limitCounters(2_100), [
          { name: 'l', key: '[]', used: 2, windowMs: 1_000 },
        ]);
        assert.deepEqual(await store.takeLimits(take(2.4, 1_000, 0.5), 2_200), {
          taken: false,
          index: 0,
          count: 2.5,
        });
        assert.deepEqual(await store.takeLimits(take(10, 1_000, 0), 2_200), { taken: true });
        assert.deepEqual(await store.limitCounters(5_000), []);
      } finally {
        await store.close();
      }
    },
  );

  it(
    'four processes on one database never exceed the limit in any window',
    { timeout: 240_000 },
    async () => {
      await hammer(await postgres.createDatabase(), join(directory, 'ledger.txt'));
    },
  );
});
