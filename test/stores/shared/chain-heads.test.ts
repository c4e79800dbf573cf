import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { chainHashes } from '../../../src/record/event-chain.js';
import type { JobEvent } from '../../../src/jobs/job.js';
import { ChainHeads } from '../../../src/stores/shared/chain-heads.js';

const event = (n: number): JobEvent => ({
  id: `j:${n}`,
  jobId: 'j',
  type: 'capability.started',
  timestamp: `t${n}`,
});
const events = [event(1), event(2), event(3), event(4)];

describe('the chain heads of a durable store', () => {
  it("continues a job's chain from the head it keeps, as one chain over all its events", () => {
    const heads = new ChainHeads(undefined);
    heads.start('j');
    assert.equal(heads.last('j'), '', 'a created job starts with nothing before its first event');
    const first = heads.append('j', heads.last('j') as string, events.slice(0, 2), false);
    assert.equal(heads.last('j'), first[1]);
    const second = heads.append('j', heads.last('j') as string, events.slice(2), false);
    assert.deepEqual([...first, ...second], chainHashes('', events, undefined));
    assert.equal(heads.last('j'), second[1]);
  });

  it('keeps the head as it was when a change appends no event', () => {
    const heads = new ChainHeads(undefined);
    const [hash] = heads.append('j', '', events.slice(0, 1), false);
    assert.deepEqual(heads.append('j', hash as string, [], false), []);
    assert.equal(heads.last('j'), hash);
    assert.deepEqual(new ChainHeads(undefined).append('k', 'h', [], false), []);
  });

  it('keeps no head for a job that finished or was forgotten, nor for a job never written', () => {
    const heads = new ChainHeads(undefined);
    assert.equal(heads.last('j'), undefined);
    heads.append('j', '', events.slice(0, 1), false);
    const finished = heads.append('j', heads.last('j') as string, events.slice(1, 2), true);
    assert.equal(finished.length, 1, 'the hashes of the last change are still returned');
    assert.equal(heads.last('j'), undefined);
    heads.append('k', '', events.slice(0, 1), false);
    heads.forget('k');
    assert.equal(heads.last('k'), undefined);
  });

  it('keeps the heads of jobs apart', () => {
    const heads = new ChainHeads(undefined);
    const [j] = heads.append('j', '', events.slice(0, 1), false);
    const [k] = heads.append('k', '', events.slice(1, 2), false);
    assert.equal(heads.last('j'), j);
    assert.equal(heads.last('k'), k);
    heads.forget('j');
    assert.equal(heads.last('k'), k);
  });

  it('hashes under the audit key when it has one', () => {
    const hashes = new ChainHeads('key').append('j', '', events, false);
    assert.deepEqual(hashes, chainHashes('', events, 'key'));
    assert.ok(hashes.every((hash) => hash.startsWith('hmac-sha256:')));
  });
});
