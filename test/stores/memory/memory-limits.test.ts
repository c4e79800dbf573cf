import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MemoryLimits } from '../../../src/stores/memory/memory-limits.js';

const take = (max: number, windowMs = 1_000, amount = 1, name = 'l') => [
  { name, key: '[]', max, windowMs, amount },
];

describe('memory store: limit counters', () => {
  it('counts a sliding window over recorded times, all takes or none', () => {
    const limits = new MemoryLimits();
    assert.deepEqual(limits.take(take(2), 1_000), { taken: true });
    assert.deepEqual(limits.take(take(2), 1_500), { taken: true });
    assert.deepEqual(limits.take(take(2), 1_999), { taken: false, index: 0, count: 3 });
    assert.deepEqual(limits.take(take(2), 2_000), { taken: true });
    const both = [...take(10), ...take(0, 1_000, 1, 'm')];
    assert.deepEqual(limits.take(both, 2_100), { taken: false, index: 1, count: 1 });
    assert.deepEqual(limits.counters(2_100), [{ name: 'l', key: '[]', used: 2, windowMs: 1_000 }]);
    assert.deepEqual(limits.take(take(2.4, 1_000, 0.5), 2_200), {
      taken: false,
      index: 0,
      count: 2.5,
    });
    assert.deepEqual(limits.take(take(10, 1_000, 0), 2_200), { taken: true });
    assert.deepEqual(limits.counters(5_000), []);
  });
});
