// `warrant serve` says when its store stops answering writes and when it answers again, once each
// per outage (docs/guide/stores.md, "Store outages"; docs/api.md, "Store outages"): the built
// program on a SQLite file that this test locks from another connection until the server reports
// the outage, as another process would.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { Database } from '../../src/stores/sqlite/sqlite-driver.cjs';
import { call, serveChild, stderrMatches } from '../support/serve-child.js';

const directory = mkdtempSync(join(tmpdir(), 'warrant-serve-outage-'));
after(() => rmSync(directory, { recursive: true, force: true }));

const plan = {
  version: '1.0',
  goal: 'outage',
  steps: [{ id: 'a', capability: 'system.echo', input: { message: 'hi' } }],
};
const count = (text: string, pattern: RegExp) =>
  text.split('\n').filter((line) => pattern.test(line)).length;

describe('warrant serve during a store outage', () => {
  it('logs the outage once and its end once; the job written after it completes', async () => {
    const file = join(directory, 'jobs.db');
    const served = serveChild(['--store', `sqlite:${file}`]);
    const locker = { db: undefined as InstanceType<typeof Database> | undefined };
    try {
      const address = await served.listening;
      // The store is open, its tables made.
      const first = await call(address, 'POST', '/api/plans', { body: plan });
      assert.equal(first.status, 201, JSON.stringify(first.json));
      locker.db = new Database(file);
      locker.db.exec('BEGIN IMMEDIATE');
      const answered = call(address, 'POST', '/api/plans', { body: plan });
      // Held until the server says its writes fail (its first attempt waited out the 5 s busy
      // time-out), then released before its last attempt: an event, not a time window.
      await stderrMatches(served, /store outage: writes to the job store are failing/);
      locker.db.exec('COMMIT');
      const answer = await answered;
      assert.equal(answer.status, 201, JSON.stringify(answer.json));
      assert.equal(answer.json.status, 'completed');
      const stderr = await stderrMatches(served, /store outage ended/);
      assert.equal(count(stderr, /store outage: writes to the job store are failing/), 1, stderr);
      assert.equal(
        count(stderr, /store outage ended: the job store answers writes again/),
        1,
        stderr,
      );
      assert.doesNotMatch(stderr, /SQLITE|database is locked/);
    } finally {
      locker.db?.close();
      await served.stop();
    }
  });
});
