// Cancels of jobs queued on DBOS Transact (issue 45, items 9 and 11; docs/api.md, "Workers" and
// "Queued jobs and cancellation"), on an embedded PostgreSQL with real processes. With no worker
// running, a queued job cancelled over HTTP on `warrant serve --queue`, with `warrant jobs
// cancel`, or by a runtime's cancelJob (with the queue or without) is `cancelled` at once: its
// `job.cancelled` is recorded, its record verifies, a `?waitMs` waiter sees it, its workflow is
// CANCELLED, and a worker started afterwards runs none of it. A start and a cancel of one queued
// job written at once through two stores: exactly one is written. With a worker taking jobs
// while they are cancelled, each job is either started by the worker or cancelled while queued,
// never both: one cancelled while queued ran no step. A second `warrant worker` under the id of
// a live one exits 2 with one coded line.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { OperatorRuntime, type ExecutionPlan, type Job } from '../../src/index.js';
import { isoNow } from '../../src/jobs/clock.js';
import { PostgresJobStore } from '../../src/stores/postgres/postgres-store.js';
import { cancelJob, startQueuedJob } from '../../src/jobs/transitions.js';
import { DBOS_SCHEMA } from '../../src/workers/dbos-engine.js';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';
import { serveChild } from '../support/serve-child.js';
import { startWorkerChild, type WorkerChild } from '../support/worker-child.js';
import ledgerModule from './fixtures/ledger-capabilities.js';

const ROOT = resolve(import.meta.dirname, '../..');
const MODULE = resolve(ROOT, 'test/workers/fixtures/ledger-capabilities.ts');
const BIN = resolve(ROOT, 'dist/esm/cli/main.js');
const directory = mkdtempSync(join(tmpdir(), 'warrant-queued-cancel-'));
const ledger = join(directory, 'ledger.txt');
writeFileSync(ledger, '');

const plan = (goal: string): ExecutionPlan => ({
  version: '1.0',
  goal,
  steps: [
    { id: 'a', capability: 'ledger.note', input: { entry: 'a' } },
    { id: 'pause', capability: 'ledger.wait', input: { ms: 30 } },
    { id: 'b', capability: 'ledger.note', input: { entry: 'b' } },
  ],
});

/**
 * The built `warrant` with `args`, bounded (60 s): its exit code and output. Spawned, not run
 * synchronously: this process's runtimes hold store transactions the child may wait for.
 */
async function warrant(args: readonly string[], program = [BIN]) {
  const child = spawn(process.execPath, [...program, ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((done) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.once('exit', (exitCode) => {
      clearTimeout(timer);
      done(exitCode);
    });
  });
  return { code, stdout, stderr };
}

/** The ledger lines (`<pid> <jobId>:<stepId> <kind>`) of one job: the steps it invoked. */
const invoked = (jobId: string) =>
  readFileSync(ledger, 'utf8')
    .split('\n')
    .filter((line) => line.split(' ')[1]?.startsWith(`${jobId}:`));

/** DBOS's status of each job's workflow (its id the job id). */
async function workflowStatuses(url: string, ids: readonly string[]) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ workflow_uuid: string; status: string }>(
      `SELECT workflow_uuid, status FROM ${DBOS_SCHEMA}.workflow_status WHERE workflow_uuid = ANY($1)`,
      [ids],
    );
    return new Map(rows.map((row) => [row.workflow_uuid, row.status]));
  } finally {
    await client.end();
  }
}

/** A job cancelled while it was queued: it never started, its `job.cancelled` names `by`. */
function assertCancelledQueued(job: Job | undefined, by: string): void {
  assert.equal(job?.status, 'cancelled', `${job?.id}: ${job?.status}`);
  const types = job.events.map((event) => event.type);
  assert.ok(!types.includes('execution.started'), `${job.id} started: ${types.join(', ')}`);
  const cancelled = job.events.find((event) => event.type === 'job.cancelled');
  assert.equal((cancelled?.data as { by?: string } | undefined)?.by, by);
  assert.ok(job.steps.every((step) => step.status === 'skipped'));
}

describe('cancels of jobs queued on DBOS', { timeout: 240_000, concurrency: true }, () => {
  let postgres: TestPostgres;
  const runtimes: OperatorRuntime[] = [];
  const workers: WorkerChild[] = [];
  let registered = false;

  before(async () => {
    postgres = await startTestPostgres();
  });

  after(async () => {
    await Promise.all(workers.map((worker) => worker.stop()));
    for (const runtime of runtimes) await runtime.close();
    await postgres?.stop();
    rmSync(directory, { recursive: true, force: true });
  });

  /**
   * A submitting runtime on `url`, with the DBOS queue; the ledger's capabilities are registered
   * once (the inventory is the process's).
   */
  const submitter = (url: string) => {
    const runtime = new OperatorRuntime({ store: url, queue: { engine: 'dbos' } });
    if (!registered) runtime.use(ledgerModule);
    registered = true;
    runtimes.push(runtime);
    return runtime;
  };

  const startWorker = async (url: string, id: string, concurrency: number) => {
    const worker = await startWorkerChild(
      url,
      id,
      ['--module', MODULE, '--concurrency', String(concurrency)],
      { WARRANT_TEST_LEDGER: ledger },
    );
    workers.push(worker);
    return worker;
  };

  it('with no worker running, a queued job is cancelled at once from HTTP, the CLI and a runtime; no worker starts it later', async () => {
    const url = await postgres.createDatabase();
    const runtime = submitter(url);
    const served = serveChild(['--store', url, '--queue', '--module', MODULE], {
      WARRANT_TEST_LEDGER: ledger,
    });
    /** Each job cancelled while queued, with the id of the caller who cancelled it. */
    const cancelledBy = new Map<string, string>();
    try {
      const address = await served.listening;
      // Over HTTP on serve --queue: queued, a waiter waiting, then the cancel.
      const posted = await fetch(`${address}/api/plans`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', prefer: 'respond-async' },
        body: JSON.stringify(plan('over http')),
      });
      assert.equal(posted.status, 202);
      const { id: httpId } = (await posted.json()) as { id: string };
      const waiter = fetch(`${address}/api/jobs/${httpId}?waitMs=20000`).then(
        async (response) => (await response.json()) as Job,
      );
      const cancelled = await fetch(`${address}/api/jobs/${httpId}/cancel`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ reason: 'not needed' }),
      });
      assert.equal(cancelled.status, 200);
      assert.equal(((await cancelled.json()) as Job).status, 'cancelled');
      assert.equal((await waiter).status, 'cancelled');
      assertCancelledQueued(await runtime.getJob(httpId), 'http');
      cancelledBy.set(httpId, 'http');
    } finally {
      await served.stop();
    }

    // `warrant jobs cancel`, a process with no queue of its own.
    assert.ok(existsSync(BIN), 'dist/esm/cli/main.js is missing: run `npm run build` first');
    const { jobId: cliId } = await runtime.submitPlan(plan('from the cli'), {
      caller: { id: 'alice' },
    });
    const cli = await warrant([
      'jobs',
      'cancel',
      cliId,
      '--store',
      url,
      '--caller',
      '{"id":"alice"}',
    ]);
    assert.equal(cli.code, 0, cli.stderr);
    assert.equal(cli.stdout, `job ${cliId}: cancelled\n`);
    assertCancelledQueued(await runtime.getJob(cliId), 'alice');
    cancelledBy.set(cliId, 'alice');

    // A runtime's cancelJob: one with the queue, and one without.
    const plain = new OperatorRuntime({ store: url });
    runtimes.push(plain);
    for (const [canceller, by] of [
      [runtime, 'alice'],
      [plain, 'bob'],
    ] as const) {
      const { jobId } = await runtime.submitPlan(plan(`cancelled by ${by}`), {
        caller: { id: by },
      });
      const job = await canceller.cancelJob(jobId, { caller: { id: by } });
      assert.equal(job?.status, 'cancelled');
      // Any process sees it at once.
      assertCancelledQueued(await runtime.waitForJob(jobId, { timeoutMs: 0 }), by);
      cancelledBy.set(jobId, by);
    }

    const cancelledIds = [...cancelledBy.keys()];
    for (const id of cancelledIds) {
      const verified = await runtime.verifyJob(id);
      assert.equal(verified?.ok, true, `${id}: ${JSON.stringify(verified)}`);
    }
    const statuses = await workflowStatuses(url, cancelledIds);
    for (const id of cancelledIds) assert.equal(statuses.get(id), 'CANCELLED', id);

    // A worker started now runs a new job, and nothing of the cancelled ones.
    await startWorker(url, 'late', 2);
    const { jobId: later } = await runtime.submitPlan(plan('after the cancels'));
    assert.equal((await runtime.waitForJob(later, { timeoutMs: 60_000 }))?.status, 'completed');
    for (const [id, by] of cancelledBy) {
      assert.deepEqual(invoked(id), [], `${id} ran a step`);
      assertCancelledQueued(await runtime.getJob(id), by);
    }
  });

  it('a start and a cancel of one queued job written at once through two stores: exactly one is written', async () => {
    const url = await postgres.createDatabase();
    const runtime = submitter(url);
    const [starter, canceller] = [new PostgresJobStore(url), new PostgresJobStore(url)];
    try {
      const winners = new Set<string>();
      for (let round = 0; round < 10; round++) {
        const { jobId } = await runtime.submitPlan(plan(`contended ${round}`));
        const [toStart, toCancel] = await Promise.all([starter.get(jobId), canceller.get(jobId)]);
        const started = { record: toStart as Job, job: structuredClone(toStart as Job) };
        const cancelled = { record: toCancel as Job, job: structuredClone(toCancel as Job) };
        const written = await Promise.all([
          starter.updateWhileQueued(started.record, startQueuedJob(started, isoNow())),
          canceller.updateWhileQueued(
            cancelled.record,
            cancelJob(cancelled, isoNow(), { by: 'ops', reason: undefined }),
          ),
        ]);
        assert.equal(written.filter(Boolean).length, 1, `round ${round}: ${written.join(', ')}`);
        const stored = await runtime.getJob(jobId);
        assert.equal(stored?.status, written[0] ? 'executing' : 'cancelled');
        winners.add(stored?.status as string);
        assert.equal((await runtime.verifyJob(jobId))?.ok, true);
        // The loser, written again from what it read, still loses: the job is no longer queued.
        const loser = written[0] ? cancelled : started;
        assert.equal(
          await (written[0] ? canceller : starter).updateWhileQueued(loser.record, {
            steps: [],
            events: [],
          }),
          false,
        );
      }
    } finally {
      await Promise.all([starter.close(), canceller.close()]);
    }
  });

  describe('with a worker taking jobs', { concurrency: true }, () => {
    let url: string;

    before(async () => {
      url = await postgres.createDatabase();
      await startWorker(url, 'busy', 2);
    });

    it('each job cancelled while workers dequeue is either started or cancelled while queued, never both', async () => {
      const runtime = submitter(url);
      const canceller = new OperatorRuntime({ store: url });
      runtimes.push(canceller);
      const ids: string[] = [];
      for (let index = 0; index < 24; index++)
        ids.push(
          (await runtime.submitPlan(plan(`race ${index}`), { caller: { id: 'ops' } })).jobId,
        );
      // Cancelled from two processes' runtimes at once, half each, while the worker dequeues.
      await Promise.all(
        ids.map((id, index) =>
          (index % 2 === 0 ? runtime : canceller).cancelJob(id, { caller: { id: 'ops' } }),
        ),
      );
      const jobs = await Promise.all(
        ids.map((id) => runtime.waitForJob(id, { timeoutMs: 30_000 })),
      );
      let whileQueued = 0;
      for (const job of jobs as Job[]) {
        assert.ok(
          job.status === 'cancelled' || job.status === 'completed',
          `${job.id} ended ${job.status}`,
        );
        const started = job.events.some((event) => event.type === 'execution.started');
        if (!started) {
          whileQueued++;
          assertCancelledQueued(job, 'ops');
          assert.deepEqual(invoked(job.id), [], `${job.id} was cancelled while queued and ran`);
        }
        // Started by the worker: only the steps its record shows as run were invoked.
        const ran = job.steps.filter((step) => ['completed', 'cancelled'].includes(step.status));
        assert.ok(
          invoked(job.id).length <= ran.length,
          `${job.id} invoked a step it never recorded`,
        );
        const verified = await runtime.verifyJob(job.id);
        assert.equal(verified?.ok, true, `${job.id}: ${JSON.stringify(verified)}`);
      }
      assert.ok(whileQueued > 0, 'no job was cancelled while queued');
    });

    it('a second warrant worker with the id of a live one exits 2 with one coded line', async () => {
      // docs/api.md: it fails after 15 s; its start (tsx, the store) takes seconds more.
      const { code, stderr } = await warrant(
        ['worker', '--store', url, '--worker-id', 'busy', '--module', MODULE],
        ['--import', 'tsx', resolve(ROOT, 'src/cli/main.ts')],
      );
      assert.equal(code, 2, stderr);
      const lines = stderr.trim().split('\n');
      assert.equal(lines.length, 1, stderr);
      assert.match(
        lines[0] as string,
        /^warrant worker: WORKER_ALREADY_RUNNING: worker "busy" is already running/,
      );
    });
  });
});
