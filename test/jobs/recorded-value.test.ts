import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { digestRecorded, recordValue } from '../../src/jobs/recorded-value.js';

const sha256 = (text: string) => `sha256:${createHash('sha256').update(text).digest('hex')}`;

describe('recordValue()', () => {
  it('records the one encoding and digests its RFC 8785 text', () => {
    const recorded = recordValue({ b: [1, 2n, undefined], a: new Date(0), é: -0 });
    assert.deepEqual(recorded.value, { b: [1, '2', null], a: '1970-01-01T00:00:00.000Z', é: 0 });
    assert.equal(
      recorded.digest,
      sha256('{"a":"1970-01-01T00:00:00.000Z","b":[1,"2",null],"é":0}'),
    );
  });

  it('digests an absent value as null, and the same value always the same way', () => {
    assert.equal(recordValue(undefined).digest, sha256('null'));
    assert.equal(digestRecorded(undefined), digestRecorded(null));
    assert.equal(recordValue({ x: 1, y: 2 }).digest, recordValue({ y: 2, x: 1 }).digest);
    assert.notEqual(recordValue({ x: 1 }).digest, recordValue({ x: '1' }).digest);
  });

  it('never throws: a value whose getters throw is recorded with the substitution and digested as recorded', () => {
    const hostile = {
      fine: 1,
      get bad(): never {
        throw new Error('no');
      },
    };
    const recorded = recordValue(hostile);
    assert.deepEqual(recorded.value, '[Unreadable]');
    assert.equal(recorded.digest, sha256('"[Unreadable]"'));
    const nested = recordValue({ list: [hostile], ok: true });
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
    assert.equal(recordValue(proxy).value, '[Unreadable]');
  });
});
