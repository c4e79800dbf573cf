// verifyStore's checks of the checkpoint chain itself (docs/api.md, "runtime.verifyStore"), on a
// real SQLite store whose checkpoint rows are edited as someone with the file could.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { OperatorRuntime, type StoreVerification } from '../../src/index.js';
import { Database } from '../../src/jobs/stores/sqlite-driver.cjs';
import { register } from '../support/runtime-fixtures.js';

const directory = mkdtempSync(join(tmpdir(), 'warrant-verify-store-'));
let files = 0;

/** A store holding three checkpoints (each runtime seals at close), and its file. */
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
  it('verifies three chained checkpoints, their head the last', async () => {
    const file = await threeCheckpoints();
    const verification = await verify(file);
    assert.deepEqual(reasons(verification), []);
    assert.equal(verification.checkpoints, 3);
    assert.equal(verification.head?.seq, 3);
  });

  it('reports a checkpoint deleted from the middle of the chain', async () => {
    const file = await threeCheckpoints();
    edit(
      file,
      'DELETE FROM checkpoint_entries WHERE checkpoint = 2; DELETE FROM checkpoints WHERE seq = 2',
    );
    assert.deepEqual(reasons(await verify(file)), [
      'checkpoint: checkpoint 2 is missing (found 3 in its place): checkpoints were deleted',
      'checkpoint: checkpoint 3 does not follow the checkpoint before it',
    ]);
  });

  it("reports a checkpoint's entries, and its fields, changed", async () => {
    const file = await threeCheckpoints();
    edit(file, 'UPDATE checkpoint_entries SET events = events - 1 WHERE checkpoint = 1');
    const entries = reasons(await verify(file));
    assert.ok(
      entries.includes(
        'checkpoint: the entries of checkpoint 1 do not match its root: they were changed, added or removed',
      ),
      entries.join('\n'),
    );
    const other = await threeCheckpoints();
    edit(other, "UPDATE checkpoints SET at = '2000-01-01T00:00:00.000Z' WHERE seq = 2");
    assert.deepEqual(reasons(await verify(other)), [
      'checkpoint: checkpoint 2 does not match its hash',
    ]);
  });

  it('keys checkpoints with the audit key: verified only with it', async () => {
    const file = await threeCheckpoints('store key');
    assert.equal((await verify(file, 'store key')).ok, true);
    assert.match(reasons(await verify(file))[0] ?? '', /checkpoint 1 is keyed \(hmac-sha256\)/);
    assert.equal((await verify(file, 'another key')).ok, false);
  });
});
