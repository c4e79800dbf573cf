import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { frozenCallerCopy } from '../../src/callers/caller-check.js';

describe('frozenCallerCopy', () => {
  it('keeps JSON data as it is, with null-prototype objects allowed', () => {
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, {
      id: 'n',
      list: [1, 'two', null, false, { x: 1.5 }],
    });
    const checked = frozenCallerCopy(bare);
    assert.ok(checked.ok);
    assert.deepEqual({ ...checked.caller }, { id: 'n', list: [1, 'two', null, false, { x: 1.5 }] });
  });

  it('copies: the source and the copy are separate, the copy deeply frozen', () => {
    const source = { id: 'a', scopes: ['x'], metadata: { deep: { list: [{ k: 1 }] } } };
    const checked = frozenCallerCopy(source);
    assert.ok(checked.ok);
    const caller = checked.caller as typeof source;
    assert.notEqual(caller, source);
    assert.ok(Object.isFrozen(caller.metadata.deep.list[0]));
    source.metadata.deep.list.push({ k: 2 });
    assert.equal(caller.metadata.deep.list.length, 1);
  });

  it('names the field in its reasons, under the path it is given', () => {
    assert.deepEqual(frozenCallerCopy({ id: 'a', scopes: [1] }, 'callers[3].caller'), {
      ok: false,
      reason: 'callers[3].caller.scopes must be an array of strings',
    });
    assert.deepEqual(frozenCallerCopy({ id: 'a', x: [0, Infinity] }), {
      ok: false,
      reason: 'caller.x[1] is not a finite number',
    });
    assert.deepEqual(
      frozenCallerCopy(
        new (class Caller {
          id = 'a';
        })(),
      ),
      {
        ok: false,
        reason: 'caller is not a plain object',
      },
    );
    assert.deepEqual(frozenCallerCopy({ id: 'a', tenant: { name: 'acme' } }), {
      ok: false,
      reason: 'caller.tenant must be a string',
    });
    assert.ok(frozenCallerCopy({ id: 'a', tenant: 'acme' }).ok);
    const sparse: unknown[] = [];
    sparse[1] = 'b';
    assert.deepEqual(frozenCallerCopy({ id: 'a', sparse }), {
      ok: false,
      reason: 'caller.sparse[0] is not JSON data',
    });
  });
});
