// The PostgreSQL store read a page at a time for verifyStore (src/stores/postgres/postgres-scan.ts):
// the scan contract, and rows of a job row deleted without its steps and events skipped.
// PostgreSQL comes from test/support/postgres.ts (an embedded server, or WARRANT_TEST_POSTGRES_URL).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { OperatorRuntime } from '../../../src/index.js';
import { PostgresJobStore } from '../../../src/stores/postgres/postgres-store.js';
import type { ScannedJob } from '../../../src/jobs/job-store.js';
import { startTestPostgres, type TestPostgres } from '../../support/postgres.js';
import { registerShared } from '../../support/store-fixtures.js';
import { postgresUnderTest } from '../stores-under-test.js';
import { runScanContract } from '../scan-contract.js';

let server: TestPostgres | undefined;
const postgres = async (): Promise<TestPostgres> => {
  server ??= await startTestPostgres();
  return server;
};
before(async () => {
  await postgres();
});
after(async () => {
  await server?.stop();
});

const postgresStore = postgresUnderTest(postgres);
runScanContract(postgresStore);

const { echo } = registerShared('postgres-scan', { echo: { execute: ({ input }) => input } });

describe('postgres store: scanSeals', () => {
  it('skips the steps and events of a job row deleted without them, and reads the next job whole', async () => {
    const url = await (await postgres()).createDatabase();
    const runtime = new OperatorRuntime({ store: url });
    const ids: string[] = [];
    for (let index = 0; index < 3; index++) {
      const job = await runtime.executePlan({
        version: '1.0',
        steps: [{ id: 's', capability: echo, input: { index } }],
      });
      ids.push(job.id);
    }
    await runtime.close();
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      // Foreign keys are triggers: a superuser's session can skip them.
      await client.query("SET session_replication_role = 'replica'");
      await client.query('DELETE FROM warrant_jobs WHERE id = $1', [ids[1]]);
    } finally {
      await client.end();
    }

    const store = new PostgresJobStore(url);
    try {
      // One page holds all three seqs: the rows of the deleted one come between the other two.
      const scan = await store.scanSeals(5);
      const read: ScannedJob[] = [];
      for await (const page of scan.chains()) read.push(...page);
      assert.deepEqual(
        read.map((job) => job.id),
        [ids[0], ids[2]],
      );
      assert.deepEqual(read[1]?.chain, await store.readChain(ids[2] as string));
      assert.equal(read[1]?.chain?.job.steps.length, 1);
    } finally {
      await store.close();
    }
  });
});
