import assert from 'node:assert/strict';
import { createHash, createHmac } from 'node:crypto';
import { describe, it } from 'node:test';
import {
  checkpointHash,
  ledgerLeaf,
  merkleProof,
  merkleRoot,
  nextCheckpoint,
  rootOfProof,
  type CheckpointEntry,
} from '../../src/jobs/checkpoint.js';

const entry = (n: number): CheckpointEntry => ({
  jobId: `job-${String(n).padStart(2, '0')}`,
  events: n + 1,
  hash: `sha256:${String(n).repeat(64).slice(0, 64)}`,
});

describe('checkpoint', () => {
  it('hashes { seq, previous, root, events, at } chained to the previous hash, plain or keyed', () => {
    const fields = { seq: 2, previous: 'sha256:ab', root: 'sha256:cd', events: 7, at: 'T' };
    const text =
      'sha256:ab\n{"at":"T","events":7,"previous":"sha256:ab","root":"sha256:cd","seq":2}';
    assert.equal(
      checkpointHash(fields, undefined),
      `sha256:${createHash('sha256').update(text).digest('hex')}`,
    );
    assert.equal(
      checkpointHash(fields, 'k'),
      `hmac-sha256:${createHmac('sha256', 'k').update(text).digest('hex')}`,
    );
  });

  it('has one Merkle root whatever the order of entries, and a proof for each entry', () => {
    for (let size = 1; size <= 9; size++) {
      const entries = Array.from({ length: size }, (_, n) => entry(n));
      const root = merkleRoot(entries);
      assert.equal(merkleRoot([...entries].reverse()), root);
      for (const each of entries) {
        const proof = merkleProof(entries, each.jobId);
        assert.ok(proof !== undefined);
        assert.equal(rootOfProof(each, proof), root, `size ${size}, ${each.jobId}`);
        assert.notEqual(rootOfProof({ ...each, events: each.events + 1 }, proof), root);
      }
      assert.equal(merkleProof(entries, 'absent'), undefined);
      assert.notEqual(merkleRoot(entries.slice(1)), root, 'an entry removed changes the root');
    }
  });

  it('seals ledger entries as leaves after the jobs: each field counts, proofs still hold', () => {
    const ledger = {
      jobId: 'job-01',
      position: 4,
      stepId: 'b',
      inputDigest: 'sha256:in',
      requestHash: 'sha256:req',
      decision: 'granted',
      at: 'T',
    };
    const leaf = ledgerLeaf(ledger);
    const text = JSON.stringify([
      'approval',
      'job-01',
      4,
      'b',
      'sha256:in',
      'sha256:req',
      'granted',
      'T',
    ]);
    assert.equal(
      leaf,
      `sha256:${createHash('sha256').update(Buffer.of(0)).update(text).digest('hex')}`,
    );
    assert.notEqual(ledgerLeaf({ ...ledger, position: 5 }), leaf);
    assert.notEqual(ledgerLeaf({ ...ledger, stepId: 'c' }), leaf);
    assert.notEqual(ledgerLeaf({ ...ledger, requestHash: null }), leaf);
    assert.notEqual(ledgerLeaf({ ...ledger, decision: 'rejected' }), leaf);
    assert.notEqual(ledgerLeaf({ ...ledger, inputDigest: null }), leaf);
    const entries = [entry(1), entry(2), entry(3)];
    const approvals = [
      { jobId: 'job-02', position: 1, hash: leaf },
      { jobId: 'job-01', position: 4, hash: ledgerLeaf({ ...ledger, position: 9 }) },
    ];
    const root = merkleRoot(entries, approvals);
    assert.notEqual(root, merkleRoot(entries), 'the ledger leaves change the root');
    assert.equal(
      merkleRoot(entries, []),
      merkleRoot(entries),
      'no ledger leaves: the root as before',
    );
    assert.equal(merkleRoot(entries, [...approvals].reverse()), root, 'one order');
    assert.notEqual(merkleRoot(entries, approvals.slice(1)), root, 'a leaf removed');
    for (const each of entries)
      assert.equal(rootOfProof(each, merkleProof(entries, each.jobId, approvals) ?? []), root);
    const next = nextCheckpoint(undefined, [], new Map(), 'T', undefined, approvals);
    assert.equal(next?.checkpoint.root, merkleRoot([], approvals), 'approvals alone are sealed');
    assert.equal(next?.checkpoint.events, 0);
  });

  it('seals only the jobs that changed since they were last sealed, counting their new events', () => {
    const sealed = new Map([
      ['job-00', entry(0)],
      ['job-01', { ...entry(1), events: 1 }],
    ]);
    const next = nextCheckpoint(
      { seq: 4, hash: 'sha256:head' },
      [entry(0), entry(1), entry(2)],
      sealed,
      'T',
      undefined,
    );
    assert.ok(next !== undefined);
    assert.deepEqual(
      next.entries.map((each) => each.jobId),
      ['job-01', 'job-02'],
    );
    assert.equal(next.checkpoint.seq, 5);
    assert.equal(next.checkpoint.previous, 'sha256:head');
    assert.equal(next.checkpoint.events, 1 + 3);
    assert.equal(next.checkpoint.root, merkleRoot(next.entries));
    assert.equal(nextCheckpoint(undefined, [entry(0)], sealed, 'T', undefined), undefined);
    assert.equal(
      nextCheckpoint(undefined, [entry(3)], new Map(), 'T', undefined)?.checkpoint.previous,
      '',
    );
  });
});
