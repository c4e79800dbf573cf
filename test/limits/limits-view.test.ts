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

describe('limits view of per-actor counters (docs/api.md, "Limits")', () => {
  const perActor =
    checkLimitsOption([{ name: 'agent', per: 'actor', max: 3, windowMs: 1_000 }]) ?? [];
  const actorCounters = [
    { name: 'agent', key: '["t1","assistant","actor"]', used: 2, windowMs: 1_000 },
    { name: 'agent', key: '["t1","alice","actor"]', used: 1, windowMs: 1_000 },
    { name: 'agent', key: '["t1","other","actor"]', used: 1, windowMs: 1_000 },
    { name: 'agent', key: '["t1","x","not-actor"]', used: 1, windowMs: 1_000 },
  ];
  const ids = (view: ReturnType<typeof limitsView>) =>
    view.counters.map((counter) => `${counter.per}:${counter.actor ?? '-'}`);

  it('decodes the counted id as actor, and leaves out a key it cannot read', () => {
    const view = limitsView(perActor, actorCounters, undefined);
    assert.deepEqual(view.limits[0]?.per, 'actor');
    assert.deepEqual(view.counters[0], {
      limit: 'agent',
      per: 'actor',
      tenant: 't1',
      actor: 'assistant',
      used: 2,
      max: 3,
      windowMs: 1_000,
    });
    assert.deepEqual(ids(view), ['actor:assistant', 'actor:alice', 'actor:other']);
  });

  it("shows a caller the counter of its own id and of its current actor; an auditor all of its tenant's", () => {
    const acting = { id: 'alice', tenant: 't1', actor: { id: 'assistant', tenant: 't1' } };
    assert.deepEqual(ids(limitsView(perActor, actorCounters, acting)), [
      'actor:assistant',
      'actor:alice',
    ]);
    assert.deepEqual(ids(limitsView(perActor, actorCounters, { id: 'alice', tenant: 't1' })), [
      'actor:alice',
    ]);
    assert.deepEqual(ids(limitsView(perActor, actorCounters, { id: 'eve', tenant: 't1' }, true)), [
      'actor:assistant',
      'actor:alice',
      'actor:other',
    ]);
    assert.deepEqual(ids(limitsView(perActor, actorCounters, { id: 'alice', tenant: 't2' })), []);
  });
});

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
