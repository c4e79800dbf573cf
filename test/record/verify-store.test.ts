// verifyStore's checks of the checkpoint chain itself (docs/api.md, "runtime.verifyStore"), on a
// real SQLite store whose checkpoint rows are edited as someone with the file could.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { OperatorRuntime, type StoreVerification } from '../../src/index.js';
import { Database } from '../../src/stores/sqlite/sqlite-driver.cjs';
import { register } from '../support/runtime-fixtures.js';

const directory = mkdtempSync(join(tmpdir(), 'warrant-verify-store-'));
let files = 0;

/**
 * A store holding four checkpoints: its chain origin (written when it was created, sealing no job:
 * docs/decisions.md, "Jobs without a chain"), then one per runtime (each seals at close).
 */
async function threeCheckpoints(auditKey?: string): Promise<string> {
  const file = join(directory, `jobs-${++files}.db`);
  for (let round = 0; round < 3; round++) {
    const runtime = new OperatorRuntime({
      store: `sqlite:${file}`,
      ...(auditKey === undefined ? {} : { auditKey }),
    });
    const [name] = register(runtime, { execute: () => round });
    await runtime.executePlan({ version: '1.0', steps: [{ id: 's', capability: name as string }] });
    await runtime.close();
  }
  return file;
}

function edit(file: string, sql: string): void {
  const db = new Database(file);
  try {
    db.exec(sql);
  } finally {
    db.close();
  }
}

async function verify(file: string, auditKey?: string): Promise<StoreVerification> {
  const runtime = new OperatorRuntime({
    store: `sqlite:${file}`,
    ...(auditKey === undefined ? {} : { auditKey }),
  });
  try {
    return await runtime.verifyStore();
  } finally {
    await runtime.close();
  }
}

const reasons = (verification: StoreVerification) =>
  verification.problems.map((problem) => `${problem.kind}: ${problem.reason}`);

describe('verifyStore: the checkpoint chain', () => {
  it('verifies four chained checkpoints, the origin first, their head the last', async () => {
    const file = await threeCheckpoints();
    const verification = await verify(file);
    assert.deepEqual(reasons(verification), []);
    assert.equal(verification.checkpoints, 4);
    assert.equal(verification.head?.seq, 4);
    const db = new Database(file, { readonly: true });
    try {
      assert.deepEqual(db.prepare('SELECT checkpoint FROM chain_origin').pluck().all(), [1]);
      assert.deepEqual(
        db.prepare('SELECT events FROM checkpoints WHERE seq = 1').pluck().all(),
        [0],
        'a store created with chains: its origin seals no job',
      );
      assert.equal(
        db.prepare('SELECT count(*) FROM checkpoint_entries WHERE checkpoint = 1').pluck().get(),
        0,
      );
    } finally {
      db.close();
    }
  });

  it('reports a checkpoint deleted from the middle of the chain', async () => {
    const file = await threeCheckpoints();
    edit(
      file,
      'DELETE FROM checkpoint_entries WHERE checkpoint = 3; DELETE FROM checkpoints WHERE seq = 3',
    );
    assert.deepEqual(reasons(await verify(file)), [
      'checkpoint: checkpoint 3 is missing (found 4 in its place): checkpoints were deleted',
      'checkpoint: checkpoint 4 does not follow the checkpoint before it',
    ]);
  });

  it("reports a checkpoint's entries, and its fields, changed", async () => {
    const file = await threeCheckpoints();
    edit(file, 'UPDATE checkpoint_entries SET events = events - 1 WHERE checkpoint = 2');
    const entries = reasons(await verify(file));
    assert.ok(
      entries.includes(
        'checkpoint: the entries of checkpoint 2 do not match its root: they were changed, added or removed',
      ),
      entries.join('\n'),
    );
    const other = await threeCheckpoints();
    edit(other, "UPDATE checkpoints SET at = '2000-01-01T00:00:00.000Z' WHERE seq = 3");
    assert.deepEqual(reasons(await verify(other)), [
      'checkpoint: checkpoint 3 does not match its hash',
    ]);
  });

  it('reports a second chain origin: its mark removed, a job forged before the first chained one', async () => {
    const file = await threeCheckpoints('store key');
    // Without the audit key: the jobs renumbered after seq 1, a copy of the first put there with
    // no hashes, and the store's mark of its origin removed, so that opening it writes another
    // origin taking the copy for a job recorded before the chain.
    edit(
      file,
      `PRAGMA foreign_keys = OFF;
       UPDATE job_events SET job_seq = job_seq + 10;
       UPDATE job_steps SET job_seq = job_seq + 10;
       UPDATE jobs SET seq = seq + 10;
       INSERT INTO jobs (seq, id, status, goal, created_at, updated_at, fixed, state)
         SELECT 1, 'forged', status, '"forged"', created_at, updated_at, fixed, state
         FROM jobs WHERE seq = 11;
       INSERT INTO job_steps (job_seq, position, capability, status, fixed, state, decision)
         SELECT 1, position, capability, status, fixed, state, decision
         FROM job_steps WHERE job_seq = 11;
       INSERT INTO job_events (job_seq, position, event, hash)
         SELECT 1, position, replace(event, (SELECT id FROM jobs WHERE seq = 11), 'forged'), NULL
         FROM job_events WHERE job_seq = 11;
       DELETE FROM chain_origin;`,
    );
    const verification = await verify(file, 'store key');
    assert.equal(verification.ok, false);
    assert.equal(verification.unchained, 0);
    assert.deepEqual(reasons(verification), [
      "checkpoint: checkpoint 5 is a second chain origin (the first is checkpoint 1): the store's mark of its origin was removed and the store opened again; only the jobs checkpoint 1 sealed are taken as recorded before the chain",
      'record: no chain: its events carry no hash, and it was not recorded before the chain (the store has kept chains since checkpoint 1): not written by Warrant (copied or forged), or its hashes were removed',
    ]);
    assert.equal(verification.problems[1]?.jobId, 'forged');
  });

  it('keys checkpoints with the audit key: verified only with it', async () => {
    const file = await threeCheckpoints('store key');
    assert.equal((await verify(file, 'store key')).ok, true);
    assert.match(reasons(await verify(file))[0] ?? '', /checkpoint 1 is keyed \(hmac-sha256\)/);
    assert.equal((await verify(file, 'another key')).ok, false);
  });
});
