// docs/api.md, "Store outages" and "Recovery": two runtimes on one PostgreSQL database run 16
// plans at once while every connection of theirs is terminated (pg_terminate_backend), as an
// operator or a failover would. Afterwards no job is queued or executing with a live owner (its
// owner lock is free, or the job ended), a runtime opened with `recover: true` settles every job
// left, and no step ran twice (a ledger kept outside Warrant). And one runtime whose owner lock's
// session alone is terminated goes on as a new owner and takes its lost owner's jobs up itself.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { OperatorRuntime, type ExecutionPlan, type Job } from '../../../src/index.js';
import { startTestPostgres, type TestPostgres } from '../../support/postgres.js';
import { register } from '../../support/runtime-fixtures.js';
import { Changes, waitFor } from '../../support/wait.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let postgres: TestPostgres | undefined;
before(async () => {
  postgres = await startTestPostgres();
});
after(async () => {
  await postgres?.stop();
});

/**
 * Terminates the other sessions on the database, resolves how many: all of them, or only the
 * pools' (`pooled`: not the sessions holding an owner's advisory lock, so the owners stay live).
 */
async function terminate(admin: pg.Client, pooled: boolean): Promise<number> {
  const { rows } = await admin.query<{ n: string }>(
    `SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) AS n FROM pg_stat_activity a
     WHERE datname = current_database() AND pid <> pg_backend_pid()
       AND NOT ($1 AND EXISTS (SELECT 1 FROM pg_locks l WHERE l.pid = a.pid AND l.locktype = 'advisory'))`,
    [pooled],
  );
  return Number(rows[0]?.n ?? 0);
}

/** Queued or executing jobs whose owner still holds its lock (a live owner). */
async function heldByLiveOwners(admin: pg.Client): Promise<string[]> {
  const { rows } = await admin.query<{ id: string; lock_key: string | null }>(
    `SELECT j.id, w.lock_key::text AS lock_key FROM warrant_jobs j
     JOIN warrant_job_owners o ON o.job_id = j.id
     LEFT JOIN warrant_owners w ON w.owner = o.owner
     WHERE j.status IN ('queued', 'executing')`,
  );
  const live: string[] = [];
  for (const { id, lock_key: key } of rows) {
    if (key === null) continue;
    const taken = await admin.query<{ free: boolean }>(
      'SELECT pg_try_advisory_lock($1::bigint) AS free',
      [key],
    );
    if (taken.rows[0]?.free === true)
      await admin.query('SELECT pg_advisory_unlock($1::bigint)', [key]);
    else live.push(id);
  }
  return live;
}

/** 16 plans of 4 steps on two runtimes, connections terminated 3 times while they run. */
async function underLoad(pooled: boolean) {
  const url = await (postgres as TestPostgres).createDatabase();
  const runtimes = [new OperatorRuntime({ store: url }), new OperatorRuntime({ store: url })];
  const ledger: string[] = [];
  const [name] = register(runtimes[0] as OperatorRuntime, {
    execute: async ({ input }) => {
      ledger.push(String((input as { mark: string }).mark));
      await sleep(15);
      return { ok: true };
    },
  });
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  let recovering: OperatorRuntime | undefined;
  try {
    // Both stores open and their owner locks taken (on the first job) before the load.
    const warmUp = (runtime: OperatorRuntime) =>
      runtime.executePlan({
        version: '1.0',
        goal: 'warm up',
        steps: [{ id: 'w', capability: name as string, input: { mark: 'warm up' } }],
      });
    for (const runtime of runtimes) assert.equal((await warmUp(runtime)).status, 'completed');
    ledger.length = 0;
    const plans = Array.from({ length: 16 }, (_, n): ExecutionPlan => ({
      version: '1.0',
      goal: `load ${n}`,
      steps: Array.from({ length: 4 }, (_, step) => ({
        id: `s${step}`,
        capability: name as string,
        input: { mark: `${n}/${step}` },
      })),
    }));
    const running = Promise.allSettled(
      plans.map((plan, n) => (runtimes[n % 2] as OperatorRuntime).executePlan(plan)),
    );
    let terminated = 0;
    for (const at of [20, 60, 60]) {
      await sleep(at);
      terminated += await terminate(admin, pooled);
    }
    assert.ok(terminated > 0, 'no connection was terminated');
    const settled = await running;
    for (const outcome of settled)
      if (outcome.status === 'rejected')
        assert.match(
          String((outcome.reason as { code?: unknown }).code),
          /^(JOB_STORE_FAILED|STORE_UNAVAILABLE)$/,
          String(outcome.reason),
        );
    // Within 30 s: no queued or executing job has a live owner.
    let live: string[] = [];
    await waitFor(async () => (live = await heldByLiveOwners(admin)).length === 0, {
      timeoutMs: 30_000,
      intervalMs: 100,
      what: () => `no job executing with a live owner (${live.join(', ')})`,
    });
    if (pooled) {
      // The owners lived through it: every job ended in its own process, none left open.
      // Read here (reads through the runtime are not retried: a pooled connection just
      // terminated may answer one of them with the error).
      const { rows } = await admin.query<{ id: string; status: string }>(
        'SELECT id, status FROM warrant_jobs',
      );
      assert.equal(rows.length, 18);
      for (const { id, status } of rows) {
        assert.notEqual(status, 'queued', id);
        assert.notEqual(status, 'executing', id);
      }
    }
    for (const runtime of runtimes) await runtime.close();
    // What is left waits for the next process: one opened with recover settles it.
    recovering = new OperatorRuntime({ store: url, recover: true });
    let jobs: Job[] = [];
    const open = () => jobs.filter((job) => job.status === 'queued' || job.status === 'executing');
    await waitFor(
      async () => {
        jobs = await (recovering as OperatorRuntime).listJobs({ limit: 100 });
        return open().length === 0;
      },
      {
        timeoutMs: 30_000,
        intervalMs: 100,
        what: () =>
          `no job open (${open()
            .map((job) => job.id)
            .join(', ')})`,
      },
    );
    assert.equal(new Set(ledger).size, ledger.length, `a step ran twice: ${ledger.join(',')}`);
    for (const job of jobs) {
      assert.equal((await recovering.verifyJob(job.id))?.ok, true, job.id);
      // Every step that may have run is completed or interrupted, never left running.
      for (const step of job.steps) assert.notEqual(step.status, 'running', job.id);
    }
  } finally {
    for (const runtime of runtimes) await runtime.close();
    await recovering?.close();
    await admin.end();
  }
}

/**
 * docs/api.md, "Recovery": only the session holding a runtime's owner lock is terminated (an
 * idle-connection killer), its pool's connections live on. The runtime refuses every further
 * write of the jobs it ran as the lost owner (JOB_OWNER_LOST), goes on as a new owner, and with
 * `recover: true` takes the lost owner's jobs up itself while it runs.
 */
async function ownerLockOnly() {
  const url = await (postgres as TestPostgres).createDatabase();
  const runtime = new OperatorRuntime({ store: url, recover: true });
  const ledger: string[] = [];
  const entered = new Changes();
  const [name] = register(runtime, {
    execute: async ({ input }) => {
      ledger.push(String((input as { mark: string }).mark));
      entered.changed();
      await sleep(15);
      return { ok: true };
    },
  });
  const plan = (goal: string, steps: number): ExecutionPlan => ({
    version: '1.0',
    goal,
    steps: Array.from({ length: steps }, (_, step) => ({
      id: `s${step}`,
      capability: name as string,
      input: { mark: `${goal}/${step}` },
    })),
  });
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    assert.equal((await runtime.executePlan(plan('warm up', 1))).status, 'completed');
    const running = Promise.allSettled(
      Array.from({ length: 8 }, (_, n) => runtime.executePlan(plan(`load ${n}`, 4))),
    );
    // Once steps run, the owner lock's session alone is terminated.
    await entered.until(() => ledger.length >= 10, { what: '10 steps of the load to run' });
    const { rows } = await admin.query<{ n: number }>(
      `SELECT count(*) FILTER (WHERE pg_terminate_backend(l.pid))::int AS n FROM pg_locks l
       WHERE l.locktype = 'advisory' AND l.pid <> pg_backend_pid()
         AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
    );
    assert.equal(rows[0]?.n, 1);
    const settled = await running;
    const lost = settled.filter(
      (outcome) =>
        outcome.status === 'rejected' &&
        (outcome.reason as { cause?: { code?: unknown } }).cause?.code === 'JOB_OWNER_LOST',
    );
    for (const outcome of settled)
      if (outcome.status === 'rejected')
        assert.equal((outcome.reason as { code?: unknown }).code, 'JOB_STORE_FAILED');
    assert.ok(lost.length > 0, 'no job was cut off by the lost owner lock');
    // The runtime goes on as a new owner: a new plan runs to its end.
    assert.equal((await runtime.executePlan(plan('after', 2))).status, 'completed');
    assert.deepEqual(runtime.storeAvailability(), { writable: true });
    // The lost owner's jobs end, taken up by this runtime (its new owner) while it runs.
    let jobs: Job[] = [];
    await waitFor(
      async () => {
        jobs = await runtime.listJobs({ limit: 100 });
        return jobs.every((job) => job.status !== 'queued' && job.status !== 'executing');
      },
      { intervalMs: 50, what: 'the jobs of the lost owner to be taken up and end' },
    );
    assert.equal(jobs.length, 10);
    // Each job cut off was taken up by the recovery rule.
    for (const outcome of lost) {
      const jobId = ((outcome as PromiseRejectedResult).reason as { jobId: string }).jobId;
      const job = jobs.find((candidate) => candidate.id === jobId);
      assert.ok(
        job?.events.some((event) => event.type === 'job.recovered'),
        jobId,
      );
    }
    assert.equal(new Set(ledger).size, ledger.length, `a step ran twice: ${ledger.join(',')}`);
    for (const job of jobs) assert.equal((await runtime.verifyJob(job.id))?.ok, true, job.id);
  } finally {
    await runtime.close();
    await admin.end();
  }
}

describe('connections terminated under load (PostgreSQL, two runtimes)', () => {
  it("the pools' connections: every job ends in its live owner, no step ran twice", () =>
    underLoad(true));

  it('every connection, owner locks too: no job executing with a live owner, the next start settles the rest, no step ran twice', () =>
    underLoad(false));

  it('only the owner lock session: the runtime goes on as a new owner and takes the lost owner jobs up, no step ran twice', () =>
    ownerLockOnly());
});
