// docs/api.md, "Plan version 2.0": the value domain and its bounds, walked without running any
// code of the value, aliases kept and cycles refused.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  GOVERNED_LIMITS,
  GovernedBudget,
  cloneGoverned,
  copyGoverned,
  governedField,
} from '../../src/plan/governed-value.js';

function problemOf(value: unknown, budget?: GovernedBudget) {
  const copied = copyGoverned(value, budget);
  assert.equal(copied.ok, false, 'expected the value to be refused');
  return (copied as { ok: false; problem: { code: string; path: unknown[]; what: string } })
    .problem;
}

function copyOf(value: unknown, budget?: GovernedBudget): unknown {
  const copied = copyGoverned(value, budget);
  assert.ok(copied.ok, copied.ok ? '' : JSON.stringify(copied.problem));
  return copied.value;
}

/** `levels` nested arrays around 0: `[[0]]` is 2 levels. */
function nested(levels: number): unknown {
  let value: unknown = 0;
  for (let level = 0; level < levels; level++) value = [value];
  return value;
}

class Point {
  x = 1;
}

describe('copyGoverned(): the value domain', () => {
  it('copies plain JSON data detached and deep-frozen', () => {
    const value = { a: [1, 'two', true, null, { b: -0.5 }], c: {} };
    const copy = copyOf(value) as typeof value;
    assert.deepEqual(copy, value);
    assert.notEqual(copy, value);
    assert.notEqual(copy.a, value.a);
    assert.ok(Object.isFrozen(copy) && Object.isFrozen(copy.a) && Object.isFrozen(copy.a[4]));
    // A null-prototype object is plain data; its copy is an ordinary object.
    const bare = Object.assign(Object.create(null) as object, { k: 1 });
    assert.deepEqual(copyOf(bare), { k: 1 });
  });

  it('keeps aliases (the same object twice is one copy) and refuses cycles', () => {
    const shared = { n: 1 };
    const copy = copyOf({ a: shared, b: [shared] }) as { a: object; b: object[] };
    assert.equal(copy.a, copy.b[0]);
    const cycle: Record<string, unknown> = { a: 1 };
    cycle.self = { back: cycle };
    assert.deepEqual(problemOf(cycle), {
      code: 'VALUE_NOT_PLAIN_DATA',
      path: ['self', 'back'],
      what: 'a cycle',
    });
  });

  it('refuses every value kind outside the domain, naming where', () => {
    const sparse: unknown[] = [1];
    sparse[2] = 3;
    const symbolKey = { a: 1, [Symbol('k')]: 2 };
    const hidden = Object.defineProperty({ a: 1 }, 'h', { value: 2, enumerable: false });
    const accessor = Object.defineProperty({}, 'g', { get: () => 1, enumerable: true });
    const cases: [unknown, string][] = [
      [new Proxy({}, {}), 'a proxy'],
      [accessor, 'an accessor (getter or setter)'],
      [new Date(0), 'a Date'],
      [new Map(), 'a Map'],
      [new Set(), 'a Set'],
      [new Point(), 'a class instance'],
      [() => 1, 'a function'],
      [Symbol('s'), 'a symbol'],
      [1n, 'a bigint'],
      [sparse, 'a sparse array'],
      [JSON.parse('{"__proto__": 1}'), 'an own __proto__ key'],
      [undefined, 'undefined'],
      [NaN, 'NaN'],
      [Infinity, 'Infinity'],
      [-Infinity, '-Infinity'],
      [symbolKey, 'a symbol key'],
      [hidden, 'a non-enumerable property'],
    ];
    for (const [value, what] of cases) {
      const problem = problemOf({ list: [{ at: value }] });
      assert.equal(problem.code, 'VALUE_NOT_PLAIN_DATA', what);
      assert.equal(problem.what, what);
      const where =
        what === 'an accessor (getter or setter)'
          ? ['list', 0, 'at', 'g']
          : what === 'an own __proto__ key'
            ? ['list', 0, 'at', '__proto__']
            : what === 'a non-enumerable property'
              ? ['list', 0, 'at', 'h']
              : ['list', 0, 'at'];
      assert.deepEqual(problem.path, where, what);
    }
  });

  it('runs no code of the value: no proxy trap, no getter', () => {
    let ran = 0;
    const traps = new Proxy(
      {},
      Object.fromEntries(
        ['get', 'ownKeys', 'getOwnPropertyDescriptor', 'getPrototypeOf', 'has'].map((trap) => [
          trap,
          () => {
            ran++;
            throw new Error('trap ran');
          },
        ]),
      ),
    );
    assert.equal(problemOf({ p: traps }).what, 'a proxy');
    const getter = Object.defineProperty({}, 'g', {
      get() {
        ran++;
        return 1;
      },
      enumerable: true,
    });
    assert.equal(problemOf(getter).what, 'an accessor (getter or setter)');
    assert.equal(ran, 0);
  });

  it('takes 128 levels and refuses 129, an alias counting every path to it', () => {
    assert.equal(GOVERNED_LIMITS.depth, 128);
    copyOf(nested(128));
    assert.deepEqual(problemOf(nested(129)).code, 'VALUE_TOO_DEEP');
    // The alias is first met shallow, then again one level deeper than the bound allows.
    const deep = nested(100) as unknown[];
    copyOf({ shallow: deep, deeper: wrap(deep, 27) });
    assert.equal(problemOf({ shallow: deep, deeper: wrap(deep, 28) }).code, 'VALUE_TOO_DEEP');
  });

  it('takes 10,000 containers and refuses 10,001 (each distinct one counted once)', () => {
    const at = Array.from({ length: 9_999 }, () => ({}));
    copyOf(at);
    const past = Array.from({ length: 10_000 }, () => ({}));
    assert.equal(problemOf(past).code, 'VALUE_TOO_MANY_CONTAINERS');
    // The same object 50,000 times is two containers.
    const shared = {};
    copyOf(Array.from({ length: 50_000 }, () => shared));
  });

  it('takes 100,000 edges and refuses 100,001', () => {
    copyOf(new Array<number>(100_000).fill(0));
    assert.equal(problemOf(new Array<number>(100_001).fill(0)).code, 'VALUE_TOO_MANY_EDGES');
    const keys = Object.fromEntries(Array.from({ length: 99_999 }, (_, i) => [`k${i}`, 0]));
    copyOf({ keys });
    assert.equal(problemOf({ keys, one: 0, more: 0 }).code, 'VALUE_TOO_MANY_EDGES');
  });

  it('takes 1,048,576 characters of strings and keys and refuses one more', () => {
    const limit = GOVERNED_LIMITS.chars;
    copyOf('x'.repeat(limit));
    assert.equal(problemOf('x'.repeat(limit + 1)).code, 'VALUE_TOO_LONG');
    copyOf({ ab: 'x'.repeat(limit - 2) });
    assert.equal(problemOf({ abc: 'x'.repeat(limit - 2) }).code, 'VALUE_TOO_LONG');
    // UTF-16 code units: one astral character is two.
    assert.equal(problemOf('😀'.repeat(limit / 2) + 'x').code, 'VALUE_TOO_LONG');
  });

  it('shares one budget across the values walked with it', () => {
    const budget = new GovernedBudget();
    copyOf('x'.repeat(600_000), budget);
    assert.equal(budget.spent(), false);
    assert.equal(problemOf('y'.repeat(600_000), budget).code, 'VALUE_TOO_LONG');
    assert.equal(budget.spent(), true);
  });
});

/** `value` inside `levels` more arrays. */
function wrap(value: unknown, levels: number): unknown {
  let wrapped = value;
  for (let level = 0; level < levels; level++) wrapped = [wrapped];
  return wrapped;
}

describe('cloneGoverned()', () => {
  it('makes a fresh mutable copy of a frozen copy, aliases kept', () => {
    const shared = { n: 1 };
    const frozen = copyOf({ a: shared, b: [shared, 'text'] }) as Record<string, unknown>;
    const clone = cloneGoverned(frozen) as { a: { n: number }; b: unknown[] };
    assert.deepEqual(clone, frozen);
    assert.equal(clone.a, clone.b[0]);
    assert.ok(!Object.isFrozen(clone) && !Object.isFrozen(clone.a));
    clone.a.n = 2;
    assert.deepEqual(frozen.a, { n: 1 });
  });
});

describe('governedField()', () => {
  it('names a path as admission names fields', () => {
    assert.equal(governedField([]), 'input');
    assert.equal(governedField(['a', 0, 'b']), 'input.a.0.b');
  });
});
