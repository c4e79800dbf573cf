import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { snapshotCaller } from '../../src/runtime/caller-snapshot.js';

describe('snapshotCaller()', () => {
  it('returns undefined for no caller', () => {
    assert.equal(snapshotCaller(undefined), undefined);
  });

  it('makes a frozen shallow copy with scopes and metadata copied and frozen', () => {
    const caller = { id: 'u', scopes: ['a'], metadata: { team: 'ops' }, extra: 1 };
    const snapshot = snapshotCaller(caller);
    assert.deepEqual(snapshot, caller);
    assert.notEqual(snapshot, caller);
    assert.notEqual(snapshot?.scopes, caller.scopes);
    assert.notEqual(snapshot?.metadata, caller.metadata);
    assert.ok(
      Object.isFrozen(snapshot) &&
        Object.isFrozen(snapshot?.scopes) &&
        Object.isFrozen(snapshot?.metadata),
    );
    caller.scopes.push('admin');
    caller.metadata.team = 'root';
    assert.deepEqual(snapshot?.scopes, ['a']);
    assert.equal(snapshot?.metadata?.team, 'ops');
  });

  it('rejects callers that are not objects, scopes that are not strings and metadata that is not an object', () => {
    for (const bad of [
      null,
      'user',
      42,
      ['a'],
      { scopes: 'admin' },
      { scopes: [1] },
      { metadata: 'x' },
      { metadata: [] },
    ]) {
      assert.throws(
        () => snapshotCaller(bad),
        { name: 'TypeError', code: 'EXECUTE_OPTIONS_INVALID' },
        JSON.stringify(bad),
      );
    }
  });
});
