import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import {
  digestRecorded,
  recordValue,
  recordWithLazyDigest,
  sameRecordedValue,
  setDigestOnRead,
} from '../../src/jobs/recorded-value.js';

const sha256 = (text: string) => `sha256:${createHash('sha256').update(text).digest('hex')}`;

describe('recordValue()', () => {
  it('records the one encoding and digests its RFC 8785 text', () => {
    const recorded = recordValue({ b: [1, 2n, undefined], a: new Date(0), é: -0 }, 'input');
    assert.deepEqual(recorded.value, { b: [1, '2', null], a: '1970-01-01T00:00:00.000Z', é: 0 });
    assert.equal(
      recorded.digest,
      sha256('{"a":"1970-01-01T00:00:00.000Z","b":[1,"2",null],"é":0}'),
    );
  });

  it('digests an absent value as null, and the same value always the same way', () => {
    assert.equal(recordValue(undefined, 'input').digest, sha256('null'));
    assert.equal(digestRecorded(undefined), digestRecorded(null));
    assert.equal(
      recordValue({ x: 1, y: 2 }, 'input').digest,
      recordValue({ y: 2, x: 1 }, 'input').digest,
    );
    assert.notEqual(recordValue({ x: 1 }, 'input').digest, recordValue({ x: '1' }, 'input').digest);
  });

  it('hands toJSON the key the value is recorded under, as JSON.stringify would', () => {
    const keyed = { toJSON: (key: string) => `at ${key}` };
    assert.equal(recordValue(keyed, 'result').value, 'at result');
    assert.equal(JSON.parse(JSON.stringify({ result: keyed })).result, 'at result');
  });

  it('never throws: a value whose getters throw is recorded with the substitution and digested as recorded', () => {
    const hostile = {
      fine: 1,
      get bad(): never {
        throw new Error('no');
      },
    };
    const recorded = recordValue(hostile, 'input');
    assert.deepEqual(recorded.value, '[Unreadable]');
    assert.equal(recorded.digest, sha256('"[Unreadable]"'));
    const nested = recordValue({ list: [hostile], ok: true }, 'input');
    assert.deepEqual(nested.value, { list: ['[Unreadable]'], ok: true });
    assert.equal(nested.digest, sha256('{"list":["[Unreadable]"],"ok":true}'));
    const proxy = new Proxy(
      {},
      {
        ownKeys() {
          throw new Error('trap');
        },
      },
    );
    assert.equal(recordValue(proxy, 'input').value, '[Unreadable]');
  });
});

describe('digests computed on first read', () => {
  it('computes once, when read, and reads as a plain enumerable string', () => {
    let computed = 0;
    const target: Record<string, unknown> = { stepId: 's' };
    setDigestOnRead(target, 'resultDigest', { n: 1 }, (source) => {
      computed++;
      return digestRecorded(source);
    });
    Object.freeze(target);
    assert.equal(computed, 0);
    assert.equal(target.resultDigest, sha256('{"n":1}'));
    assert.equal(target.resultDigest, sha256('{"n":1}'));
    assert.equal(computed, 1);
    assert.equal(JSON.stringify(target), `{"stepId":"s","resultDigest":"${sha256('{"n":1}')}"}`);
  });

  it('digests the encoding made when recorded, whatever happens to the value later', () => {
    const result = { items: [1, 2] };
    const target: Record<string, unknown> = {};
    const recorded = recordWithLazyDigest(result, 'result', target, 'resultDigest');
    result.items.push(3);
    assert.deepEqual(recorded, { items: [1, 2] });
    assert.equal(target.resultDigest, sha256('{"items":[1,2]}'));
  });

  it('reads as the digest of "[Unreadable]" when its text cannot be made', () => {
    const target: Record<string, unknown> = {};
    setDigestOnRead(target, 'record', undefined, () => {
      throw new RangeError('Invalid string length');
    });
    assert.equal(target.record, sha256('"[Unreadable]"'));
  });
});

describe('sameRecordedValue()', () => {
  it('compares JSON data deeply, key order aside', () => {
    assert.equal(
      sameRecordedValue({ a: [1, { b: null }], c: 'x' }, { c: 'x', a: [1, { b: null }] }),
      true,
    );
    assert.equal(sameRecordedValue(undefined, undefined), true);
    for (const [a, b] of [
      [{ a: 1 }, { a: 1, b: 2 }],
      [
        { a: 1, b: undefined },
        { a: 1, c: 2 },
      ],
      [[1], { 0: 1 }],
      [{ 0: 1 }, [1]],
      [[1, 2], [1]],
      [null, {}],
      [1, '1'],
      [undefined, null],
    ] as const) {
      assert.equal(sameRecordedValue(a, b), false, JSON.stringify([a, b]));
    }
  });
});
