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
} from '../../src/record/checkpoint.js';
import type { CheckpointEntry } from '../../src/jobs/job-store.js';
import { canonicalJson } from '../../src/json/canonical-json.js';

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

  it('keeps the leaf and node format checkpoints were sealed with (RFC 6962 over JCS entries)', () => {
    // Written out here with a hash object per node, as the first checkpoints were computed: a
    // faster path that changed one byte would leave every stored checkpoint unverifiable.
    const sha = (prefix: number, ...parts: string[]): string => {
      const hash = createHash('sha256').update(Buffer.of(prefix));
      for (const part of parts) hash.update(part, 'utf8');
      return hash.digest('hex');
    };
    const reference = (entries: readonly CheckpointEntry[]): string => {
      let level = [...entries]
        .sort((a, b) => (a.jobId < b.jobId ? -1 : a.jobId > b.jobId ? 1 : 0))
        .map((each) => sha(0, canonicalJson([each.jobId, each.events, each.hash])));
      while (level.length > 1) {
        const next: string[] = [];
        for (let index = 0; index < level.length; index += 2) {
          const [left, right] = [level[index] as string, level[index + 1]];
          next.push(right === undefined ? left : sha(1, left, right));
        }
        level = next;
      }
      return `sha256:${level[0] ?? sha(0)}`;
    };
    const odd = [
      { jobId: 'job_b', events: 3, hash: `sha256:${'b'.repeat(64)}` },
      { jobId: 'job_a', events: 12, hash: `hmac-sha256:${'a'.repeat(64)}` },
      { jobId: 'j\u00e9"\\\n\u2028', events: 1, hash: `sha256:${'c'.repeat(64)}` },
    ];
    // The roots the code before the one-shot hashing computed for these entries.
    assert.equal(
      merkleRoot(odd.slice(0, 2).concat({ ...odd[2], jobId: 'j\u00e9"\\\n' } as CheckpointEntry)),
      'sha256:291aedfa697ef2d75685af20b4af8bb784f46bd4dbeae6985da553d30582f9d8',
    );
    assert.equal(
      merkleRoot([]),
      'sha256:6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
    );
    for (let size = 0; size <= 9; size++) {
      const entries = [...odd, ...Array.from({ length: size }, (_, n) => entry(n))];
      const root = reference(entries);
      assert.equal(merkleRoot(entries), root, `size ${entries.length}`);
      for (const each of entries)
        assert.equal(rootOfProof(each, merkleProof(entries, each.jobId) ?? []), root);
    }
    // A malformed entry (as a bundle could hold) is hashed as JCS, not as JSON.stringify.
    const malformed = {
      jobId: { b: 1, a: 2 },
      events: 1.5,
      hash: 'h',
    } as unknown as CheckpointEntry;
    assert.equal(merkleRoot([malformed]), reference([malformed]));
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
