import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkLimitsOption } from '../../src/limits/limit-options.js';
import { limitsView } from '../../src/limits/limits-view.js';

const limits =
  checkLimitsOption([
    { name: 'mine', per: 'caller', max: 5, windowMs: 1_000, match: { risk: 'write' } },
    { name: 'team', per: 'tenant', max: 9, windowMs: 1_000 },
    { name: 'all', per: 'global', max: 99, windowMs: 1_000, cost: true },
  ]) ?? [];
const counters = [
  { name: 'mine', key: '["t1","alice"]', used: 1, windowMs: 1_000 },
  { name: 'mine', key: '["t1","bob"]', used: 2, windowMs: 1_000 },
  { name: 'mine', key: '["t2","alice"]', used: 3, windowMs: 1_000 },
  { name: 'team', key: '["t1"]', used: 4, windowMs: 1_000 },
  { name: 'team', key: '[null]', used: 5, windowMs: 1_000 },
  { name: 'all', key: '[]', used: 0.1 + 0.2, windowMs: 1_000 },
  { name: 'gone', key: '[]', used: 7, windowMs: 500 },
];
const names = (view: ReturnType<typeof limitsView>) =>
  view.counters.map(
    (counter) => `${counter.limit}:${counter.tenant ?? '-'}:${counter.caller ?? '-'}`,
  );

describe('limits view', () => {
  it('shows the limits and every counter, decoded, to the host', () => {
    const view = limitsView(limits, counters, undefined);
    assert.deepEqual(view.limits[0], {
      name: 'mine',
      per: 'caller',
      match: { risk: 'write' },
      max: 5,
      windowMs: 1_000,
      cost: false,
    });
    assert.deepEqual(view.counters[0], {
      limit: 'mine',
      per: 'caller',
      tenant: 't1',
      caller: 'alice',
      used: 1,
      max: 5,
      windowMs: 1_000,
    });
    assert.deepEqual(view.counters[5], {
      limit: 'all',
      per: 'global',
      used: 0.3,
      max: 99,
      windowMs: 1_000,
    });
    // A counter of a limit no longer configured has no max.
    assert.deepEqual(view.counters[6], { limit: 'gone', per: 'global', used: 7, windowMs: 500 });
  });

  it('shows a caller its own counters, its tenant and the global ones; an auditor its whole tenant', () => {
    assert.deepEqual(names(limitsView(limits, counters, { id: 'alice', tenant: 't1' })), [
      'mine:t1:alice',
      'team:t1:-',
      'all:-:-',
      'gone:-:-',
    ]);
    assert.deepEqual(
      names(
        limitsView(limits, counters, { id: 'eve', tenant: 't1', scopes: ['warrant:audit'] }, true),
      ),
      ['mine:t1:alice', 'mine:t1:bob', 'team:t1:-', 'all:-:-', 'gone:-:-'],
    );
    assert.deepEqual(names(limitsView(limits, counters, { id: 'alice' })), [
      'team:-:-',
      'all:-:-',
      'gone:-:-',
    ]);
  });
});
