// The table of calls awaiting approval (src/mcp/pending-calls.ts): its key and its bound. The
// adapter's use of it is tested with a real client in test/mcp/mcp-adapter.test.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_PENDING_CALLS, PendingCalls, pendingCallKey } from '../../src/mcp/pending-calls.js';

describe('pendingCallKey(tool, caller, args)', () => {
  it('is one key for the same tool, caller id, tenant and canonical arguments', () => {
    const key = pendingCallKey('send', { id: 'ada', tenant: 't' }, { to: 'bob', n: [1, 2] });
    assert.match(key ?? '', /^[0-9a-f]{64}$|^sha256:/);
    assert.equal(
      pendingCallKey('send', { id: 'ada', tenant: 't', scopes: ['x'] }, { n: [1, 2], to: 'bob' }),
      key,
    );
  });

  it('differs by tool, caller id, tenant and arguments', () => {
    const key = pendingCallKey('send', { id: 'ada', tenant: 't' }, { to: 'bob' });
    for (const other of [
      pendingCallKey('post', { id: 'ada', tenant: 't' }, { to: 'bob' }),
      pendingCallKey('send', { id: 'bob', tenant: 't' }, { to: 'bob' }),
      pendingCallKey('send', { id: 'ada', tenant: 'u' }, { to: 'bob' }),
      pendingCallKey('send', { id: 'ada' }, { to: 'bob' }),
      pendingCallKey('send', { id: 'ada', tenant: 't' }, { to: 'carol' }),
    ])
      assert.notEqual(other, key);
  });

  it('keys no call of a caller without an id', () => {
    assert.equal(pendingCallKey('send', undefined, {}), undefined);
    assert.equal(pendingCallKey('send', { tenant: 't' }, {}), undefined);
  });
});

describe('PendingCalls', () => {
  it(`holds at most ${MAX_PENDING_CALLS} calls by default, dropping the oldest first`, () => {
    const calls = new PendingCalls();
    const call = Promise.resolve('job');
    for (let i = 0; i <= MAX_PENDING_CALLS; i++) calls.set(`k${i}`, call);
    assert.equal(calls.size, MAX_PENDING_CALLS);
    assert.equal(calls.get('k0'), undefined);
    assert.equal(calls.get(`k${MAX_PENDING_CALLS}`), call);
  });

  it('refreshes a key set again, and forgets a key only while it holds the given call', () => {
    const calls = new PendingCalls(2);
    const first = Promise.resolve(undefined);
    const second = Promise.resolve('job');
    calls.set('a', first);
    calls.set('b', first);
    calls.set('a', second); // now the newest
    calls.set('c', first);
    assert.equal(calls.get('b'), undefined);
    calls.forget('a', first);
    assert.equal(calls.get('a'), second);
    calls.forget('a', second);
    assert.equal(calls.get('a'), undefined);
  });
});
