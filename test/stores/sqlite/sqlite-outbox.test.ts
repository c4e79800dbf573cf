// The SQLite store's outbox (src/stores/sqlite/sqlite-outbox.ts) against the outbox contract, and
// its claim across two connections to one file: a row is claimed by one of them only.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { SqliteJobStore } from '../../../src/stores/sqlite/sqlite-store.js';
import type { Job } from '../../../src/jobs/job.js';
import { outboxContract } from '../outbox-contract.js';

const directory = mkdtempSync(join(tmpdir(), 'warrant-outbox-'));
after(() => rmSync(directory, { recursive: true, force: true }));
let files = 0;

describe('SqliteOutbox', () => {
  outboxContract(() => new SqliteJobStore(join(directory, `o-${++files}.db`)));

  it('of two connections claiming at once, each row goes to one', async () => {
    const file = join(directory, 'shared.db');
    const one = new SqliteJobStore(file);
    const two = new SqliteJobStore(file);
    try {
      let counter = 0;
      const writer = {
        maxPending: 1000,
        written: () => {},
        entries: (job: Job) => [
          {
            id: `msg_${++counter}`,
            destination: 'd',
            jobId: job.id,
            type: 'job.completed',
            at: job.createdAt,
            body: '{}',
          },
        ],
      };
      one.outbox.attachOutbox(writer);
      two.outbox.attachOutbox(writer);
      const at = new Date().toISOString();
      for (let index = 0; index < 50; index++)
        await one.create({
          id: `job-${index}`,
          goal: 'g',
          status: 'executing',
          createdAt: at,
          updatedAt: at,
          steps: [],
          events: [],
        });
      const now = Date.now();
      const claimed: string[] = [];
      for (let round = 0; round < 10; round++)
        for (const store of [one, two])
          claimed.push(...store.outbox.claimNotifications(now, 60_000, 3).map((row) => row.id));
      assert.equal(claimed.length, 50);
      assert.equal(new Set(claimed).size, 50);
    } finally {
      one.close();
      two.close();
    }
  });
});
