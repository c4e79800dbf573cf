// A job granted on `warrant serve --queue` goes back on the queue and runs on a worker, never in
// the process that decided (issue 47 item 3; docs/api.md, "Workers"), on an embedded PostgreSQL
// with real processes: a runtime of this process submits a plan whose second step is a write, a
// `warrant worker --approvals` runs its first step and stops at the write, the server (its
// operator's token) approves it and answers the job `queued` with the write not run, and the
// worker then runs the write: the ledger names the worker's process id for it, never the
// server's. The record verifies, and a cancel of a job put back on the queue wins before a worker
// starts it.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { OperatorRuntime, type ExecutionPlan, type Job } from '../../src/index.js';
import { DBOS_SCHEMA } from '../../src/workers/dbos-engine.js';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';
import { serveChild, type Served } from '../support/serve-child.js';
import { waitFor } from '../support/wait.js';
import { startWorkerChild, type WorkerChild } from '../support/worker-child.js';
import approvalModule from './fixtures/approval-capabilities.js';

const ROOT = resolve(import.meta.dirname, '../..');
const MODULE = resolve(ROOT, 'test/workers/fixtures/approval-capabilities.ts');
const TOKEN = 'approve-on-the-queue-token';
const directory = mkdtempSync(join(tmpdir(), 'warrant-approval-queue-'));
const ledger = join(directory, 'ledger.txt');
writeFileSync(ledger, '');
/** The store's URL, once the database exists. */
let storeUrl = '';

const plan = (goal: string): ExecutionPlan => ({
  version: '1.0',
  goal,
  steps: [
    { id: 'read', capability: 'ledger.note', input: { entry: 'first' } },
    { id: 'write', capability: 'ledger.write', input: { entry: 'second' } },
  ],
});

/**
 * Whether the DBOS workflow of a job's grant (its id `<jobId>:granted:<n>`) has ended (no event
 * of another process's queue reaches this one: read from its table).
 */
async function grantEntryEnded(jobId: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: storeUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ status: string }>(
      `SELECT status FROM ${DBOS_SCHEMA}.workflow_status WHERE workflow_uuid LIKE $1`,
      [`${jobId}:granted:%`],
    );
    return rows.length === 1 && rows[0]?.status === 'SUCCESS';
  } finally {
    await client.end();
  }
}

/** The ledger lines of one job as `[pid, stepId, kind]`: who invoked which step. */
const invoked = (jobId: string) =>
  readFileSync(ledger, 'utf8')
    .split('\n')
    .filter((line) => line.split(' ')[1]?.startsWith(`${jobId}:`))
    .map((line) => {
      const [pid, key, kind] = line.split(' ');
      return [Number(pid), (key as string).slice(jobId.length + 1), kind];
    });

describe('approvals on the DBOS queue', { timeout: 240_000 }, () => {
  let postgres: TestPostgres;
  let url: string;
  let runtime: OperatorRuntime;
  let worker: WorkerChild;
  let served: Served;
  let address: string;

  before(async () => {
    postgres = await startTestPostgres();
    url = await postgres.createDatabase();
    storeUrl = url;
    runtime = new OperatorRuntime({ store: url, queue: { engine: 'dbos' } });
    runtime.use(approvalModule);
    const env = { WARRANT_TEST_LEDGER: ledger };
    served = serveChild(['--store', url, '--queue', '--approvals', '--module', MODULE], {
      ...env,
      WARRANT_TOKEN: TOKEN,
    });
    address = await served.listening;
    worker = await startWorkerChild(url, 'approvals', ['--module', MODULE, '--approvals'], env);
  });

  after(async () => {
    await worker?.stop();
    await served?.stop();
    await runtime?.close();
    await postgres?.stop();
    rmSync(directory, { recursive: true, force: true });
  });

  /** A submitted job, once the worker stopped it at the write's approval. */
  const awaiting = async (goal: string): Promise<Job> => {
    const { jobId } = await runtime.submitPlan(plan(goal), { caller: { id: 'alice' } });
    const job = await runtime.waitForJob(jobId, { timeoutMs: 60_000 });
    assert.equal(job?.status, 'awaiting_approval', JSON.stringify(job?.events));
    return job;
  };

  const approve = (job: Job) =>
    fetch(`${address}/api/jobs/${job.id}/steps/write/approval`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
      body: JSON.stringify({
        decision: 'approve',
        inputDigest: job.steps[1]?.decision?.inputDigest,
      }),
    });

  it('the approve call answers the job queued, and the write runs on the worker, not in the server', async () => {
    const job = await awaiting('approved on the queue');
    assert.deepEqual(invoked(job.id), [[worker.child.pid, 'read', 'note']]);

    const response = await approve(job);
    assert.equal(response.status, 200);
    const answered = (await response.json()) as Job;
    // Nothing ran in the deciding process: the job is back on the queue.
    assert.equal(answered.status, 'queued');
    assert.equal(answered.steps[1]?.status, 'pending');
    const granted = answered.events.find((event) => event.type === 'approval.granted');
    assert.deepEqual(granted?.data, { stepId: 'write', approver: 'token', queued: true });

    const done = await runtime.waitForJob(job.id, { timeoutMs: 60_000 });
    assert.equal(done?.status, 'completed', JSON.stringify(done?.events));
    assert.deepEqual(invoked(job.id), [
      [worker.child.pid, 'read', 'note'],
      [worker.child.pid, 'write', 'write'],
    ]);
    assert.notEqual(served.child.pid, worker.child.pid);
    assert.deepEqual(done.steps[1]?.result, { written: true, pid: worker.child.pid });
    // Started once by the worker, once more after the approval; its first start is kept.
    const types = done.events.map((event) => event.type);
    assert.deepEqual(types.slice(-5), [
      'approval.granted',
      'execution.started',
      'capability.started',
      'capability.completed',
      'job.completed',
    ]);
    assert.equal(done.startedAt, job.startedAt);
    assert.equal((await runtime.verifyJob(job.id))?.ok, true);
  });

  it('a job put back on the queue and cancelled before a worker starts it never runs the step', async () => {
    // The worker stopped: the granted job waits on the queue.
    const job = await awaiting('cancelled on the queue');
    await worker.stop();
    const response = await approve(job);
    assert.equal(response.status, 200);
    assert.equal(((await response.json()) as Job).status, 'queued');
    const cancelled = await runtime.cancelJob(job.id, { caller: { id: 'alice' } });
    assert.equal(cancelled?.status, 'cancelled');
    assert.equal(cancelled.steps[1]?.status, 'skipped');
    const first = worker.child.pid;
    worker = await startWorkerChild(url, 'approvals', ['--module', MODULE, '--approvals'], {
      WARRANT_TEST_LEDGER: ledger,
    });
    // The queue entry of the grant is taken up by the new worker, which finds the job cancelled.
    await waitFor(() => grantEntryEnded(job.id), {
      what: `the queue entry of job ${job.id}'s grant to end`,
      timeoutMs: 60_000,
    });
    assert.deepEqual(invoked(job.id), [[first, 'read', 'note']]);
    assert.equal((await runtime.getJob(job.id))?.status, 'cancelled');
    assert.equal((await runtime.verifyJob(job.id))?.ok, true);
  });
});
