import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { SqliteJobStore } from '../../../src/stores/sqlite/sqlite-store.js';
import { hammer } from '../fixtures/limits-race.js';

const directory = mkdtempSync(join(tmpdir(), 'warrant-sqlite-limits-'));
after(() => rmSync(directory, { recursive: true, force: true }));

const take = (max: number, windowMs = 1_000, amount = 1) => [
  { name: 'l', key: '[]', max, windowMs, amount },
];

describe('SQLite store: limit counters', () => {
  it('counts a sliding window over recorded times, all takes or none', () => {
    const store = new SqliteJobStore(join(directory, 'window.db'));
    try {
      assert.deepEqual(store.takeLimits(take(2), 1_000), { taken: true });
      assert.deepEqual(store.takeLimits(take(2), 1_500), { taken: true });
      assert.deepEqual(store.takeLimits(take(2), 1_999), { taken: false, index: 0, count: 3 });
      // At 2,000 the take of 1,000 has left the window (1,000, 2,000]; the one of 1,500 has not.
      assert.deepEqual(store.takeLimits(take(2), 2_000), { taken: true });
      // Two limits: the second is over, so neither is taken.
      const both = [...take(10), { name: 'm', key: '["t"]', max: 0, windowMs: 1_000, amount: 1 }];
      assert.deepEqual(store.takeLimits(both, 2_100), { taken: false, index: 1, count: 1 });
      assert.deepEqual(store.limitCounters(2_100), [
        { name: 'l', key: '[]', used: 2, windowMs: 1_000 },
      ]);
      // Costs: amounts are summed; a take of 0 stores nothing.
      assert.deepEqual(store.takeLimits(take(2.4, 1_000, 0.5), 2_200), {
        taken: false,
        index: 0,
        count: 2.5,
      });
      assert.deepEqual(store.takeLimits(take(10, 1_000, 0), 2_200), { taken: true });
      assert.deepEqual(store.limitCounters(5_000), []);
    } finally {
      store.close();
    }
  });

  it(
    'four processes on one file never exceed the limit in any window',
    { timeout: 180_000 },
    async () => {
      await hammer(`sqlite:${join(directory, 'race.db')}`, join(directory, 'ledger.txt'));
    },
  );
});
