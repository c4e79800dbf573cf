import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { toJsonSafe } from '../../src/jobs/json-value.js';

describe('toJsonSafe()', () => {
  it('keeps JSON values as they are', () => {
    const value = { a: [1, 'two', true, null], b: { c: 1.5 } };
    assert.deepEqual(toJsonSafe(value), value);
  });

  it('records what JSON cannot hold as documented, never throwing', () => {
    const cyclic: Record<string, unknown> = { name: 'loop' };
    cyclic.self = cyclic;
    const shared = { x: 1 };
    const hostile = new Proxy(
      {},
      {
        ownKeys: () => {
          throw new Error('trap');
        },
      },
    );
    const getter = Object.defineProperty({}, 'bad', {
      enumerable: true,
      get: () => {
        throw new Error('getter');
      },
    });
    assert.deepEqual(
      toJsonSafe({
        big: 12345678901234567890n,
        fn: function named() {},
        sym: Symbol('tag'),
        nan: NaN,
        inf: -Infinity,
        date: new Date(0),
        badDate: new Date('nope'),
        map: new Map([['k', 1n]]),
        set: new Set([1, 2]),
        holes: [undefined, 1],
        dropped: undefined,
        cyclic,
        twice: [shared, shared],
        hostile,
        getter,
      }),
      {
        big: '12345678901234567890',
        fn: '[Function named]',
        sym: 'Symbol(tag)',
        nan: 'NaN',
        inf: '-Infinity',
        date: '1970-01-01T00:00:00.000Z',
        badDate: null,
        map: { k: '1' },
        set: [1, 2],
        holes: [null, 1],
        cyclic: { name: 'loop', self: '[Circular]' },
        twice: [{ x: 1 }, { x: 1 }],
        hostile: '[Unreadable]',
        getter: '[Unreadable]',
      },
    );
  });

  it('cuts very deep values and keeps a __proto__ key as plain data', () => {
    let deep: unknown = 'bottom';
    for (let level = 0; level < 500; level++) deep = { next: deep };
    assert.match(JSON.stringify(toJsonSafe(deep)), /\[Too deep\]/);
    const proto = toJsonSafe(JSON.parse('{"__proto__": {"polluted": true}}')) as object;
    assert.equal(Object.getPrototypeOf(proto), Object.prototype);
    assert.deepEqual(Object.keys(proto), ['__proto__']);
    assert.equal(({} as { polluted?: unknown }).polluted, undefined);
  });
});
