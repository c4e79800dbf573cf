// The parts a store has beyond the core (src/jobs/store-parts.ts), asked of each store and of
// stores a host writes: a part counts only whole.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { JobStore } from '../../src/index.js';
import {
  hasAvailability,
  hasAwaitingIndex,
  hasCancels,
  hasChain,
  hasCheckpoints,
  hasIdempotency,
  hasLedger,
  hasLimits,
  hasOutbox,
  hasQueue,
  isOwned,
} from '../../src/jobs/store-parts.js';
import { MemoryJobStore } from '../../src/stores/memory/memory-store.js';
import { SqliteJobStore } from '../../src/stores/sqlite/sqlite-store.js';
import { CoreStore } from '../support/core-store.js';

const GUARDS = {
  hasAvailability,
  hasAwaitingIndex,
  hasCancels,
  hasChain,
  hasCheckpoints,
  hasIdempotency,
  hasLedger,
  hasLimits,
  hasOutbox,
  hasQueue,
  isOwned,
};

/** The names of the guards that answer true for `store`. */
function partsOf(store: JobStore): string[] {
  return Object.entries(GUARDS)
    .filter(([, guard]) => guard(store))
    .map(([name]) => name);
}

describe('store parts', () => {
  it('a core-only store has none', () => {
    assert.deepEqual(partsOf(new CoreStore()), []);
  });

  it('the memory store: limits, outbox, idempotency and its awaiting index', () => {
    assert.deepEqual(partsOf(new MemoryJobStore(10)), [
      'hasAwaitingIndex',
      'hasIdempotency',
      'hasLimits',
      'hasOutbox',
    ]);
  });

  it('the SQLite store: every part but the queue and availability (one process owns its writes)', () => {
    const store = new SqliteJobStore(':memory:');
    try {
      assert.deepEqual(partsOf(store), [
        'hasAwaitingIndex',
        'hasCancels',
        'hasChain',
        'hasCheckpoints',
        'hasIdempotency',
        'hasLedger',
        'hasLimits',
        'hasOutbox',
        'isOwned',
      ]);
    } finally {
      store.close();
    }
  });

  it('counts a part only whole: half of one is none, and a store without an owner id owns nothing', () => {
    const core = new CoreStore();
    const half = Object.assign(core, {
      takeLimits: () => ({ taken: true }) as const,
      requestCancel: () => {},
      seal: () => Promise.resolve(undefined),
      readChain: () => undefined,
      claimOrphans: () => [],
      takeQueued: () => Promise.resolve(true),
      updateWhileQueued: () => Promise.resolve(true),
      outbox: undefined,
    });
    assert.deepEqual(partsOf(half), ['hasChain']);
    assert.equal(
      isOwned(
        Object.assign(new CoreStore(), { owner: 'o', claimOrphans: () => [], orphaned: () => [] }),
      ),
      true,
    );
  });
});
