import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AuthSuccess } from '../../../src/http/auth/authenticator.js';
import { VerifiedTokens } from '../../../src/http/auth/verified-tokens.js';

const result = (id: string): AuthSuccess =>
  Object.freeze({ ok: true, caller: Object.freeze({ id }) });

describe('VerifiedTokens', () => {
  it('keeps an entry until expiresAt, and no longer', () => {
    let now = 1_000;
    const cache = new VerifiedTokens({ maxEntries: 10, maxAgeMs: 60_000, now: () => now });
    const alice = result('alice');
    cache.set('t1', alice, 5_000);
    assert.equal(cache.get('t1'), alice);
    assert.equal(cache.get('t2'), undefined);
    now = 4_999;
    assert.equal(cache.get('t1'), alice);
    now = 5_000;
    assert.equal(cache.get('t1'), undefined);
    assert.equal(cache.size, 0, 'an expired entry is dropped');
  });

  it('keeps an entry at most maxAgeMs, even for a token valid much longer', () => {
    let now = 0;
    const cache = new VerifiedTokens({ maxEntries: 10, maxAgeMs: 60_000, now: () => now });
    cache.set('t', result('a'), 3_600_000);
    now = 59_999;
    assert.ok(cache.get('t'));
    now = 60_000;
    assert.equal(cache.get('t'), undefined);
  });

  it('does not store a token already expired', () => {
    const cache = new VerifiedTokens({ maxEntries: 10, maxAgeMs: 60_000, now: () => 10_000 });
    cache.set('t', result('a'), 10_000);
    assert.equal(cache.size, 0);
  });

  it('drops the oldest entry when full', () => {
    const cache = new VerifiedTokens({ maxEntries: 2, maxAgeMs: 60_000, now: () => 0 });
    cache.set('a', result('a'), 1_000);
    cache.set('b', result('b'), 1_000);
    cache.set('c', result('c'), 1_000);
    assert.equal(cache.size, 2);
    assert.equal(cache.get('a'), undefined);
    assert.ok(cache.get('b') && cache.get('c'));
  });
});
