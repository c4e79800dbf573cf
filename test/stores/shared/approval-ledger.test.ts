// The checks of the consuming write (docs/api.md, "Approvals"), on the request as a store holds
// it; and the SQLite store running them inside its write (the contracts run them end to end).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { chainHashes } from '../../../src/record/event-chain.js';
import type { Job } from '../../../src/jobs/job.js';
import { recordValue } from '../../../src/jobs/recorded-value.js';
import {
  alreadyConsumed,
  checkStoredRequest,
  claimedRequest,
  type ClaimedRequest,
} from '../../../src/stores/shared/approval-ledger.js';
import { SqliteJobStore } from '../../../src/stores/sqlite/sqlite-store.js';
import {
  awaitApproval,
  createJob,
  grantApproval,
  type NewJob,
  type RunningJob,
} from '../../../src/jobs/transitions.js';

const AT = '2026-11-23T00:00:00.000Z';
const EXPIRES = '2026-11-23T00:15:00.000Z';
const plan: NewJob = {
  id: undefined,
  goal: 'g',
  metadata: undefined,
  idempotencyKey: undefined,
  steps: [
    {
      id: 'w',
      capability: { name: 'write' },
      capabilityVersion: '1',
      input: { n: 1 },
      reason: undefined,
      idempotencyKey: undefined,
    },
  ],
};

function waiting(id: string, at = AT, expiresAt = EXPIRES): RunningJob {
  const { running } = createJob(plan, undefined, id, at);
  awaitApproval(running, 0, {
    status: 'awaiting_approval',
    risk: 'write',
    decided: {
      outcome: 'approval_required',
      reason: undefined,
      authorizer: undefined,
      capabilityVersion: '1',
      at,
      input: { n: 1 },
      recorded: recordValue({ n: 1 }, 'input'),
      resolved: false,
    },
    expiresAt,
  });
  return running;
}

const rowsOf = (job: Job, key?: string) => {
  const hashes = chainHashes('', job.events, key);
  return job.events.map((event, index) => ({
    event: JSON.stringify(event),
    hash: hashes[index] as string,
  }));
};

describe('checkStoredRequest()', () => {
  const running = waiting('j');
  const claim: ClaimedRequest = {
    stepId: 'w',
    inputDigest: running.record.steps[0]?.decision?.inputDigest,
    decision: 'granted',
  };
  const before = Date.parse(EXPIRES) - 1;

  it('finds the request as stored, its hash recomputed, before its expiry', () => {
    const rows = rowsOf(running.record);
    assert.deepEqual(checkStoredRequest('j', claim, rows, undefined, before), {
      position: 2,
      hash: rows[2]?.hash,
    });
    const keyed = rowsOf(running.record, 'k');
    assert.equal(checkStoredRequest('j', claim, keyed, 'k', before).hash, keyed[2]?.hash);
  });

  it('refuses a grant or a rejection at or after expiresAt; an expiry is written then', () => {
    const rows = rowsOf(running.record);
    for (const decision of ['granted', 'rejected'] as const) {
      assert.throws(
        () => checkStoredRequest('j', { ...claim, decision }, rows, undefined, before + 1),
        { code: 'APPROVAL_EXPIRED', message: /expired at 2026-11-23T00:15:00.000Z/ },
      );
    }
    assert.equal(
      checkStoredRequest('j', { ...claim, decision: 'expired' }, rows, undefined, before + 1)
        .position,
      2,
    );
  });

  it('refuses a request edited in the store, another digest, none, or one already consumed', () => {
    const rows = rowsOf(running.record);
    const edited = rows.map((row, index) =>
      index === 2 ? { ...row, event: row.event.replace(EXPIRES, '2099-01-01T00:00:00.000Z') } : row,
    );
    assert.throws(() => checkStoredRequest('j', claim, edited, undefined, before), {
      code: 'APPROVAL_NOT_PENDING',
      message: /does not match its chain hash/,
    });
    assert.throws(
      () => checkStoredRequest('j', { ...claim, inputDigest: 'sha256:0' }, rows, undefined, before),
      { code: 'APPROVAL_NOT_PENDING', message: /is not the one decided on/ },
    );
    assert.throws(() => checkStoredRequest('j', claim, rows.slice(0, 2), undefined, before), {
      code: 'APPROVAL_NOT_PENDING',
      message: /^No approval request is recorded for step "w" of job "j"$/,
    });
    assert.equal(alreadyConsumed('j', claim).message.includes('decided already'), true);
  });
});

describe('the SQLite store checks the request inside its consuming write', () => {
  const directory = mkdtempSync(join(tmpdir(), 'warrant-ledger-'));
  after(() => rmSync(directory, { recursive: true, force: true }));

  it('refuses a grant written after expiresAt, and a second decision on one request', async () => {
    const store = new SqliteJobStore(join(directory, 'jobs.db'));
    try {
      const now = Date.now();
      const late = waiting(
        'late',
        new Date(now - 2_000).toISOString(),
        new Date(now - 1).toISOString(),
      );
      await store.create(late.record);
      const granted = grantApproval(late, 0, new Date(now).toISOString(), 'bob');
      await assert.rejects(Promise.resolve(store.update(late.record, granted)), {
        code: 'APPROVAL_EXPIRED',
      });
      assert.equal(store.get('late')?.status, 'awaiting_approval', 'nothing written');

      const fresh = waiting(
        'fresh',
        new Date(now).toISOString(),
        new Date(now + 60_000).toISOString(),
      );
      await store.create(fresh.record);
      const copy = structuredClone(fresh.record);
      const change = grantApproval(fresh, 0, new Date(now).toISOString(), 'bob');
      assert.equal(claimedRequest(fresh.record, change, 0).decision, 'granted');
      await store.update(fresh.record, change);
      assert.deepEqual(store.readChain('fresh')?.consumed, [
        { position: 2, stepId: 'w', decision: 'granted' },
      ]);
      // The step set waiting again (as a restored row would be): the ledger still refuses it.
      const restored: RunningJob = { record: copy, job: structuredClone(copy) };
      await store.update(restored.record, { steps: [0], events: [] });
      await assert.rejects(
        Promise.resolve(store.update(restored.record, grantApproval(restored, 0, AT, 'carol'))),
        { code: 'APPROVAL_NOT_PENDING', message: /decided already/ },
      );
    } finally {
      store.close();
    }
  });
});
