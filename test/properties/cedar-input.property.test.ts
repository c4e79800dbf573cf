// docs/api.md, "Policy as code: Cedar": every input value reaches the policies, or the step is
// denied. For any JSON input, the request carries all of it (read back by the documented
// encoding, it is the input) or the authorizer denies the step; and Cedar itself sees exactly
// the documented value (a policy comparing the whole input with it, written as Cedar text,
// allows).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { cedarAuthorizer } from '../../src/index.js';
import { MAX_INPUT_DEPTH, cedarInput } from '../../src/policy/cedar-request.js';
import { defineOwn, settings } from './support.js';

const options = {
  seed: settings.seed,
  ...(settings.path === undefined ? {} : { path: settings.path }),
  endOnFailure: false,
};
// Each run of the second property parses a policy set in Cedar.
const CEDAR_RUNS = Math.min(settings.numRuns, 1_000);

/** Keys Cedar's JSON reserves, their escapes, and other keys (lone surrogates included). */
const keyArb = fc.oneof(
  fc.constantFrom(
    '__entity',
    '___entity',
    '____entity',
    '__extn',
    '___extn',
    '__expr',
    '___expr',
    '_entity',
    '__entityx',
    '__proto__',
    'type',
    'id',
    'fn',
    'arg',
    '',
  ),
  fc.string({ maxLength: 4 }),
  fc.string({ maxLength: 3, unit: 'binary' }),
);

const leafArb = fc.oneof(
  fc.integer(),
  fc.maxSafeInteger(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(0.5, -1.25, 0.0001, 1e-7, 922337203685477.5, -922337203685477.625),
  fc.constantFrom(2 ** 53, 2 ** 62, 2 ** 63 - 1024, -(2 ** 63), 2 ** 63, 1e19, 1e21),
  fc.integer({ min: -99_999_999, max: 99_999_999 }).map((n) => n / 10_000),
  fc.string({ maxLength: 5 }),
  fc.string({ maxLength: 3, unit: 'binary' }),
  fc.boolean(),
  fc.constant(null),
);

const jsonArb: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leafArb,
    fc.array(tie('value'), { maxLength: 3 }),
    // Entries, so that a `__proto__` key is an own key, as JSON.parse makes it.
    fc.array(fc.tuple(keyArb, tie('value')), { maxLength: 3 }).map((entries) => {
      const object: Record<string, unknown> = {};
      for (const [key, value] of entries) defineOwn(object, key, value);
      return object;
    }),
  ),
})).value;

/** A value, often inside `levels` more objects or arrays: around the depth limit too. */
function nestedArb(maxLevels: number): fc.Arbitrary<unknown> {
  return fc
    .tuple(
      jsonArb,
      fc.oneof(
        { weight: 3, arbitrary: fc.constant(0) },
        fc.nat({ max: maxLevels }),
        fc.integer({ min: maxLevels - 3, max: maxLevels }),
      ),
      fc.boolean(),
    )
    .map(([value, levels, arrays]) => {
      let nested = value;
      for (let level = 0; level < levels; level++) nested = arrays ? [nested] : { pad: nested };
      return nested;
    });
}

/** Levels of objects and arrays: a scalar is 0. */
function depthOf(value: unknown): number {
  if (typeof value !== 'object' || value === null) return 0;
  let deepest = 0;
  for (const item of Object.values(value)) deepest = Math.max(deepest, depthOf(item));
  return deepest + 1;
}

const LONE_SURROGATE = /\p{Surrogate}/u;

/** Cedar reads every string and key (none holds a lone surrogate). */
function readable(value: unknown): boolean {
  if (typeof value === 'string') return !LONE_SURROGATE.test(value);
  if (typeof value !== 'object' || value === null) return true;
  return Object.entries(value).every(([key, item]) => !LONE_SURROGATE.test(key) && readable(item));
}

const RESERVED = /^_*__(?:entity|extn|expr)$/;
const DECIMAL = /^-?\d+\.\d{1,4}$/;
const inDecimalRange = (text: string): boolean => {
  const scaled = BigInt(text.replace('.', '') + '0'.repeat(4 - (text.split('.')[1]?.length ?? 0)));
  return scaled < 2n ** 63n && scaled >= -(2n ** 63n);
};
/** A number Cedar holds as a Long. */
const isLong = (value: number): boolean => Number.isInteger(value) && Math.abs(value) < 2 ** 63;
/** A number other than a Long that Cedar holds as a decimal. */
const isDecimal = (value: number): boolean =>
  DECIMAL.test(String(value)) && inDecimalRange(String(value));

/** Reads a carried value back by the documented encoding, checking it is that encoding. */
function decode(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(decode);
  if (typeof value === 'number') {
    assert.ok(isLong(value), `a raw number is a Long: ${value}`);
    return value;
  }
  assert.notEqual(value, null, 'null is never carried as itself');
  if (typeof value !== 'object' || value === null) return value;
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record);
  if (keys.length === 1 && keys[0] === '__entity') {
    const { type, id } = record['__entity'] as { type: string; id: string };
    if (type === 'Warrant::Null') {
      assert.equal(id, 'null');
      return null;
    }
    assert.equal(type, 'Warrant::Number');
    const number = Number(id);
    assert.equal(String(number), id);
    assert.ok(!isLong(number) && !isDecimal(number), id);
    return number;
  }
  if (keys.length === 1 && keys[0] === '__extn') {
    const { fn, arg } = record['__extn'] as { fn: string; arg: string };
    assert.equal(fn, 'decimal');
    const number = Number(arg);
    assert.ok(!isLong(number) && isDecimal(number) && String(number) === arg, arg);
    return number;
  }
  const out: Record<string, unknown> = {};
  for (const key of keys) {
    assert.ok(!/^__(?:entity|extn|expr)$/.test(key), `no reserved key reaches Cedar: ${key}`);
    defineOwn(out, RESERVED.test(key) ? key.slice(1) : key, decode(record[key]));
  }
  return out;
}

/** The input as JSON reads it: -0 is 0. */
function normalized(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(normalized);
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) defineOwn(out, key, normalized(item));
    return out;
  }
  return value === 0 ? 0 : value;
}

/** Cedar text of a string: printable ASCII as itself, the rest as \u{…} escapes. */
function cedarString(text: string): string {
  let out = '"';
  for (const char of text) {
    const code = char.codePointAt(0) as number;
    if (char === '"' || char === '\\') out += `\\${char}`;
    else if (code >= 0x20 && code < 0x7f) out += char;
    else out += `\\u{${code.toString(16)}}`;
  }
  return `${out}"`;
}

/** The Cedar expression of an input value, as docs/api.md documents the request. */
function cedarText(value: unknown): string {
  if (value === null) return 'Warrant::Null::"null"';
  if (typeof value === 'string') return cedarString(value);
  if (typeof value === 'boolean') return String(value);
  if (typeof value === 'number') {
    if (isLong(value)) return String(value === 0 ? 0 : value);
    return isDecimal(value)
      ? `decimal("${String(value)}")`
      : `Warrant::Number::${cedarString(String(value))}`;
  }
  if (Array.isArray(value)) return `[${value.map(cedarText).join(', ')}]`;
  const attributes = Object.entries(value as object).map(
    ([key, item]) => `${cedarString(RESERVED.test(key) ? `_${key}` : key)}: ${cedarText(item)}`,
  );
  return `{${attributes.join(', ')}}`;
}

const CAPABILITY = { name: 'files.read', version: '1.0.0', risk: 'read' } as const;

describe('Cedar input property', () => {
  it(`carries every JSON input whole, read back by the documented encoding, or refuses it (seed ${settings.seed}, ${settings.numRuns} runs)`, () => {
    fc.assert(
      fc.property(nestedArb(MAX_INPUT_DEPTH + 2), (input) => {
        const answer = cedarInput(input);
        if (depthOf(input) <= MAX_INPUT_DEPTH && readable(input)) {
          assert.ok(answer.ok, answer.ok ? '' : answer.reason);
          assert.deepStrictEqual(decode(answer.value), normalized(input));
        } else {
          assert.ok(!answer.ok, 'refused');
        }
      }),
      { ...options, numRuns: settings.numRuns },
    );
  });

  it(`gives Cedar exactly the documented value, or denies the step (seed ${settings.seed}, ${CEDAR_RUNS} runs)`, () => {
    fc.assert(
      fc.property(nestedArb(40), fc.boolean(), (input, tooDeep) => {
        // Now and then past the limit: denied whatever the policies say.
        let asked = input;
        if (tooDeep) for (let level = 0; level <= MAX_INPUT_DEPTH; level++) asked = [asked];
        const policies =
          tooDeep || !readable(input)
            ? 'permit(principal, action, resource);'
            : `permit(principal, action, resource) when { context.input == ${cedarText(asked)} };`;
        const answer = cedarAuthorizer({ policies }).authorize({
          jobId: 'job',
          stepId: 'a',
          capability: CAPABILITY,
          input: asked,
          inputDigest: 'sha256:00',
        }) as { decision: string; reason?: string };
        if (tooDeep || !readable(input)) {
          assert.equal(answer.decision, 'deny');
          assert.match(answer.reason ?? '', /^Input cannot be given to Cedar: /);
        } else {
          assert.deepEqual(answer, { decision: 'allow' });
        }
      }),
      { ...options, numRuns: CEDAR_RUNS },
    );
  });
});
