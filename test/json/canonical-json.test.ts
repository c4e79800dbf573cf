import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { canonicalJson, digestJson, hmacSha256Digest } from '../../src/json/canonical-json.js';

/** The IEEE 754 double whose bits are the given 16 hex digits (RFC 8785 appendix B notation). */
function fromBits(hex: string): number {
  const view = new DataView(new ArrayBuffer(8));
  view.setBigUint64(0, BigInt(`0x${hex}`));
  return view.getFloat64(0);
}

describe('canonicalJson (RFC 8785)', () => {
  it('matches the RFC example of section 3.2.2 (numbers, string escapes, literals)', () => {
    const input = JSON.parse(
      '{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],' +
        '"string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/",' +
        '"literals": [null, true, false]}',
    ) as unknown;
    assert.equal(
      canonicalJson(input),
      '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],' +
        '"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}',
    );
  });

  it('sorts keys by UTF-16 code units as in the RFC example of section 3.2.3', () => {
    const input = {
      '\u20ac': 'Euro Sign',
      '\r': 'Carriage Return',
      '\ufb33': 'Hebrew Letter Dalet With Dagesh',
      '1': 'One',
      '\ud83d\ude00': 'Emoji: Grinning Face',
      '\u0080': 'Control',
      '\u00f6': 'Latin Small Letter O With Diaeresis',
    };
    assert.equal(
      canonicalJson(input),
      '{"\\r":"Carriage Return","1":"One","\u0080":"Control",' +
        '"\u00f6":"Latin Small Letter O With Diaeresis","\u20ac":"Euro Sign",' +
        '"\ud83d\ude00":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}',
    );
  });

  it('serializes the numbers of RFC 8785 appendix B exactly', () => {
    const cases: [string, string][] = [
      ['0000000000000000', '0'],
      ['8000000000000000', '0'],
      ['0000000000000001', '5e-324'],
      ['8000000000000001', '-5e-324'],
      ['7fefffffffffffff', '1.7976931348623157e+308'],
      ['ffefffffffffffff', '-1.7976931348623157e+308'],
      ['4340000000000000', '9007199254740992'],
      ['c340000000000000', '-9007199254740992'],
      ['4430000000000000', '295147905179352830000'],
      ['44b52d02c7e14af5', '9.999999999999997e+22'],
      ['44b52d02c7e14af6', '1e+23'],
      ['44b52d02c7e14af7', '1.0000000000000001e+23'],
      ['444b1ae4d6e2ef4e', '999999999999999700000'],
      ['444b1ae4d6e2ef4f', '999999999999999900000'],
      ['444b1ae4d6e2ef50', '1e+21'],
      ['3eb0c6f7a0b5ed8c', '9.999999999999997e-7'],
      ['3eb0c6f7a0b5ed8d', '0.000001'],
      ['41b3de4355555553', '333333333.3333332'],
      ['41b3de4355555554', '333333333.33333325'],
      ['41b3de4355555555', '333333333.3333333'],
      ['41b3de4355555556', '333333333.3333334'],
      ['41b3de4355555557', '333333333.33333343'],
      ['becbf647612f3696', '-0.0000033333333333333333'],
      ['43143ff3c1cb0959', '1424953923781206.2'],
    ];
    for (const [bits, expected] of cases) {
      assert.equal(canonicalJson(fromBits(bits)), expected, bits);
    }
  });

  it('refuses NaN and infinities, as the RFC requires', () => {
    for (const bits of ['7fffffffffffffff', '7ff0000000000000', 'fff0000000000000']) {
      assert.throws(() => canonicalJson([fromBits(bits)]), TypeError, bits);
    }
  });

  it('keeps lone surrogates as escapes, so different strings never share a text', () => {
    assert.equal(canonicalJson({ a: '\ud800' }), '{"a":"\\ud800"}');
    assert.notEqual(canonicalJson('\ud800'), canonicalJson('\ufffd'));
  });

  it("writes what JSON.stringify writes with every object's keys sorted, for any JSON value", () => {
    // The reference: JSON.stringify for everything but objects, whose keys are sorted here (an
    // object rebuilt in sorted order would not do: integer-like keys always enumerate first).
    const reference = (value: unknown): string => {
      if (Array.isArray(value)) return `[${value.map(reference).join(',')}]`;
      if (value === null || typeof value !== 'object') return JSON.stringify(value);
      const entries = Object.keys(value)
        .sort()
        .map(
          (key) => `${JSON.stringify(key)}:${reference((value as Record<string, unknown>)[key])}`,
        );
      return `{${entries.join(',')}}`;
    };
    const text = fc.oneof(
      fc.string({ unit: 'binary' }),
      fc.string(),
      fc.constantFrom('"', '\\', '\u2028', '\ud800x', '\u001f'),
    );
    const json = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: 'small' },
        text,
        fc.double({ noNaN: true, noDefaultInfinity: true }),
        fc.integer(),
        fc.boolean(),
        fc.constant(null),
        fc.array(tie('value'), { maxLength: 4 }),
        fc.dictionary(text, tie('value'), { maxKeys: 5 }),
      ),
    })).value;
    fc.assert(
      fc.property(json, (value) => canonicalJson(value) === reference(value)),
      { numRuns: 500 },
    );
  });

  it('sorts objects of many keys as it sorts a few', () => {
    const keys = Array.from({ length: 40 }, (_, index) => `k${(index * 7919) % 40}`);
    const value = Object.fromEntries(keys.map((key) => [key, key]));
    const sorted = [...keys].sort();
    assert.equal(canonicalJson(value), `{${sorted.map((key) => `"${key}":"${key}"`).join(',')}}`);
    const few = Object.fromEntries(keys.slice(0, 9).map((key) => [key, 1]));
    assert.deepEqual(Object.keys(JSON.parse(canonicalJson(few))), keys.slice(0, 9).sort());
  });

  it('omits undefined properties, as JSON.stringify does, and keeps nesting', () => {
    assert.equal(
      canonicalJson({ b: [1, { d: true, c: null }], a: undefined }),
      '{"b":[1,{"c":null,"d":true}]}',
    );
  });

  it('digests the canonical text with SHA-256, whatever the key order', () => {
    const expected = `sha256:${createHash('sha256').update('{"a":1,"b":"é"}').digest('hex')}`;
    assert.equal(digestJson({ b: 'é', a: 1 }), expected);
    assert.equal(digestJson({ a: 1, b: 'é' }), expected);
    assert.match(digestJson(null), /^sha256:[0-9a-f]{64}$/);
  });

  it('keys an HMAC chain hash with the audit key', () => {
    const a = hmacSha256Digest('key-1', 'text');
    assert.match(a, /^hmac-sha256:[0-9a-f]{64}$/);
    assert.notEqual(a, hmacSha256Digest('key-2', 'text'));
  });
});
