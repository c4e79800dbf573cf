// The limit counters (docs/api.md, "Limits"), the `LimitStore` part of the store interface: one
// suite, run by every store that has the part (memory, SQLite, PostgreSQL).
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { JobStore, LimitStore } from '../../src/jobs/job-store.js';
import { runtimeOnStore } from '../../src/runtime/operator-runtime.js';
import { register } from '../support/runtime-fixtures.js';

const take = (max: number, windowMs = 1_000, amount = 1) => [
  { name: 'l', key: '[]', max, windowMs, amount },
];

export function runLimitContract(
  open: () => (JobStore & LimitStore) | Promise<JobStore & LimitStore>,
  options: { readonly timeout?: number } = {},
): void {
  it(
    "counts per actor: an agent's steps for every user together, a caller acting alone under its own id",
    options,
    async () => {
      const store = await open();
      const runtime = runtimeOnStore(store, {
        authorizer: { authorize: () => ({ decision: 'allow' }) },
        limits: [{ name: 'per-agent', per: 'actor', max: 2, windowMs: 3_600_000 }],
      });
      try {
        const [read] = register(runtime, { execute: () => 1 }) as [string];
        const plan = { version: '1.0' as const, steps: [{ id: 's', capability: read }] };
        const run = async (caller: Record<string, unknown>) =>
          (await runtime.executePlan(plan, { caller })).status;
        const agent = { id: 'assistant', scopes: [] };
        // The agent for two users: one counter, the agent's.
        assert.equal(await run({ id: 'ada', actor: agent }), 'completed');
        assert.equal(await run({ id: 'bob', actor: agent }), 'completed');
        assert.equal(await run({ id: 'cy', actor: agent }), 'failed');
        // A caller acting alone counts under its own id, apart from the agent's.
        assert.equal(await run({ id: 'ada' }), 'completed');
        assert.equal(await run({ id: 'ada' }), 'completed');
        assert.equal(await run({ id: 'ada' }), 'failed');
        const denied = (await runtime.listJobs({ status: 'failed', limit: 1 }))[0];
        assert.equal(denied?.steps[0]?.decision?.limit, 'per-agent');
        const view = await runtime.listLimits();
        assert.deepEqual(
          view.counters.map((counter) => [counter.per, counter.actor, counter.used]).sort(),
          [
            ['actor', 'ada', 2],
            ['actor', 'assistant', 2],
          ].sort(),
        );
      } finally {
        await runtime.close();
      }
    },
  );

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
