import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  isArrayValue,
  isPlainObject,
  readArray,
  readField,
  readKeys,
} from '../../src/values/hostile-reads.js';

const fail = (problem: string) => Object.assign(new TypeError(`x ${problem}`), { code: 'CODED' });

describe('hostile reads', () => {
  const { proxy: revoked, revoke } = Proxy.revocable([], {});
  revoke();
  const throwing = Object.defineProperty({}, 'a', {
    get() {
      throw new Error('getter');
    },
  });

  it('reads a field once, and turns a throwing getter or trap into the coded error', () => {
    let reads = 0;
    const counted = Object.defineProperty({}, 'a', { get: () => ++reads });
    assert.equal(readField(counted, 'a', fail), 1);
    assert.equal(reads, 1);
    assert.throws(() => readField(throwing, 'a', fail), {
      code: 'CODED',
      message: 'x could not be read (getter)',
    });
    assert.throws(() => readField(revoked, 'a', fail), { code: 'CODED' });
  });

  it('tells arrays apart without letting a revoked proxy throw a raw TypeError', () => {
    assert.equal(isArrayValue([], fail), true);
    assert.equal(isArrayValue({}, fail), false);
    assert.throws(() => isArrayValue(revoked, fail), { code: 'CODED' });
  });

  it('copies an array once, bounded by its length, with coded errors for unreadable parts', () => {
    assert.deepEqual(readArray(['a', 'b'], 10, fail), ['a', 'b']);
    assert.throws(() => readArray(['a', 'b'], 1, fail), { code: 'CODED' });
    assert.throws(() => readArray(revoked as unknown[], 10, fail), { code: 'CODED' });
    const element = Object.defineProperty(['a'], 0, {
      get() {
        throw new Error('index');
      },
    });
    assert.throws(() => readArray(element, 10, fail), {
      code: 'CODED',
      message: 'x [0] could not be read (index)',
    });
  });

  it('lists keys and tells plain objects apart, with coded errors for hostile proxies', () => {
    assert.deepEqual(readKeys({ a: 1, b: 2 }, fail), ['a', 'b']);
    assert.throws(() => readKeys(revoked, fail), { code: 'CODED' });
    assert.equal(isPlainObject({}, fail), true);
    assert.equal(isPlainObject(Object.create(null), fail), true);
    for (const value of [
      [],
      new Map(),
      new Date(0),
      new (class Account {
        id = 'a';
      })(),
      null,
      'x',
    ]) {
      assert.equal(isPlainObject(value, fail), false);
    }
    const trap = new Proxy(
      {},
      {
        getPrototypeOf() {
          throw new Error('trap');
        },
      },
    );
    assert.throws(() => isPlainObject(trap, fail), { code: 'CODED' });
    assert.throws(() => isPlainObject(revoked, fail), { code: 'CODED' });
  });
});
