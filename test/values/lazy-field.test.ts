// Fields computed on first read (src/values/lazy-field.ts): readers see a value like any other
// field, the source stays out of reach, and a field is computed only when read.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { lazyField, setLazyField } from '../../src/values/lazy-field.js';

describe('lazy fields', () => {
  it('reads as an enumerable value everywhere a reader looks, computed only when read', () => {
    let reads = 0;
    const kind = lazyField((source: { n: number }) => {
      reads++;
      return source.n * 2;
    });
    const target: Record<string, unknown> = { a: 1 };
    setLazyField(target, 'twice', kind, { n: 21 });
    target.z = 'last';
    Object.freeze(target);
    assert.equal(reads, 0, 'nothing computed before a read');
    assert.equal(target.twice, 42);
    assert.deepEqual(Object.keys(target), ['a', 'twice', 'z']);
    assert.equal(JSON.stringify(target), '{"a":1,"twice":42,"z":"last"}');
    assert.deepStrictEqual({ ...target }, { a: 1, twice: 42, z: 'last' });
    assert.deepStrictEqual(target, { a: 1, twice: 42, z: 'last' });
    assert.ok(Object.isFrozen(target));
  });

  it('keeps its source out of reach: no key, no symbol, no way to set the field', () => {
    const source = { secret: 'inside' };
    const target = {};
    setLazyField(
      target,
      'value',
      lazyField((held: typeof source) => held.secret.length),
      source,
    );
    assert.deepEqual(Reflect.ownKeys(target), ['value']);
    assert.throws(() => {
      (target as { value: number }).value = 1;
    }, TypeError);
    assert.equal((target as { value: number }).value, 6);
  });

  it('refuses a second lazy field of another source on one object rather than losing the first', () => {
    const kind = lazyField((source: number) => source);
    const target = {};
    setLazyField(target, 'first', kind, 1);
    assert.throws(() => setLazyField(target, 'second', kind, 2), /another source/);
    assert.equal((target as { first: number }).first, 1);
    assert.equal('second' in target, false);
  });

  it('reads several fields, of several kinds, from the one source of an object', () => {
    const source = { a: 1, b: 'two' };
    const first = lazyField((from: typeof source) => from.a);
    const second = lazyField((from: typeof source) => from.b);
    const target = { kept: true };
    setLazyField(target, 'a', first, source);
    setLazyField(target, 'b', second, source);
    Object.freeze(target);
    assert.deepEqual(target, { kept: true, a: 1, b: 'two' });
    assert.equal(JSON.stringify(target), '{"kept":true,"a":1,"b":"two"}');
  });
});
