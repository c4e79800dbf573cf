// The limit counters (docs/api.md, "Limits"), the `LimitStore` part of the store interface: one
// suite, run by every store that has the part (memory, SQLite, PostgreSQL).
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { JobStore, LimitStore } from '../../src/jobs/job-store.js';

const take = (max: number, windowMs = 1_000, amount = 1) => [
  { name: 'l', key: '[]', max, windowMs, amount },
];

export function runLimitContract(
  open: () => (JobStore & LimitStore) | Promise<JobStore & LimitStore>,
  options: { readonly timeout?: number } = {},
): void {
  it('counts a sliding window over recorded times, all takes or none', options, async () => {
    const store = await open();
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
      // Two limits: the second is over, so neither is taken.
      const both = [...take(10), { name: 'm', key: '["t"]', max: 0, windowMs: 1_000, amount: 1 }];
      assert.deepEqual(await store.takeLimits(both, 2_100), { taken: false, index: 1, count: 1 });
      assert.deepEqual(await store.limitCounters(2_100), [
        { name: 'l', key: '[]', used: 2, windowMs: 1_000 },
      ]);
      // Costs: amounts are summed; a take of 0 stores nothing.
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
  });
}
