import assert from 'node:assert/strict';
import { createHash, createHmac } from 'node:crypto';
import { describe, it } from 'node:test';
import { chainHash, chainHashes } from '../../src/record/event-chain.js';
import type { JobEvent } from '../../src/jobs/job.js';

const events: JobEvent[] = [
  { id: 'j:1', jobId: 'j', type: 'job.created', timestamp: 't0', data: { goal: 'g \ud800' } },
  { id: 'j:2', jobId: 'j', type: 'execution.started', timestamp: 't0' },
];

describe('the event chain', () => {
  it("hashes the previous hash text, a newline and the event's RFC 8785 text", () => {
    const first = chainHash('', events[0] as JobEvent, undefined);
    const text0 =
      '\n{"data":{"goal":"g \\ud800"},"id":"j:1","jobId":"j","timestamp":"t0","type":"job.created"}';
    assert.equal(first, `sha256:${createHash('sha256').update(text0).digest('hex')}`);
    const second = chainHash(first, events[1] as JobEvent, undefined);
    const text1 = `${first}\n{"id":"j:2","jobId":"j","timestamp":"t0","type":"execution.started"}`;
    assert.equal(second, `sha256:${createHash('sha256').update(text1).digest('hex')}`);
    assert.deepEqual(chainHashes('', events, undefined), [first, second]);
  });

  it('keys the hash with HMAC-SHA-256 under the UTF-8 bytes of an audit key', () => {
    const key = 'clé';
    const hash = chainHash('', events[1] as JobEvent, key);
    const text = '\n{"id":"j:2","jobId":"j","timestamp":"t0","type":"execution.started"}';
    const expected = createHmac('sha256', Buffer.from(key, 'utf8')).update(text).digest('hex');
    assert.equal(hash, `hmac-sha256:${expected}`);
  });

  it('gives another chain for any change: an edit, a removal or another order', () => {
    const chain = chainHashes('', events, undefined);
    const edited = chainHashes(
      '',
      [{ ...(events[0] as JobEvent), timestamp: 't1' }, events[1] as JobEvent],
      undefined,
    );
    assert.notEqual(edited[0], chain[0]);
    assert.notEqual(edited[1], chain[1], 'every later hash changes with it');
    assert.notEqual(chainHashes('', [events[1] as JobEvent], undefined)[0], chain[1]);
    assert.notDeepEqual(chainHashes('', [...events].reverse(), undefined), [...chain].reverse());
  });
});
