// The SQLite store read a page at a time for verifyStore (src/stores/sqlite/sqlite-scan.ts): the
// scan contract, and rows of a job row deleted without its steps and events skipped.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Database } from '../../../src/stores/sqlite/sqlite-driver.cjs';
import { OperatorRuntime } from '../../../src/index.js';
import { SqliteJobStore } from '../../../src/stores/sqlite/sqlite-store.js';
import type { ScannedJob } from '../../../src/jobs/job-store.js';
import { registerShared } from '../../support/store-fixtures.js';
import { sqliteUnderTest } from '../stores-under-test.js';
import { runScanContract } from '../scan-contract.js';

const sqlite = sqliteUnderTest('sqlite-scan');
runScanContract(sqlite);

const { echo } = registerShared('sqlite-scan', { echo: { execute: ({ input }) => input } });

describe('sqlite store: scanSeals', () => {
  it('skips the steps and events of a job row deleted without them, and reads the next job whole', async () => {
    const option = await sqlite.freshStoreOption();
    const file = option.slice('sqlite:'.length);
    const runtime = new OperatorRuntime({ store: option });
    const ids: string[] = [];
    for (let index = 0; index < 3; index++) {
      const job = await runtime.executePlan({
        version: '1.0',
        steps: [{ id: 's', capability: echo, input: { index } }],
      });
      ids.push(job.id);
    }
    await runtime.close();
    const db = new Database(file);
    db.pragma('foreign_keys = OFF');
    db.prepare('DELETE FROM jobs WHERE id = ?').run(ids[1]);
    db.close();

    const store = new SqliteJobStore(file);
    try {
      // One page holds all three seqs: the rows of the deleted one come between the other two.
      const scan = store.scanSeals(5);
      const read: ScannedJob[] = [];
      for await (const page of scan.chains()) read.push(...page);
      assert.deepEqual(
        read.map((job) => job.id),
        [ids[0], ids[2]],
      );
      assert.deepEqual(read[1]?.chain, store.readChain(ids[2] as string));
      assert.equal(read[1]?.chain?.job.steps.length, 1);
    } finally {
      store.close();
    }
  });
});
