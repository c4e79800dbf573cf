import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { OperatorRuntime, verifyEvidence, type Job } from '../../src/index.js';
import { parseHead } from '../../src/record/store-audit.js';
import { MemoryJobStore } from '../../src/stores/memory/memory-store.js';
import { runtimeOnStore } from '../../src/runtime/operator-runtime.js';
import { register } from '../support/runtime-fixtures.js';

describe('store audit on the memory store (no checkpoints)', () => {
  it('verifies every job by its digests, and reports one whose record changed', async () => {
    // getJob hands out frozen snapshots: tampering changes the record the memory store holds.
    const runtime = new OperatorRuntime();
    const [name] = register(runtime, { execute: () => ({ amount: 1 }) });
    try {
      await runtime.executePlan({
        version: '1.0',
        steps: [{ id: 's', capability: name as string }],
      });
      const intact = await runtime.verifyStore();
      assert.deepEqual(intact, {
        ok: true,
        checkpoints: 0,
        jobs: 1,
        sealedEvents: 0,
        unsealed: 0,
        unchained: 0,
        problems: [],
      });
    } finally {
      await runtime.close();
    }
    // A second store, whose record is changed before anything read it (a read keeps a snapshot).
    const tampered = new MemoryJobStore(10_000);
    const other = runtimeOnStore(tampered);
    const [otherName] = register(other, { execute: () => ({ amount: 1 }) });
    try {
      const job = await other.executePlan({
        version: '1.0',
        steps: [{ id: 's', capability: otherName as string }],
      });
      const stored = tampered.held(job.id) as Job;
      (stored.steps[0] as { result: unknown }).result = { amount: 2 };
      const broken = await other.verifyStore();
      assert.equal(broken.ok, false);
      assert.deepEqual(broken.problems[0], {
        kind: 'record',
        jobId: job.id,
        reason: 'the result of step s does not match its digest',
        eventIndex: 3,
        stepId: 's',
      });
    } finally {
      await other.close();
    }
  });

  it('exports a bundle with its chain computed and no checkpoint, which verifies', async () => {
    const runtime = new OperatorRuntime();
    const [name] = register(runtime, { execute: () => 'done' });
    try {
      const job = await runtime.executePlan({
        version: '1.0',
        steps: [{ id: 's', capability: name as string }],
      });
      const bundle = await runtime.exportJob(job.id);
      assert.ok(bundle !== undefined);
      assert.equal(bundle.checkpoint, undefined);
      assert.deepEqual(verifyEvidence(JSON.parse(JSON.stringify(bundle))), {
        ok: true,
        chain: 'recomputed',
        checkpoint: 'absent',
        signature: 'absent',
        problems: [],
      });
    } finally {
      await runtime.close();
    }
  });

  it('reads a kept head as <seq>:<hash>, and refuses anything else (STORE_HEAD_INVALID)', async () => {
    assert.deepEqual(parseHead('12:sha256:abc'), { seq: 12, hash: 'sha256:abc' });
    for (const bad of ['', '0:x', '12', ':x', '1:', '1: x', 'x:y', 12])
      assert.throws(() => parseHead(bad), { code: 'STORE_HEAD_INVALID' }, String(bad));
    const runtime = new OperatorRuntime();
    await assert.rejects(runtime.verifyStore({ since: 'nope' }), { code: 'STORE_HEAD_INVALID' });
    await runtime.close();
  });
});
