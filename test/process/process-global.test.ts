import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { processGlobal } from '../../src/process/process-global.js';

describe('processGlobal()', () => {
  it('defines a frozen holder once, non-writable, non-configurable and non-enumerable', () => {
    const key = Symbol.for(`warrant.test.processGlobal.${process.pid}`);
    let created = 0;
    const make = () => {
      created += 1;
      const secret = new Map<string, number>([['a', 1]]);
      return { get: (name: string) => secret.get(name) };
    };
    const holder = processGlobal(key, make);
    assert.equal(processGlobal(key, make), holder);
    assert.equal(created, 1);
    assert.ok(Object.isFrozen(holder));
    const descriptor = Object.getOwnPropertyDescriptor(globalThis, key);
    assert.deepEqual(
      { ...descriptor, value: undefined },
      { value: undefined, writable: false, enumerable: false, configurable: false },
    );
    const global = globalThis as unknown as Record<symbol, unknown>;
    assert.throws(() => {
      global[key] = {};
    }, TypeError);
    assert.equal(Reflect.deleteProperty(globalThis, key), false);
    assert.throws(() => Object.defineProperty(globalThis, key, { value: {} }), TypeError);
    assert.throws(() => {
      (holder as { get: unknown }).get = () => 2;
    }, TypeError);
    assert.equal(processGlobal(key, make).get('a'), 1);
  });
});
