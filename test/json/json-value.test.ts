import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { toJsonSafe, toJsonText } from '../../src/json/json-value.js';

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

  it('marks a cycle at any depth, and only a value that is its own ancestor', () => {
    // Ancestors are compared one by one for the first levels and hashed deeper (json-value.ts):
    // cycles that close within, across and beyond that boundary, and shared values that are not
    // cycles (siblings, and a value seen again after the walk left it).
    for (const depth of [1, 2, 31, 32, 33, 34, 64, 150]) {
      for (const back of new Set(
        [0, 1, Math.floor(depth / 2), depth - 1].filter((at) => at < depth),
      )) {
        const chain: Record<string, unknown>[] = [];
        for (let level = 0; level < depth; level++) chain.push({ level });
        chain.forEach((node, level) => {
          if (level + 1 < depth) node.next = chain[level + 1];
        });
        const shared = { leaf: true };
        const last = chain[depth - 1] as Record<string, unknown>;
        last.loop = chain[back];
        last.twice = [shared, shared];
        const encoded = toJsonSafe({ root: chain[0], again: chain[0] }) as Record<string, unknown>;
        for (const top of [encoded.root, encoded.again]) {
          let node = top as Record<string, unknown>;
          for (let level = 0; level < depth - 1; level++)
            node = node.next as Record<string, unknown>;
          assert.equal(node.level, depth - 1, `depth ${depth}, back to ${back}`);
          assert.equal(node.loop, '[Circular]', `depth ${depth}, back to ${back}`);
          assert.deepEqual(node.twice, [{ leaf: true }, { leaf: true }]);
        }
      }
    }
    // The same object under two branches deeper than the compared levels is not a cycle.
    let deepShared: Record<string, unknown> = { bottom: 1 };
    const reused = deepShared;
    for (let level = 0; level < 40; level++) deepShared = { a: deepShared, b: reused };
    assert.doesNotMatch(JSON.stringify(toJsonSafe(deepShared)), /Circular/);
  });

  it('records a value whose toJSON records another value (a walk inside a walk)', () => {
    const inner: Record<string, unknown> = { name: 'inner' };
    inner.self = inner;
    const outer: Record<string, unknown> = {
      toJSON: () => ({ nested: toJsonSafe(inner), again: toJsonSafe(inner) }),
    };
    const holder: Record<string, unknown> = { outer };
    holder.back = holder;
    const expected = { name: 'inner', self: '[Circular]' };
    assert.deepEqual(toJsonSafe(holder), {
      outer: { nested: expected, again: expected },
      back: '[Circular]',
    });
  });

  it('records what toJSON gives and boxed primitives as JSON.stringify does (issue 15)', () => {
    class Money {
      constructor(readonly cents: number) {}
      toJSON(key: string) {
        return { amount: this.cents / 100, key };
      }
    }
    const value = {
      url: new URL('https://example.com/a?b=1'),
      number: new Number(5),
      string: new String('abc'),
      boolean: new Boolean(false),
      money: new Money(250),
      buffer: Buffer.from('hi'),
      list: [new Money(1), new URL('https://example.com/')],
      gone: { toJSON: () => undefined },
    };
    const expected: unknown = JSON.parse(JSON.stringify(value));
    assert.deepEqual(toJsonSafe(value), expected);
    assert.deepEqual(expected, {
      url: 'https://example.com/a?b=1',
      number: 5,
      string: 'abc',
      boolean: false,
      money: { amount: 2.5, key: 'money' },
      buffer: { type: 'Buffer', data: [104, 105] },
      list: [{ amount: 0.01, key: '0' }, 'https://example.com/'],
    });
    // Past JSON.stringify: a boxed bigint, and toJSON giving a value JSON cannot hold.
    assert.deepEqual(toJsonSafe({ big: Object(7n), odd: { toJSON: () => 9n } }), {
      big: '7',
      odd: '9',
    });
    const throwing = {
      toJSON() {
        throw new Error('no');
      },
    };
    assert.deepEqual(toJsonSafe({ throwing }), { throwing: '[Unreadable]' });
  });

  it('writes holes as null, -0 as 0, and keeps lone surrogates exact through JSON text', () => {
    const sparse: unknown[] = [1, , 3]; // eslint-disable-line no-sparse-arrays
    Object.assign(sparse, { named: 'ignored as JSON.stringify ignores it' });
    const encoded = toJsonSafe({ sparse, zero: -0, text: 'a\ud800b\udc00' });
    assert.deepEqual(encoded, { sparse: [1, null, 3], zero: 0, text: 'a\ud800b\udc00' });
    assert.ok(Object.is((encoded as { zero: number }).zero, 0));
    const text = toJsonText({ text: 'a\ud800b' });
    assert.equal(text, '{"text":"a\\ud800b"}');
    assert.equal((JSON.parse(text) as { text: string }).text, 'a\ud800b');
    assert.equal(toJsonText(undefined), 'null');
    assert.equal(toJsonText({ a: [1] }, 2), '{\n  "a": [\n    1\n  ]\n}');
  });
});
