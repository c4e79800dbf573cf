// The PostgreSQL store's outbox (src/stores/postgres/postgres-outbox.ts) on a real PostgreSQL
// (test/support/postgres.ts): the outbox contract; rows written in the statement of their change
// (none for a change that is not written); two stores (two pools, as two processes) claiming at
// once, each row to one of them.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import type { Job } from '../../../src/jobs/job.js';
import type { OutboxWriter } from '../../../src/jobs/job-store.js';
import { PostgresJobStore } from '../../../src/stores/postgres/postgres-store.js';
import { startTestPostgres, type TestPostgres } from '../../support/postgres.js';
import { outboxContract } from '../outbox-contract.js';

let server: TestPostgres | undefined;
before(async () => {
  server = await startTestPostgres();
});
after(async () => {
  await server?.stop();
});
const database = () => (server as TestPostgres).createDatabase();

function jobOf(id: string): Job {
  const at = new Date().toISOString();
  return {
    id,
    goal: 'g',
    status: 'executing',
    createdAt: at,
    updatedAt: at,
    steps: [],
    events: [],
  };
}

/** One row per change, to destination `d`. */
function everyChange(): OutboxWriter {
  let counter = 0;
  return {
    maxPending: 1000,
    written: () => {},
    entries: (job) => [
      {
        id: `msg_${++counter}`,
        destination: 'd',
        jobId: job.id,
        type: 'job.completed',
        at: job.updatedAt,
        body: '{}',
      },
    ],
  };
}

describe('PostgresOutbox', () => {
  outboxContract(async () => new PostgresJobStore(await database()));

  it('writes rows in the statement of their change: a change not written writes none', async () => {
    const url = await database();
    const store = new PostgresJobStore(url);
    try {
      store.outbox.attachOutbox(everyChange());
      // Several changes in one batch (group commit), one of a job that does not exist.
      const results = await Promise.allSettled([
        store.create(jobOf('one')),
        store.create(jobOf('two')),
        store.update(jobOf('ghost'), { steps: [], events: [] }),
      ]);
      assert.deepEqual(
        results.map((result) => result.status),
        ['fulfilled', 'fulfilled', 'rejected'],
      );
      // A create of a job already there fails on its key: nothing of it is written.
      await assert.rejects(store.create(jobOf('one')));
      const rows = await store.outbox.listNotifications(10);
      assert.deepEqual(
        rows.map((row) => row.jobId),
        ['one', 'two'],
      );
      // Paged: after the first row's seq, the second only.
      assert.deepEqual(
        (await store.outbox.listNotifications(10, rows[0]?.seq)).map((row) => row.jobId),
        ['two'],
      );
    } finally {
      await store.close();
    }
  });

  it('keeps the bound within one statement: new rows beyond it are written dropped', async () => {
    const store = new PostgresJobStore(await database());
    try {
      store.outbox.attachOutbox({ ...everyChange(), maxPending: 2 });
      await store.create(jobOf('old'));
      // One batch of three: with the stored one, two beyond the bound of 2.
      await Promise.all(['a', 'b', 'c'].map((id) => store.create(jobOf(id))));
      assert.deepEqual(
        (await store.outbox.listNotifications(10)).map((row) => [row.jobId, row.status]),
        [
          ['old', 'dropped'],
          ['a', 'dropped'],
          ['b', 'pending'],
          ['c', 'pending'],
        ],
      );
    } finally {
      await store.close();
    }
  });

  it('a store without notifications lists what another wrote, and creates no table itself', async () => {
    const url = await database();
    const reader = new PostgresJobStore(url);
    const writer = new PostgresJobStore(url);
    try {
      assert.deepEqual(await reader.outbox.listNotifications(10), []);
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        const { rows } = await client.query(
          "SELECT to_regclass('warrant_notification_outbox') AS name",
        );
        assert.equal(rows[0]?.name, null);
      } finally {
        await client.end();
      }
      writer.outbox.attachOutbox(everyChange());
      await writer.create(jobOf('j'));
      assert.deepEqual(
        (await reader.outbox.listNotifications(10)).map((row) => [row.jobId, row.status]),
        [['j', 'pending']],
      );
    } finally {
      await reader.close();
      await writer.close();
    }
  });

  it('of two stores (two pools) claiming at once, each row goes to one', async () => {
    const url = await database();
    const one = new PostgresJobStore(url);
    const two = new PostgresJobStore(url);
    try {
      one.outbox.attachOutbox(everyChange());
      two.outbox.attachOutbox(everyChange());
      await Promise.all(
        Array.from({ length: 60 }, (_, index) => one.create(jobOf(`job-${index}`))),
      );
      const now = Date.now();
      const claimed: string[] = [];
      // Concurrent claims, four in flight from each store each round.
      for (let round = 0; round < 10; round++) {
        const batches = await Promise.all(
          [one, two, one, two, one, two, one, two].map((store) =>
            store.outbox.claimNotifications(now, 60_000, 3),
          ),
        );
        for (const batch of batches) claimed.push(...batch.map((row) => row.id));
      }
      assert.equal(claimed.length, 60);
      assert.equal(new Set(claimed).size, 60);
      assert.deepEqual(await one.outbox.claimNotifications(now, 60_000, 100), []);
    } finally {
      await one.close();
      await two.close();
    }
  });
});
