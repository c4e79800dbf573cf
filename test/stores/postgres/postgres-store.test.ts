// The PostgreSQL store (issue 4): the shared contract, its own guarantees, and several processes
// writing one database at once. PostgreSQL comes from test/support/postgres.ts: an embedded
// server started here, or WARRANT_TEST_POSTGRES_URL. These tests never skip.
import assert from 'node:assert/strict';
import { AsyncLocalStorage } from 'node:async_hooks';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { OperatorRuntime, createCapability, type Job } from '../../../src/index.js';
import {
  DEFAULT_STATEMENT_TIMEOUT_MS,
  POSTGRES_SCHEMA_VERSION,
  PostgresJobStore,
  redactUrl,
  statementTimeoutOf,
} from '../../../src/stores/postgres/postgres-store.js';
import { isoNow } from '../../../src/jobs/clock.js';
import { createJob, startQueuedJob } from '../../../src/jobs/transitions.js';
import { TAKE_QUEUED } from '../../../src/stores/postgres/postgres-schema.js';
import { startTestPostgres, type TestPostgres } from '../../support/postgres.js';
import { waitFor } from '../../support/wait.js';
import { uniqueName } from '../../support/runtime-fixtures.js';
import { runJobStoreContract } from '../contract.js';
import { postgresQuery as query, postgresUnderTest } from '../stores-under-test.js';
import { runCheckpointContract } from '../checkpoint-contract.js';
import { runVerifyContract } from '../verify-contract.js';
import { TS_LOADER } from '../../support/ts-loader.js';

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
runJobStoreContract(postgresStore);
runVerifyContract(postgresStore);
runCheckpointContract(postgresStore);

const echo = uniqueName('pg.echo');
new OperatorRuntime().use({
  manifest: { name: uniqueName('pg-module'), version: '1', capabilities: [echo] },
  capabilities: [
    createCapability({
      name: echo,
      version: '1',
      description: 'd',
      risk: 'read',
      execute: ({ input }) => input,
    }),
  ],
});
const oneStep = (goal: string) => ({
  version: '1.0' as const,
  goal,
  steps: [{ id: 'only', capability: echo, input: { goal } }],
});

describe('PostgresJobStore specifics', () => {
  it('keeps an error listener on a client it holds between statements (a terminated connection is never an unhandled error event)', async () => {
    const url = await (await postgres()).createDatabase();
    const listeners: number[] = [];
    const connect = pg.Pool.prototype.connect;
    // Every client the store checks out, as it gets it: how many listen for its 'error'.
    pg.Pool.prototype.connect = function (this: pg.Pool, ...args: unknown[]) {
      // pool.query checks out with a callback: that form is left as it is.
      if (args.length > 0) return (connect as (...a: unknown[]) => unknown).apply(this, args);
      return (connect as (this: pg.Pool) => Promise<pg.PoolClient>).call(this).then((client) => {
        listeners.push(client.listenerCount('error'));
        return client;
      });
    } as typeof connect;
    const store = new PostgresJobStore(url);
    try {
      await store.list({ limit: 1 });
    } finally {
      pg.Pool.prototype.connect = connect;
      await store.close();
    }
    assert.ok(listeners.length > 0, 'the store checked out a client (its schema check)');
    assert.ok(
      listeners.every((count) => count >= 1),
      `listeners: ${listeners.join(', ')}`,
    );
  });

  it('creates its schema once even when several stores open one database at the same time', async () => {
    const url = await (await postgres()).createDatabase();
    const stores = Array.from({ length: 6 }, () => new PostgresJobStore(url));
    try {
      await Promise.all(stores.map((store) => store.list({})));
      assert.deepEqual(await query(url, 'SELECT version FROM warrant_schema_version'), [
        { version: POSTGRES_SCHEMA_VERSION },
      ]);
    } finally {
      await Promise.all(stores.map((store) => store.close()));
    }
  });

  it('refuses a database whose schema is newer than this code, with STORE_SCHEMA_TOO_NEW', async () => {
    const url = await (await postgres()).createDatabase();
    const first = new PostgresJobStore(url);
    await first.list({});
    await first.close();
    await query(url, 'UPDATE warrant_schema_version SET version = $1', [
      POSTGRES_SCHEMA_VERSION + 1,
    ]);
    const runtime = new OperatorRuntime({ store: url });
    await assert.rejects(runtime.listJobs(), {
      code: 'STORE_SCHEMA_TOO_NEW',
      message: new RegExp(
        `schema version ${POSTGRES_SCHEMA_VERSION + 1}; this Warrant knows up to ${POSTGRES_SCHEMA_VERSION}\\.`,
      ),
    });
    await runtime.close();
  });

  it('reports an unreachable server with STORE_OPEN_FAILED and never shows the password', async () => {
    const url = 'postgres://warrant:s3cret-password@127.0.0.1:1/none';
    const runtime = new OperatorRuntime({ store: url });
    const error = await runtime.listJobs().then(
      () => assert.fail('listJobs should reject'),
      (reason: unknown) => reason as Error & { code: string },
    );
    assert.equal(error.code, 'STORE_OPEN_FAILED');
    assert.doesNotMatch(error.message, /s3cret/);
    assert.match(error.message, /postgres:\/\/warrant:\*\*\*@127\.0\.0\.1:1\/none/);
    await runtime.close();
    assert.equal(redactUrl('postgresql://u@h/d'), 'postgresql://u@h/d');
  });

  it('keeps goals PostgreSQL text cannot hold (U+0000) and filters on them', async () => {
    const url = await (await postgres()).createDatabase();
    const runtime = new OperatorRuntime({ store: url });
    try {
      const goal = 'nul \u0000 and \u{1F600} and "quotes" {braces} \\ backslash';
      const job = await runtime.executePlan(oneStep(goal));
      assert.equal(job.status, 'completed');
      assert.equal((await runtime.getJob(job.id))?.goal, goal);
      assert.deepEqual(
        (await runtime.listJobs({ goal })).map((found) => found.id),
        [job.id],
      );
      assert.deepEqual(await runtime.listJobs({ goal: 'nul ' }), []);
    } finally {
      await runtime.close();
    }
  });

  it('migrates a version 1 database (raw capability column) on first use', async () => {
    const url = await (await postgres()).createDatabase();
    // Every character PostgreSQL text holds but JSON escapes, and some it does not escape.
    const odd = Array.from({ length: 0x7f }, (_, code) => String.fromCharCode(code + 1)).join('');
    const name = uniqueName(`pg.migrated ${odd} \u00e9 \u2028 \u{1F600}`);
    new OperatorRuntime().use({
      manifest: { name: uniqueName('pg-migrate-module'), version: '1', capabilities: [name] },
      capabilities: [
        createCapability({
          name,
          version: '1',
          description: 'd',
          risk: 'read',
          execute: () => 'ok',
        }),
      ],
    });
    const runtime = new OperatorRuntime({ store: url });
    const job = await runtime.executePlan({
      version: '1.0',
      goal: 'migrate me',
      steps: [{ id: 's', capability: name }],
    });
    await runtime.close();
    // What version 1 wrote: the capability as raw text.
    await query(url, `UPDATE warrant_job_steps SET capability = capability::json #>> '{}'`);
    await query(url, 'ALTER TABLE warrant_job_steps DROP COLUMN decision');
    await query(url, 'ALTER TABLE warrant_job_events DROP COLUMN hash');
    await query(url, 'UPDATE warrant_schema_version SET version = 1');
    assert.deepEqual(await query(url, 'SELECT capability FROM warrant_job_steps'), [
      { capability: name },
    ]);
    const again = new OperatorRuntime({ store: url });
    try {
      assert.equal((await again.getJob(job.id))?.steps[0]?.capability, name);
      assert.deepEqual(
        (await again.listJobs({ capability: name })).map((found) => found.id),
        [job.id],
      );
      assert.deepEqual(await query(url, 'SELECT version FROM warrant_schema_version'), [
        { version: POSTGRES_SCHEMA_VERSION },
      ]);
    } finally {
      await again.close();
    }
  });

  it('reads a job with its steps and events in one snapshot while another store writes', async () => {
    const url = await (await postgres()).createDatabase();
    const writer = new OperatorRuntime({ store: url });
    const reader = new PostgresJobStore(url);
    try {
      const running = Promise.all(
        Array.from({ length: 30 }, (_, index) => writer.executePlan(oneStep(`snapshot ${index}`))),
      );
      // Readers see each job either absent or with events consistent with its status.
      for (let round = 0; round < 10; round++) {
        for (const job of await reader.list({})) {
          const last = job.events.at(-1)?.type;
          if (job.status === 'completed') assert.equal(last, 'job.completed');
          if (job.status === 'created') assert.equal(last, 'job.created');
          if (job.status === 'executing') assert.match(last ?? '', /^(execution|capability)\./);
          assert.equal(job.events.length >= 1 && job.steps.length === 1, true);
        }
      }
      await running;
      assert.equal((await reader.list({})).length, 30);
    } finally {
      await writer.close();
      await reader.close();
    }
  });
});

describe('PostgreSQL queued jobs taken and started', () => {
  /** A queued one-step job, created through `store`. */
  async function queuedJob(store: PostgresJobStore): Promise<string> {
    const id = randomUUID();
    const { running } = createJob(
      {
        id: undefined,
        goal: 'queued',
        metadata: undefined,
        idempotencyKey: undefined,
        steps: [
          {
            id: 'only',
            capability: { name: echo },
            capabilityVersion: undefined,
            input: { n: 1 },
            reason: undefined,
            idempotencyKey: undefined,
          },
        ],
      },
      undefined,
      id,
      isoNow(),
      undefined,
      true,
    );
    await store.create(running.record);
    return id;
  }

  /**
   * Runs `work`, counting the statements it sends (in its own async context: the stores'
   * sealers, on timers set before, are not counted).
   */
  async function counted<T>(work: () => Promise<T>): Promise<[T, number]> {
    const original = pg.Client.prototype.query;
    const context = new AsyncLocalStorage<true>();
    let statements = 0;
    pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
      if (context.getStore() === true) statements++;
      return (original as (...rest: unknown[]) => unknown).apply(this, args);
    } as typeof original;
    try {
      return [await context.run(true, work), statements];
    } finally {
      pg.Client.prototype.query = original;
    }
  }

  /** Starts `record` as `store` read it: whether it was written, and the statements sent. */
  async function startAsRead(store: PostgresJobStore, record: Job): Promise<[boolean, number]> {
    const running = { record, job: structuredClone(record) };
    const change = startQueuedJob(running, isoNow());
    return counted(() => store.updateWhileQueued(record, change));
  }

  it('takes a queued job by one statement, from whichever owner holds it, never once it started', async () => {
    const url = await (await postgres()).createDatabase();
    const stores = Array.from({ length: 4 }, () => new PostgresJobStore(url));
    const [submitter] = stores as [PostgresJobStore];
    const ownerOf = async (id: string) =>
      (
        (await query(url, 'SELECT owner FROM warrant_job_owners WHERE job_id = $1', [id])) as {
          owner: string;
        }[]
      )[0]?.owner;
    try {
      // Each store takes its owner lock on first use: counted from then on.
      for (const store of stores) assert.equal(await store.takeQueued('no-such-job'), false);
      for (const ownerless of [false, true]) {
        const id = await queuedJob(submitter);
        // A job recorded before owners existed has no owner row: one is written.
        if (ownerless) await query(url, 'DELETE FROM warrant_job_owners WHERE job_id = $1', [id]);
        // One after another: each takes it from the one before (a compare-and-swap on the owner
        // it read; the conditional start decides which of them runs it).
        for (const store of stores.slice(1)) {
          assert.deepEqual(await counted(() => store.takeQueued(id)), [true, 1]);
          assert.equal(await ownerOf(id), store.owner);
        }
        // Its own already: taken again.
        assert.equal(await (stores[3] as PostgresJobStore).takeQueued(id), true);
        // At once: it ends with one that said it took it.
        const taken = await Promise.all(stores.map((store) => store.takeQueued(id)));
        const takers = stores.filter((_, index) => taken[index]).map((store) => store.owner);
        assert.ok(takers.includes((await ownerOf(id)) as string), `${taken.join(', ')}`);
      }
      // A job that is not queued is taken by none.
      const started = await queuedJob(submitter);
      assert.equal((await startAsRead(submitter, (await submitter.get(started)) as Job))[0], true);
      assert.deepEqual(await Promise.all(stores.map((store) => store.takeQueued(started))), [
        false,
        false,
        false,
        false,
      ]);
      assert.equal(await submitter.takeQueued('no-such-job'), false);
    } finally {
      await Promise.all(stores.map((store) => store.close()));
    }
  });

  it('two takers that read the same owner: the one that waited for the other takes nothing', async () => {
    const url = await (await postgres()).createDatabase();
    const store = new PostgresJobStore(url);
    const [first, second] = [new pg.Client({ connectionString: url }), new pg.Client(url)];
    await Promise.all([first.connect(), second.connect()]);
    try {
      for (const ownerless of [false, true]) {
        const id = await queuedJob(store);
        if (ownerless) await query(url, 'DELETE FROM warrant_job_owners WHERE job_id = $1', [id]);
        // The first takes it in a transaction left open: the second reads the same owner, then
        // waits for the first's row (or key) and checks again once the first commits.
        await first.query('BEGIN');
        const took = await first.query<{ taken: boolean }>(TAKE_QUEUED, ['owner-first', id]);
        assert.equal(took.rows[0]?.taken, true);
        const secondPid = (await second.query<{ pid: number }>('SELECT pg_backend_pid() AS pid'))
          .rows[0]?.pid;
        const waiting = second.query<{ taken: boolean }>(TAKE_QUEUED, ['owner-second', id]);
        await waitFor(
          async () =>
            (
              await query(url, 'SELECT wait_event_type FROM pg_stat_activity WHERE pid = $1', [
                secondPid,
              ])
            )[0]?.wait_event_type === 'Lock',
          { what: `the second taker of ${id} waiting for the first` },
        );
        await first.query('COMMIT');
        assert.equal((await waiting).rows[0]?.taken, false, ownerless ? 'ownerless' : 'owned');
        assert.deepEqual(
          await query(url, 'SELECT owner FROM warrant_job_owners WHERE job_id = $1', [id]),
          [{ owner: 'owner-first' }],
        );
      }
    } finally {
      await Promise.all([first.end(), second.end()]);
      await store.close();
    }
  });

  it('starts a job it read by one statement, only while the job is still as read', async () => {
    const url = await (await postgres()).createDatabase();
    const store = new PostgresJobStore(url);
    const runtime = new OperatorRuntime({ store: url });
    try {
      // Read twice, started from the first read: the second read's start loses.
      const id = await queuedJob(store);
      const [first, second] = [(await store.get(id)) as Job, (await store.get(id)) as Job];
      assert.deepEqual(await startAsRead(store, first), [true, 1]);
      assert.deepEqual(await startAsRead(store, second), [false, 1]);
      const started = (await store.get(id)) as Job;
      assert.equal(started.status, 'executing');
      assert.deepEqual(
        started.events.map((event) => event.type),
        ['job.created', 'execution.started'],
      );
      assert.equal((await runtime.verifyJob(id))?.ok, true);

      // An event written behind the read's back, the job still queued: the start loses.
      const appended = await queuedJob(store);
      const behind = (await store.get(appended)) as Job;
      await query(
        url,
        `INSERT INTO warrant_job_events (job_seq, position, event, hash)
         SELECT seq, 1, '{}', 'other' FROM warrant_jobs WHERE id = $1`,
        [appended],
      );
      assert.equal((await startAsRead(store, behind))[0], false);

      // The last event's chain hash is not the one read with the record: the start loses.
      const forged = await queuedJob(store);
      const read = (await store.get(forged)) as Job;
      await query(
        url,
        `UPDATE warrant_job_events SET hash = 'forged'
         WHERE job_seq = (SELECT seq FROM warrant_jobs WHERE id = $1)`,
        [forged],
      );
      assert.equal((await startAsRead(store, read))[0], false);
      for (const unchanged of [appended, forged])
        assert.equal((await store.get(unchanged))?.status, 'queued');
    } finally {
      await runtime.close();
      await store.close();
    }
  });
});

describe('PostgreSQL group commit', () => {
  /** Runs `work` counting the statements every pg pool of this process sends meanwhile. */
  async function countingStatements<T>(work: () => Promise<T>): Promise<[T, number]> {
    const original = pg.Pool.prototype.query;
    let statements = 0;
    pg.Pool.prototype.query = function (this: pg.Pool, ...args: unknown[]) {
      statements++;
      return (original as (...rest: unknown[]) => unknown).apply(this, args);
    } as typeof original;
    try {
      return [await work(), statements];
    } finally {
      pg.Pool.prototype.query = original;
    }
  }

  it('writes the changes of jobs in flight together: 16 jobs at once in far fewer than 3 statements each', async () => {
    const url = await (await postgres()).createDatabase();
    const runtime = new OperatorRuntime({ store: url });
    try {
      await runtime.listJobs();
      const [jobs, statements] = await countingStatements(() =>
        Promise.all(
          Array.from({ length: 16 }, (_, index) => runtime.executePlan(oneStep(`group ${index}`))),
        ),
      );
      assert.equal(jobs.filter((job) => job.status === 'completed').length, 16);
      // One statement per change would be 48 (created, step started, ended, for each job).
      assert.ok(statements <= 12, `${statements} statements for 16 jobs in flight`);
      for (const job of jobs) {
        const stored = (await runtime.getJob(job.id)) as Job;
        assert.deepEqual(
          stored.events.map((event) => event.type),
          [
            'job.created',
            'execution.started',
            'capability.started',
            'capability.completed',
            'job.completed',
          ],
        );
        assert.equal((await runtime.verifyJob(job.id))?.ok, true);
      }
    } finally {
      await runtime.close();
    }
  });

  it('fails only the change at fault in a batch: a duplicate job and an unknown job, the others written', async () => {
    const url = await (await postgres()).createDatabase();
    const runtime = new OperatorRuntime({ store: url });
    const store = new PostgresJobStore(url);
    try {
      const existing = (await runtime.executePlan(oneStep('existing'))) as Job;
      const fresh = { ...existing, id: randomUUID(), goal: 'fresh' };
      const unknown = { ...existing, id: randomUUID() };
      // The three are reported in one turn, so they share one batch.
      const settled = await Promise.allSettled([
        store.create(existing),
        store.create(fresh),
        store.update(unknown, { steps: [], events: [] }),
      ]);
      assert.equal(settled[0].status, 'rejected');
      assert.equal(settled[1].status, 'fulfilled');
      assert.equal(settled[2].status, 'rejected');
      assert.equal(
        ((settled[2] as PromiseRejectedResult).reason as { code?: string }).code,
        'JOB_NOT_FOUND',
      );
      assert.equal((await store.get(fresh.id))?.goal, 'fresh');
      assert.equal((await store.get(unknown.id)) === undefined, true);
    } finally {
      await store.close();
      await runtime.close();
    }
  });
});

/** Settles with what `work` settles with, or with 'still pending' after `ms` (bounds every wait). */
async function within<T>(ms: number, work: Promise<T>): Promise<T | 'still pending'> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'still pending'>((resolve) => {
    timer = setTimeout(() => resolve('still pending'), ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A TCP relay to PostgreSQL that can stall: from `stall()` on it forwards nothing in either
 * direction and answers nothing, like a server that stopped (or a dead link). With no target it
 * accepts connections and never answers.
 */
async function stallingRelay(target?: { host: string; port: number }) {
  const sockets = new Set<Socket>();
  let stalled = target === undefined;
  const server: Server = createServer((client) => {
    sockets.add(client);
    client.on('error', () => {});
    if (target === undefined) return;
    const upstream = connect(target.port, target.host);
    sockets.add(upstream);
    upstream.on('error', () => {});
    client.on('data', (chunk) => stalled || upstream.write(chunk));
    upstream.on('data', (chunk) => stalled || client.write(chunk));
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  return {
    port,
    stall() {
      stalled = true;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      server.close();
      await once(server, 'close');
    },
  };
}

describe('PostgreSQL statement time-out', () => {
  it('defaults to 30 s, read from the URL parameter statement_timeout (0 for none)', () => {
    assert.equal(DEFAULT_STATEMENT_TIMEOUT_MS, 30_000);
    assert.equal(statementTimeoutOf('postgres://h/db'), null);
    assert.equal(statementTimeoutOf('postgres://h/db?statement_timeout=250'), 250);
    assert.equal(statementTimeoutOf('postgres://h/db?statement_timeout=0'), 0);
    for (const bad of ['abc', '-1', '1.5', '', '2147483648', '1e3'])
      assert.equal(statementTimeoutOf(`postgres://h/db?statement_timeout=${bad}`), undefined, bad);
    assert.equal(
      statementTimeoutOf('postgres://h/db?statement_timeout=1&statement_timeout=2'),
      undefined,
    );
  });

  it('fails a statement that waits on a lock held by another connection instead of hanging', async () => {
    const url = await (await postgres()).createDatabase();
    const store = new PostgresJobStore(url, { statementTimeoutMs: 300 });
    const locker = new pg.Client({ connectionString: url });
    try {
      await store.list({});
      await locker.connect();
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE warrant_jobs IN ACCESS EXCLUSIVE MODE');
      const outcome = await within(
        10_000,
        store.get('any').then(
          () => 'answered',
          (error: unknown) => error as Error & { code?: string },
        ),
      );
      assert.notEqual(outcome, 'still pending', 'the read must fail, not wait for the lock');
      assert.equal((outcome as { code?: string }).code, '57014'); // query_canceled
      assert.match((outcome as Error).message, /statement timeout/);
      await locker.query('ROLLBACK');
      assert.equal(
        await store.get('any'),
        undefined,
        'the store works again once the lock is gone',
      );
    } finally {
      await locker.end().catch(() => {});
      await store.close();
    }
  });

  it('takes the time-out from the statement_timeout URL parameter of a runtime store', async () => {
    const url = await (await postgres()).createDatabase();
    const runtime = new OperatorRuntime({ store: `${url}?statement_timeout=300` });
    const locker = new pg.Client({ connectionString: url });
    try {
      await runtime.listJobs();
      await locker.connect();
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE warrant_jobs IN ACCESS EXCLUSIVE MODE');
      const outcome = await within(
        10_000,
        runtime.executePlan(oneStep('blocked')).then(
          () => 'ran',
          (error: unknown) => error as Error & { code?: string },
        ),
      );
      assert.equal((outcome as { code?: string }).code, 'JOB_STORE_FAILED');
      await locker.query('ROLLBACK');
    } finally {
      await locker.end().catch(() => {});
      await runtime.close();
    }
  });

  it('fails requests to a server that stops answering, mid-session or at connection', async () => {
    const url = new URL(await (await postgres()).createDatabase());
    const relay = await stallingRelay({ host: url.hostname, port: Number(url.port) });
    const silent = await stallingRelay();
    const viaRelay = new URL(url);
    viaRelay.port = String(relay.port);
    const viaSilent = new URL(url);
    viaSilent.port = String(silent.port);
    const store = new PostgresJobStore(viaRelay.toString(), { statementTimeoutMs: 300 });
    const unanswered = new PostgresJobStore(viaSilent.toString(), { statementTimeoutMs: 300 });
    try {
      await store.list({});
      relay.stall();
      const read = await within(
        10_000,
        store.get('any').then(
          () => 'answered',
          (error: unknown) => error as Error,
        ),
      );
      assert.notEqual(read, 'still pending', 'a read from a stalled server must fail');
      assert.ok(read instanceof Error);
      const opened = await within(
        10_000,
        unanswered.list({}).then(
          () => 'answered',
          (error: unknown) => error as Error & { code?: string },
        ),
      );
      assert.notEqual(opened, 'still pending', 'connecting to a silent server must fail');
      assert.equal((opened as { code?: string }).code, 'STORE_OPEN_FAILED');
    } finally {
      await relay.close();
      await silent.close();
      await store.close();
      await unanswered.close();
    }
  });
});

describe('PostgreSQL store shared by three processes', () => {
  it('records exactly 600 complete, consistent jobs from 3 processes x 200 plans, events in order', async () => {
    const url = await (await postgres()).createDatabase();
    const workers = ['a', 'b', 'c'].map((worker) =>
      spawn(
        process.execPath,
        [...TS_LOADER, 'test/stores/fixtures/postgres-worker.ts', url, worker, '200'],
        { stdio: ['ignore', 'inherit', 'inherit'] },
      ),
    );
    const codes = await Promise.all(workers.map(async (child) => (await once(child, 'exit'))[0]));
    assert.deepEqual(codes, [0, 0, 0]);

    const store = new PostgresJobStore(url);
    try {
      const jobs = await store.list({});
      assert.equal(jobs.length, 600);
      assert.equal(new Set(jobs.map((job) => job.id)).size, 600);
      // Newest first by creation time, across processes.
      for (let index = 1; index < jobs.length; index++) {
        assert.ok(
          (jobs[index - 1] as Job).createdAt >= (jobs[index] as Job).createdAt,
          `list order at ${index}`,
        );
      }
      const goals = new Set(jobs.map((job) => job.goal));
      for (const worker of ['a', 'b', 'c'])
        for (let index = 0; index < 200; index++)
          assert.ok(goals.has(`worker ${worker} plan ${index}`), `${worker} ${index}`);
      for (const job of jobs) {
        const denied = Number(job.goal.split(' ').at(-1)) % 3 === 0;
        assert.equal(job.status, denied ? 'failed' : 'completed', job.goal);
        assert.deepEqual(
          job.steps.map((step) => step.status),
          denied ? ['completed', 'failed', 'skipped'] : ['completed', 'completed', 'completed'],
        );
        assert.deepEqual(
          job.events.map((event) => event.id),
          job.events.map((_, index) => `${job.id}:${index + 1}`),
        );
        assert.deepEqual(
          job.events.map((event) => event.type),
          denied
            ? [
                'job.created',
                'execution.started',
                'capability.started',
                'capability.completed',
                'capability.denied',
                'job.failed',
              ]
            : [
                'job.created',
                'execution.started',
                'capability.started',
                'capability.completed',
                'capability.started',
                'capability.completed',
                'capability.started',
                'capability.completed',
                'job.completed',
              ],
        );
        if (!denied)
          assert.deepEqual((job.result as unknown[])[1], {
            read: { previous: (job.steps[0]?.result as { read: unknown }).read },
          });
      }
    } finally {
      await store.close();
    }
  });
});
