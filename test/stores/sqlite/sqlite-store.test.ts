import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Database } from '../../../src/stores/sqlite/sqlite-driver.cjs';
import { OperatorRuntime, type Job } from '../../../src/index.js';
import {
  SQLITE_SCHEMA_VERSION,
  SqliteJobStore,
  UNSEALED_HEADS,
} from '../../../src/stores/sqlite/sqlite-store.js';
import { register } from '../../support/runtime-fixtures.js';
import { runJobStoreContract } from '../contract.js';
import { sqliteUnderTest } from '../stores-under-test.js';
import { runCheckpointContract } from '../checkpoint-contract.js';
import { runVerifyContract } from '../verify-contract.js';

const directory = mkdtempSync(join(tmpdir(), 'warrant-sqlite-'));
let files = 0;
const freshFile = () => join(directory, `jobs-${++files}.db`);

const sqlite = sqliteUnderTest('sqlite-contract');
runJobStoreContract(sqlite);
runVerifyContract(sqlite);
runCheckpointContract(sqlite);

/** A job as the executor hands it to a store: created and started, one pending step. */
function startedJob(id: string): Job {
  const at = new Date().toISOString();
  return {
    id,
    goal: 'group commit',
    status: 'executing',
    createdAt: at,
    updatedAt: at,
    startedAt: at,
    steps: [{ id: 's', capability: 'c', status: 'pending', createdAt: at }],
    events: [
      {
        id: `${id}:1`,
        jobId: id,
        type: 'job.created',
        timestamp: at,
        data: { goal: 'group commit' },
      },
      { id: `${id}:2`, jobId: id, type: 'execution.started', timestamp: at },
    ],
  };
}

describe('SqliteJobStore group commit', () => {
  it('settles a change only once another connection can read it', async () => {
    const file = freshFile();
    const store = new SqliteJobStore(file);
    const reader = new Database(file, { readonly: true });
    try {
      const count = () =>
        (reader.prepare('SELECT count(*) AS n FROM jobs').get() as { n: number }).n;
      const written = Promise.all([store.create(startedJob('a')), store.create(startedJob('b'))]);
      await written;
      assert.equal(count(), 2);
    } finally {
      reader.close();
      store.close();
    }
  });

  it('rejects a failing change alone when changes of one turn share a commit', async () => {
    const file = freshFile();
    const store = new SqliteJobStore(file);
    try {
      const good = startedJob('good');
      const [created, orphan] = await Promise.allSettled([
        store.create(good),
        store.update(startedJob('never-created'), { steps: [], events: [] }),
      ]);
      assert.equal(created.status, 'fulfilled');
      assert.equal(orphan.status, 'rejected');
      assert.equal((orphan.reason as { code?: string }).code, 'JOB_NOT_FOUND');
      assert.equal(store.get('good')?.status, 'executing');
      assert.equal(store.get('never-created'), undefined);
    } finally {
      store.close();
    }
  });

  it('commits queued changes before a read and before closing', () => {
    const file = freshFile();
    const store = new SqliteJobStore(file);
    void store.create(startedJob('read-me'));
    assert.equal(store.get('read-me')?.id, 'read-me', 'get commits the queue first');
    void store.create(startedJob('closed-with-me'));
    store.close();
    const again = new SqliteJobStore(file);
    try {
      assert.equal(again.get('closed-with-me')?.id, 'closed-with-me');
    } finally {
      again.close();
    }
  });
});

describe('SqliteJobStore specifics', () => {
  it('opens in WAL mode with its schema version recorded', () => {
    const file = freshFile();
    new SqliteJobStore(file).close();
    const db = new Database(file, { readonly: true });
    try {
      assert.equal(db.pragma('journal_mode', { simple: true }), 'wal');
      assert.deepEqual(db.prepare('SELECT version FROM schema_version').all(), [
        { version: SQLITE_SCHEMA_VERSION },
      ]);
    } finally {
      db.close();
    }
  });

  it('refuses a database whose schema is newer than this code, with STORE_SCHEMA_TOO_NEW', () => {
    const file = freshFile();
    new SqliteJobStore(file).close();
    const db = new Database(file);
    db.prepare('UPDATE schema_version SET version = ?').run(SQLITE_SCHEMA_VERSION + 1);
    db.close();
    assert.throws(() => new SqliteJobStore(file), {
      code: 'STORE_SCHEMA_TOO_NEW',
      message: new RegExp(
        `schema version ${SQLITE_SCHEMA_VERSION + 1}; this Warrant knows up to ${SQLITE_SCHEMA_VERSION}\\.`,
      ),
    });
  });

  it('migrates a version 1 file (raw goal and capability columns) when it opens it', async () => {
    const file = freshFile();
    const goal = 'a goal with "quotes", \\, tab\t, nul \u0000, \u{1F600}';
    const runtime = new OperatorRuntime({ store: `sqlite:${file}` });
    const [name] = register(runtime, { execute: () => 'ok' });
    const job = await runtime.executePlan({
      version: '1.0',
      goal,
      steps: [{ id: 's', capability: name as string }],
    });
    await runtime.close();
    // What version 1 wrote: the same rows with the two columns as raw text.
    const db = new Database(file);
    db.exec(`
      UPDATE jobs SET goal = json_extract(goal, '$');
      UPDATE job_steps SET capability = json_extract(capability, '$');
      ALTER TABLE job_steps DROP COLUMN decision;
      ALTER TABLE job_events DROP COLUMN hash;
      UPDATE schema_version SET version = 1;
    `);
    assert.equal((db.prepare('SELECT goal FROM jobs').get() as { goal: string }).goal, goal);
    db.close();
    const again = new OperatorRuntime({ store: `sqlite:${file}` });
    try {
      const stored = await again.getJob(job.id);
      assert.equal(stored?.goal, goal);
      assert.equal(stored?.steps[0]?.capability, name);
      assert.deepEqual(
        (await again.listJobs({ goal })).map((found) => found.id),
        [job.id],
      );
      assert.deepEqual(
        (await again.listJobs({ capability: name as string })).map((found) => found.id),
        [job.id],
      );
    } finally {
      await again.close();
    }
    const reader = new Database(file, { readonly: true });
    try {
      assert.deepEqual(reader.prepare('SELECT version FROM schema_version').all(), [
        { version: SQLITE_SCHEMA_VERSION },
      ]);
    } finally {
      reader.close();
    }
  });

  it('uses indexes, not full scans, for get and filtered lists', () => {
    const file = freshFile();
    new SqliteJobStore(file).close();
    const db = new Database(file, { readonly: true });
    try {
      const plan = (sql: string) =>
        (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as { detail: string }[])
          .map((row) => row.detail)
          .join(' | ');
      assert.match(plan("SELECT * FROM jobs WHERE id = 'x'"), /USING INDEX/);
      assert.match(plan('SELECT * FROM jobs ORDER BY seq DESC LIMIT 50'), /SCAN jobs/);
      assert.doesNotMatch(plan('SELECT * FROM jobs ORDER BY seq DESC LIMIT 50'), /TEMP B-TREE/);
      assert.match(
        plan("SELECT * FROM jobs WHERE status = 'failed' ORDER BY seq DESC LIMIT 50"),
        /USING INDEX jobs_by_status/,
      );
      assert.match(
        plan("SELECT job_seq FROM job_steps WHERE capability = 'c'"),
        /USING (COVERING )?INDEX job_steps_by_capability/,
      );
      // A seal reads each marked job's last event by key: a scan of job_events would make every
      // checkpoint cost as much as the whole store holds.
      const seal = plan(UNSEALED_HEADS);
      assert.match(seal, /SCAN u/);
      assert.doesNotMatch(seal, /SCAN (e|j|jobs|job_events)\b/);
      assert.match(seal, /SEARCH e USING PRIMARY KEY \(job_seq=\? AND position=\?\)/);
      // ...and each job's last checkpoint entry by key too.
      assert.doesNotMatch(seal, /SCAN (c|checkpoint_entries)\b/);
      assert.match(seal, /SEARCH c USING PRIMARY KEY \(checkpoint=\? AND job_id=\?\)/);
    } finally {
      db.close();
    }
  });

  it('is selected by the runtime with store "sqlite:<file>" and refuses "sqlite:" without a file', async () => {
    assert.throws(() => new OperatorRuntime({ store: 'sqlite:' }), {
      code: 'RUNTIME_OPTIONS_INVALID',
    });
    const runtime = new OperatorRuntime({ store: `sqlite:${freshFile()}` });
    assert.deepEqual(await runtime.listJobs(), []);
    await runtime.close();
  });

  it('keys its chain with WARRANT_AUDIT_KEY when the runtime has no auditKey option', async () => {
    const file = freshFile();
    const previous = process.env.WARRANT_AUDIT_KEY;
    process.env.WARRANT_AUDIT_KEY = 'from the environment';
    let runtime: OperatorRuntime;
    try {
      runtime = new OperatorRuntime({ store: `sqlite:${file}` });
    } finally {
      if (previous === undefined) delete process.env.WARRANT_AUDIT_KEY;
      else process.env.WARRANT_AUDIT_KEY = previous;
    }
    const [name] = register(runtime, { execute: () => 'ok' });
    const job = await runtime.executePlan({
      version: '1.0',
      steps: [{ id: 's', capability: name as string }],
    });
    assert.deepEqual(await runtime.verifyJob(job.id), { ok: true, events: 5 });
    await runtime.close();
    const db = new Database(file, { readonly: true });
    try {
      const hashes = db.prepare('SELECT hash FROM job_events').pluck().all() as string[];
      assert.equal(hashes.length, 5);
      assert.ok(hashes.every((hash) => /^hmac-sha256:[0-9a-f]{64}$/.test(hash)));
    } finally {
      db.close();
    }
    const keyless = new OperatorRuntime({ store: `sqlite:${file}`, auditKey: 'another key' });
    try {
      assert.equal((await keyless.verifyJob(job.id))?.ok, false);
    } finally {
      await keyless.close();
    }
  });

  it('migrates a version 5 file: the owners of its job_owners rows move to the jobs, and recovery takes them', async () => {
    const file = freshFile();
    const first = new SqliteJobStore(file);
    await first.create(startedJob('interrupted'));
    await first.create({ ...startedJob('ended'), status: 'completed' });
    first.close();
    // What version 5 had: no owner column, a job_owners row per job (of a process gone since).
    const db = new Database(file);
    db.exec(`
      ALTER TABLE jobs DROP COLUMN owner;
      CREATE TABLE job_owners (job_id TEXT PRIMARY KEY, owner TEXT NOT NULL) WITHOUT ROWID;
      INSERT INTO job_owners VALUES ('interrupted', 'owner-gone'), ('ended', 'owner-gone');
      UPDATE schema_version SET version = 5;
    `);
    db.close();
    const again = new SqliteJobStore(file);
    try {
      const reader = new Database(file, { readonly: true });
      try {
        assert.deepEqual(reader.prepare('SELECT id, owner FROM jobs ORDER BY seq').raw().all(), [
          ['interrupted', 'owner-gone'],
          ['ended', null],
        ]);
        assert.equal(reader.prepare('SELECT version FROM schema_version').pluck().get(), 6);
      } finally {
        reader.close();
      }
      assert.deepEqual(again.claimOrphans(), ['interrupted']);
      assert.deepEqual(again.claimOrphans(), [], 'taken once');
    } finally {
      again.close();
    }
  });

  it('records an owner only while a job is queued or executing (recovery reads no other)', async () => {
    const file = freshFile();
    const reader = () => new Database(file, { readonly: true });
    const owned = (): string[] => {
      const db = reader();
      try {
        return db.prepare('SELECT id FROM jobs WHERE owner IS NOT NULL').pluck().all() as string[];
      } finally {
        db.close();
      }
    };
    const seen: string[][] = [];
    const runtime = new OperatorRuntime({
      store: `sqlite:${file}`,
      approvals: { approver: { canApprove: () => true } },
    });
    try {
      const [write] = register(runtime, {
        risk: 'write',
        execute: () => {
          seen.push(owned());
          return 'ok';
        },
      });
      const [fails] = register(runtime, {
        execute: () => {
          throw new Error('no');
        },
      });
      const [read] = register(runtime, {
        execute: () => {
          seen.push(owned());
          return 'ok';
        },
      });
      const done = await runtime.executePlan({
        version: '1.0',
        steps: [{ id: 'r', capability: read as string }],
      });
      assert.deepEqual(seen, [[done.id]], 'owned while executing');
      const failed = await runtime.executePlan({
        version: '1.0',
        steps: [{ id: 'f', capability: fails as string }],
      });
      assert.equal(failed.status, 'failed');
      assert.deepEqual(owned(), [], 'released when the job ends, completed or failed');
      const waiting = await runtime.executePlan({
        version: '1.0',
        steps: [{ id: 'w', capability: write as string }],
      });
      assert.equal(waiting.status, 'awaiting_approval');
      assert.deepEqual(owned(), [], 'released while the job waits for an approval');
      const resumed = await runtime.decideApproval({
        jobId: waiting.id,
        stepId: 'w',
        decision: 'approve',
        approver: { id: 'bob' },
        inputDigest: waiting.steps[0]?.decision?.inputDigest ?? '',
      });
      assert.equal(resumed.status, 'completed');
      assert.deepEqual(seen[1], [waiting.id], 'taken again by the approval that resumes it');
      assert.deepEqual(owned(), []);
    } finally {
      await runtime.close();
    }
  });

  it('reports an unopenable file with STORE_OPEN_FAILED when first used', async () => {
    const runtime = new OperatorRuntime({
      store: `sqlite:${join(directory, 'missing-dir', 'x', 'jobs.db')}`,
    });
    await assert.rejects(runtime.listJobs(), { code: 'STORE_OPEN_FAILED' });
  });
});
