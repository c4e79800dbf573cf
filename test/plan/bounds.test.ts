// docs/api.md, "Bounds": the checker of step bounds, keyword by keyword, nested, and against a
// straightforward reference on random bounds and values (fast-check).
import assert from 'node:assert/strict';
import { isDeepStrictEqual } from 'node:util';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  BOUND_KEYWORDS,
  PATTERN_MATCH_TIMEOUT_MS,
  checkBounds,
  compileBounds,
  type BoundSchema,
  type BoundsCheck,
  type StepBounds,
} from '../../src/plan/bounds.js';

const OK: BoundsCheck = { ok: true };
const fails = (field: string, why: string): BoundsCheck => ({ ok: false, field, why });

describe('checkBounds() keyword by keyword', () => {
  it('type, integer and several types', () => {
    assert.deepEqual(checkBounds({ a: { type: 'string' } }, { a: 'x' }), OK);
    assert.deepEqual(
      checkBounds({ a: { type: 'string' } }, { a: 1 }),
      fails('a', 'a is a number, not of type string'),
    );
    assert.deepEqual(checkBounds({ a: { type: 'integer' } }, { a: 2 }), OK);
    assert.deepEqual(
      checkBounds({ a: { type: 'integer' } }, { a: 2.5 }),
      fails('a', 'a is a number, not of type integer'),
    );
    assert.deepEqual(checkBounds({ a: { type: ['null', 'boolean'] } }, { a: null }), OK);
    assert.deepEqual(
      checkBounds({ a: { type: ['null', 'boolean'] } }, { a: [] }),
      fails('a', 'a is an array, not one of the types null, boolean'),
    );
    assert.deepEqual(checkBounds({ a: { type: 'object' } }, { a: {} }), OK);
  });

  it('const and enum, by JSON equality (key order aside)', () => {
    assert.deepEqual(checkBounds({ a: { const: { x: 1, y: [2] } } }, { a: { y: [2], x: 1 } }), OK);
    assert.deepEqual(
      checkBounds({ a: { const: 'EUR' } }, { a: 'USD' }),
      fails('a', 'a "USD" is not "EUR"'),
    );
    assert.deepEqual(checkBounds({ a: { enum: ['x', 2, null] } }, { a: null }), OK);
    assert.deepEqual(
      checkBounds({ a: { enum: ['x', 2] } }, { a: '2' }),
      fails('a', 'a "2" is not one of "x", 2'),
    );
  });

  it('minimum, exclusiveMinimum, maximum, exclusiveMaximum', () => {
    const b = (bound: BoundSchema): StepBounds => ({ amount: bound });
    assert.deepEqual(checkBounds(b({ minimum: 10 }), { amount: 10 }), OK);
    assert.deepEqual(
      checkBounds(b({ minimum: 10 }), { amount: 9 }),
      fails('amount', 'amount 9 is below minimum 10'),
    );
    assert.deepEqual(
      checkBounds(b({ exclusiveMinimum: 10 }), { amount: 10 }),
      fails('amount', 'amount 10 is not above exclusiveMinimum 10'),
    );
    assert.deepEqual(checkBounds(b({ maximum: 100 }), { amount: 100 }), OK);
    assert.deepEqual(
      checkBounds(b({ maximum: 100 }), { amount: 250 }),
      fails('amount', 'amount 250 is above maximum 100'),
    );
    assert.deepEqual(
      checkBounds(b({ exclusiveMaximum: 100 }), { amount: 100 }),
      fails('amount', 'amount 100 is not below exclusiveMaximum 100'),
    );
  });

  it('minLength and maxLength count code points; pattern is unanchored, with the u flag', () => {
    assert.deepEqual(checkBounds({ s: { maxLength: 2 } }, { s: '😀😀' }), OK);
    assert.deepEqual(
      checkBounds({ s: { maxLength: 2 } }, { s: 'abc' }),
      fails('s', 's is 3 characters, more than maxLength 2'),
    );
    assert.deepEqual(
      checkBounds({ s: { minLength: 2 } }, { s: '😀' }),
      fails('s', 's is 1 characters, fewer than minLength 2'),
    );
    assert.deepEqual(
      checkBounds({ to: { pattern: '@example\\.com$' } }, { to: 'a@example.com' }),
      OK,
    );
    assert.deepEqual(
      checkBounds({ to: { pattern: '^[a-z]+@example\\.com$' } }, { to: 'eve@evil.com' }),
      fails('to', 'to does not match pattern "^[a-z]+@example\\\\.com$"'),
    );
    assert.deepEqual(checkBounds({ to: { pattern: '^\\p{L}+$' } }, { to: 'Zoë' }), OK);
  });

  it('a pattern match that runs too long fails the bound: closed, not hung', () => {
    // safe-regex2 lets this one through; backtracking would take minutes on 40 characters.
    const bounds = compileBounds({ to: { pattern: '^(a|a)*$' } });
    assert.equal(bounds.ok, true);
    const started = performance.now();
    const check = checkBounds({ to: { pattern: '^(a|a)*$' } }, { to: `${'a'.repeat(40)}b` });
    assert.deepEqual(
      check,
      fails('to', `to took over ${PATTERN_MATCH_TIMEOUT_MS} ms to match pattern "^(a|a)*$"`),
    );
    assert.ok(performance.now() - started < 60_000);
  });

  it('maxItems and items, each item by index', () => {
    assert.deepEqual(checkBounds({ l: { maxItems: 2 } }, { l: [1, 2] }), OK);
    assert.deepEqual(
      checkBounds({ l: { maxItems: 2 } }, { l: [1, 2, 3] }),
      fails('l', 'l has 3 items, more than maxItems 2'),
    );
    assert.deepEqual(
      checkBounds({ l: { items: { maximum: 5 } } }, { l: [1, 9, 7] }),
      fails('l', 'l.1 9 is above maximum 5'),
    );
  });

  it('required and properties, nested; an absent property is only checked by required', () => {
    const bounds: StepBounds = {
      invoice: {
        type: 'object',
        required: ['lines'],
        properties: {
          currency: { enum: ['EUR'] },
          lines: {
            maxItems: 3,
            items: {
              required: ['sku'],
              properties: { qty: { type: 'integer', minimum: 1 }, sku: { pattern: '^A-' } },
            },
          },
        },
      },
    };
    const good = { invoice: { lines: [{ sku: 'A-1', qty: 2 }, { sku: 'A-2' }] } };
    assert.deepEqual(checkBounds(bounds, good), OK);
    assert.deepEqual(
      checkBounds(bounds, { invoice: {} }),
      fails('invoice', 'invoice.lines is absent (required)'),
    );
    assert.deepEqual(
      checkBounds(bounds, { invoice: { lines: [{ sku: 'A-1' }, { qty: 1 }] } }),
      fails('invoice', 'invoice.lines.1.sku is absent (required)'),
    );
    assert.deepEqual(
      checkBounds(bounds, { invoice: { lines: [{ sku: 'A-1', qty: 0 }] } }),
      fails('invoice', 'invoice.lines.0.qty 0 is below minimum 1'),
    );
    assert.deepEqual(
      checkBounds(bounds, { invoice: { currency: 'USD', lines: [] } }),
      fails('invoice', 'invoice.currency "USD" is not one of "EUR"'),
    );
  });

  it('a keyword of another type fails, unless type names the value type (stricter than JSON Schema)', () => {
    assert.deepEqual(
      checkBounds({ amount: { maximum: 100 } }, { amount: '1000' }),
      fails('amount', 'amount is a string; maximum applies to a number'),
    );
    assert.deepEqual(
      checkBounds({ to: { pattern: '^a' } }, { to: ['b'] }),
      fails('to', 'to is an array; pattern applies to a string'),
    );
    assert.deepEqual(
      checkBounds({ amount: { type: ['number', 'null'], maximum: 1 } }, { amount: null }),
      OK,
    );
  });

  it('every bounded field must be present; fields are tried by name, whatever their order', () => {
    assert.deepEqual(checkBounds({ a: {} }, {}), fails('a', 'a is absent'));
    assert.deepEqual(checkBounds({ a: {} }, 'not an object'), fails('a', 'a is absent'));
    const input = { a: 5, b: 5 };
    const one = checkBounds({ b: { maximum: 1 }, a: { maximum: 1 } }, input);
    const other = checkBounds({ a: { maximum: 1 }, b: { maximum: 1 } }, input);
    assert.deepEqual(one, fails('a', 'a 5 is above maximum 1'));
    assert.deepEqual(other, one);
    assert.deepEqual(checkBounds({}, { anything: 1 }), OK);
  });

  it('fails closed on bounds that are not valid, and takes compiled bounds as they are', () => {
    assert.deepEqual(
      checkBounds({ a: { format: 'email' } } as never, { a: 'x' }),
      fails('a', 'the bounds are not valid bounds'),
    );
    assert.deepEqual(
      checkBounds({ a: { pattern: '(a+)+$' } }, { a: 'a' }),
      fails('a', 'the bounds are not valid bounds'),
    );
    const compiled = compileBounds(Object.freeze({ a: Object.freeze({ maximum: 1 }) }));
    assert.ok(compiled.ok);
    assert.deepEqual(
      checkBounds(compiled.compiled, { a: 2 }),
      fails('a', 'a 2 is above maximum 1'),
    );
    // A lookalike of compiled bounds is judged as bounds: its `fields` is no bound keyword.
    assert.equal(checkBounds({ fields: [] } as never, { fields: 1 }).ok, false);
  });

  it('lists its keywords: exactly the subset of the contract', () => {
    assert.deepEqual([...BOUND_KEYWORDS].sort(), [
      'const',
      'enum',
      'exclusiveMaximum',
      'exclusiveMinimum',
      'items',
      'maxItems',
      'maxLength',
      'maximum',
      'minLength',
      'minimum',
      'pattern',
      'properties',
      'required',
      'type',
    ]);
  });
});

// A straightforward reference: what each keyword means, written out again, case by case.
type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

function kind(value: Json): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

/** JSON equality: through JSON text, so a null-prototype object equals a plain one. */
function sameJson(a: unknown, b: unknown): boolean {
  return isDeepStrictEqual(JSON.parse(JSON.stringify(a)), JSON.parse(JSON.stringify(b)));
}

function reference(bound: BoundSchema, value: Json): boolean {
  const typed = bound.type !== undefined;
  if (typed) {
    const types = Array.isArray(bound.type) ? bound.type : [bound.type];
    const fits = types.some((type) =>
      type === 'integer' ? Number.isInteger(value) : type === kind(value),
    );
    if (!fits) return false;
  }
  if ('const' in bound && !sameJson(value, bound.const)) return false;
  if (bound.enum !== undefined && !bound.enum.some((choice) => sameJson(value, choice)))
    return false;
  const ofKind = (keys: (keyof BoundSchema)[], wanted: string): boolean =>
    kind(value) === wanted || typed || keys.every((key) => bound[key] === undefined);
  if (!ofKind(['minimum', 'exclusiveMinimum', 'maximum', 'exclusiveMaximum'], 'number'))
    return false;
  if (!ofKind(['minLength', 'maxLength', 'pattern'], 'string')) return false;
  if (!ofKind(['maxItems', 'items'], 'array')) return false;
  if (!ofKind(['required', 'properties'], 'object')) return false;
  if (typeof value === 'number') {
    if (bound.minimum !== undefined && !(value >= bound.minimum)) return false;
    if (bound.exclusiveMinimum !== undefined && !(value > bound.exclusiveMinimum)) return false;
    if (bound.maximum !== undefined && !(value <= bound.maximum)) return false;
    if (bound.exclusiveMaximum !== undefined && !(value < bound.exclusiveMaximum)) return false;
  }
  if (typeof value === 'string') {
    const length = [...value].length;
    if (bound.minLength !== undefined && length < bound.minLength) return false;
    if (bound.maxLength !== undefined && length > bound.maxLength) return false;
    if (bound.pattern !== undefined && !new RegExp(bound.pattern, 'u').test(value)) return false;
  }
  if (Array.isArray(value)) {
    if (bound.maxItems !== undefined && value.length > bound.maxItems) return false;
    const items = bound.items;
    if (items !== undefined && !value.every((item) => reference(items, item))) return false;
  }
  if (kind(value) === 'object') {
    const object = value as { [key: string]: Json };
    if (!(bound.required ?? []).every((name) => Object.hasOwn(object, name))) return false;
    for (const [name, inner] of Object.entries(bound.properties ?? {}))
      if (Object.hasOwn(object, name) && !reference(inner, object[name] as Json)) return false;
  }
  return true;
}

/** The reference's answer for a step: the first field by name that is absent or fails. */
function referenceCheck(bounds: StepBounds, input: { [key: string]: Json }): string | undefined {
  for (const field of Object.keys(bounds).sort()) {
    if (!Object.hasOwn(input, field)) return field;
    if (!reference(bounds[field] as BoundSchema, input[field] as Json)) return field;
  }
  return undefined;
}

const names = fc.constantFrom('a', 'b', 'c');
const numbers = fc.oneof(fc.integer({ min: -5, max: 5 }), fc.constantFrom(0.5, -1.5, 2.25));
const strings = fc.oneof(
  fc.constantFrom('', 'a', 'ab', 'abc', 'A-1', 'zz', '😀', 'a😀'),
  fc.string({ maxLength: 4 }),
);
const scalars = fc.oneof(fc.constant(null), fc.boolean(), numbers, strings);
const values: fc.Arbitrary<Json> = fc.letrec<{ value: Json }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    scalars,
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(names, tie('value'), { maxKeys: 3 }),
  ),
})).value;

const bounds: fc.Arbitrary<BoundSchema> = fc.letrec<{ bound: BoundSchema }>((tie) => ({
  bound: fc.record(
    {
      type: fc.oneof(
        fc.constantFrom('string', 'number', 'integer', 'boolean', 'object', 'array', 'null'),
        fc.uniqueArray(fc.constantFrom('number', 'null', 'string', 'array'), {
          minLength: 1,
          maxLength: 2,
        }),
      ),
      const: scalars,
      enum: fc.array(values, { minLength: 1, maxLength: 3 }),
      minimum: numbers,
      exclusiveMinimum: numbers,
      maximum: numbers,
      exclusiveMaximum: numbers,
      minLength: fc.nat(3),
      maxLength: fc.nat(3),
      pattern: fc.constantFrom('^a', 'b$', '^[a-z]*$', '\\d', '😀', '^A-\\d$'),
      maxItems: fc.nat(3),
      items: tie('bound'),
      required: fc.uniqueArray(names, { maxLength: 2 }),
      properties: fc.dictionary(names, tie('bound'), { maxKeys: 2 }),
    },
    { requiredKeys: [] },
  ) as fc.Arbitrary<BoundSchema>,
})).bound;

describe('checkBounds() against a straightforward reference (fast-check)', () => {
  it('agrees on random bounds and values: satisfied, or the same first field', () => {
    fc.assert(
      fc.property(
        fc.dictionary(names, bounds, { maxKeys: 3 }),
        fc.dictionary(names, values, { maxKeys: 3 }),
        (stepBounds, input) => {
          assert.equal(compileBounds(stepBounds).ok, true);
          const check = checkBounds(stepBounds, input);
          const expected = referenceCheck(stepBounds, input);
          if (expected === undefined) assert.deepEqual(check, OK);
          else {
            assert.equal(check.ok, false);
            assert.equal(!check.ok && check.field, expected);
          }
          // Deterministic: the same answer again, and for the bounds written in another order.
          const reversed = Object.fromEntries(Object.entries(stepBounds).reverse());
          assert.deepEqual(checkBounds(reversed, input), check);
        },
      ),
      { numRuns: 2_000 },
    );
  });
});
