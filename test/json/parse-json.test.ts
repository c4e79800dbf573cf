// parseJson (src/json/parse-json.ts): JSON.parse, exact for keys written with escapes on the V8
// of Node 24, which can read such a key as an earlier object's key (docs/decisions.md, "Node
// versions"). CI runs this file on Node 20, 22 and 24.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseJson, parseWithPlainKeys } from '../../src/json/parse-json.js';

const keysOf = (value: unknown): string[] => Object.keys(value as object);

describe('parseJson', () => {
  it('reads escaped keys exactly after an object of the same shape held a backslash key', () => {
    // The poisoning sequence of nodejs/node#63785, and the shape the records property found.
    parseJson('{"h":[],"\\\\":0}');
    assert.deepEqual(keysOf(parseJson('{"h":1,"\\"":2}')), ['h', '"']);
    parseJson('{"":0,"x y":1,"\\\\":0}');
    assert.deepEqual(keysOf(parseJson('{"":0,"x y":1,"\\udfff":2}')), ['', 'x y', '\udfff']);
    parseJson('{"n":{"a":1,"\\\\":[]}}');
    const nested = parseJson('[{"n":{"a":1,"\\n":[{"\\u0000":true}]}}]');
    assert.deepEqual(nested, [{ n: { a: 1, '\n': [{ '\u0000': true }] } }]);
  });

  for (const [name, parse] of [
    ['parseJson', parseJson],
    ['the rewrite path on any V8', parseWithPlainKeys],
  ] as const) {
    it(`${name}: the same value as JSON.parse specifies, key order and duplicates included`, () => {
      assert.deepEqual(parse('{"a":"\\"x\\"","\\\\":1,"b":[1,"\\u0041"]}'), {
        a: '"x"',
        '\\': 1,
        b: [1, 'A'],
      });
      // A later duplicate replaces the value and keeps the first place; integer keys first.
      const duplicated = parse('{"z":0,"\\u0061":1,"a":2,"\\u0031":3}') as Record<string, number>;
      assert.deepEqual(Object.entries(duplicated), [
        ['1', 3],
        ['z', 0],
        ['a', 2],
      ]);
      // `__proto__` written with an escape is an own data property, as JSON.parse makes it.
      const proto = parse('{"\\u005f_proto__":{"polluted":true}}') as object;
      assert.deepEqual(Object.getOwnPropertyNames(proto), ['__proto__']);
      assert.equal(Object.getPrototypeOf(proto), Object.prototype);
      assert.equal(({} as { polluted?: boolean }).polluted, undefined);
      // A key may hold the stand-in's prefix; strings that are values are never renamed.
      assert.deepEqual(parse('{"warrant-key-0":"\\\\","\\t":"warrant-key-0"}'), {
        'warrant-key-0': '\\',
        '\t': 'warrant-key-0',
      });
      assert.deepEqual(parse(' { "\\ud800" : [ { "\\"" : null } ] } '), {
        '\ud800': [{ '"': null }],
      });
      assert.equal(parse('"\\u005c"'), '\\');
      assert.deepEqual(parse('[]'), []);
    });

    it(`${name}: malformed text throws JSON.parse's own error`, () => {
      for (const text of ['{"\\u00":1}', '{"\\\\":', '{"a\\', '{"\\n" 1}', '']) {
        let expected: unknown;
        try {
          JSON.parse(text);
        } catch (error) {
          expected = error;
        }
        assert.throws(() => parse(text), expected as Error);
      }
    });
  }
});
