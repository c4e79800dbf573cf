// Workers killed at random (issue 32; docs/api.md, "Workers"): 3 `warrant worker` processes on
// one embedded PostgreSQL run 500 queued jobs of 5 steps while, every 0.5 s for 10 s, a random
// worker is SIGKILLed and started again under its id. Every job ends (completed, or failed with
// a step that may have run interrupted); no step of a non-idempotent capability ran twice; every
// invocation followed an authorizer decision made in the same process for that step (a
// recovered step is authorized again); every job's record verifies.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { OperatorRuntime, type ExecutionPlan, type Job } from '../../src/index.js';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';
import { waitFor } from '../support/wait.js';
import { startWorkerChild, type WorkerChild } from '../support/worker-child.js';
import ledgerModule from './fixtures/ledger-capabilities.js';

const ROOT = resolve(import.meta.dirname, '../..');
const MODULE = resolve(ROOT, 'test/workers/fixtures/ledger-capabilities.ts');
const AUTHORIZER = resolve(ROOT, 'test/workers/fixtures/ledger-authorizer.mjs');
// 500 on CI's first Node, fewer on the others (docs/decisions.md, "Test runs").
const JOBS = Number(process.env.WARRANT_WORKER_CRASH_JOBS || 500);
if (!Number.isSafeInteger(JOBS) || JOBS < 1) {
  throw new Error(`WARRANT_WORKER_CRASH_JOBS must be a positive integer, got ${JOBS}`);
}
const directory = mkdtempSync(join(tmpdir(), 'warrant-worker-crash-'));
const ledger = join(directory, 'ledger.txt');
writeFileSync(ledger, '');

const plan = (index: number): ExecutionPlan => ({
  version: '1.0',
  goal: `job ${index}`,
  steps: [
    { id: 'a', capability: 'ledger.note', input: { entry: 'a' } },
    { id: 'b', capability: 'ledger.put', input: { entry: 'b' } },
    { id: 'c', capability: 'ledger.wait', input: { ms: 20 } },
    { id: 'd', capability: 'ledger.note', input: { entry: 'd' } },
    { id: 'e', capability: 'ledger.put', input: { entry: 'e' } },
  ],
});

const live = new Map<string, WorkerChild>();

/** `warrant worker` under `id`, the ledger's module and authorizer, 8 jobs at a time. */
async function startWorker(url: string, id: string): Promise<void> {
  const args = ['--module', MODULE, '--authorizer', AUTHORIZER, '--concurrency', '8'];
  live.set(id, await startWorkerChild(url, id, args, { WARRANT_TEST_LEDGER: ledger }));
}

describe('workers SIGKILLed at random', { timeout: 600_000 }, () => {
  let postgres: TestPostgres;
  let url: string;
  let runtime: OperatorRuntime;

  before(async () => {
    postgres = await startTestPostgres();
    url = await postgres.createDatabase();
    runtime = new OperatorRuntime({ store: url, queue: { engine: 'dbos' } }).use(ledgerModule);
  });

  after(async () => {
    await runtime?.close();
    await postgres?.stop();
    rmSync(directory, { recursive: true, force: true });
  });

  it('ends every job, runs no non-idempotent step twice and authorizes every invocation', async () => {
    await Promise.all(['w1', 'w2', 'w3'].map((id) => startWorker(url, id)));
    const ids: string[] = [];
    for (let index = 0; index < JOBS; index++)
      ids.push((await runtime.submitPlan(plan(index))).jobId);

    // Every 0.5 s for 10 s: a random worker killed, and started again under its id.
    let kills = 0;
    for (let round = 0; round < 20; round++) {
      await new Promise((r) => setTimeout(r, 500));
      const id = `w${1 + Math.floor(Math.random() * 3)}`;
      live.get(id)?.child.kill('SIGKILL');
      kills++;
      await startWorker(url, id);
    }

    // Ended in the workers' processes: read from the store. Each check asks for one job still
    // queued or executing (two indexed queries), not for every job that has not ended yet.
    let open: Job | undefined;
    await waitFor(
      async () => {
        [open] = await runtime.listJobs({ status: 'queued', limit: 1 });
        open ??= (await runtime.listJobs({ status: 'executing', limit: 1 }))[0];
        return open === undefined;
      },
      {
        timeoutMs: 240_000,
        intervalMs: 250,
        what: () => `every job to end (${open?.id} still ${open?.status})`,
      },
    );
    assert.equal(kills, 20);

    // Ends the record explains: completed, or failed on a step that may have run.
    const ended = new Map<string, string>();
    for (const id of ids) {
      const job = await runtime.getJob(id);
      assert.ok(job !== undefined, `${id} is not in the store`);
      ended.set(id, job.status);
      if (job.status === 'completed') continue;
      assert.equal(job.status, 'failed', `${id} ended ${job.status}`);
      assert.ok(
        job.steps.some((step) => step.status === 'interrupted'),
        `${id} failed without an interrupted step: ${job.error}`,
      );
      assert.match(job.error ?? '', /STEP_INTERRUPTED/);
    }
    for (const id of ids.slice(0, 50)) {
      const verified = await runtime.verifyJob(id);
      assert.equal(verified?.ok, true, `${id}: ${JSON.stringify(verified)}`);
    }

    const lines = readFileSync(ledger, 'utf8').trim().split('\n');
    const notes = lines.filter((line) => line.endsWith(' note')).map((line) => line.split(' ')[1]);
    assert.equal(new Set(notes).size, notes.length, 'a non-idempotent step ran twice');
    // Each invocation follows an authorization of that step in its own process.
    const authorized = new Set<string>();
    for (const line of lines) {
      const [pid, word, key] = line.split(' ');
      if (word === 'authorize') {
        authorized.add(`${pid} ${key}`);
        continue;
      }
      assert.ok(authorized.has(`${pid} ${word}`), `invoked without a decision in ${pid}: ${line}`);
    }
    const completed = [...ended.values()].filter((status) => status === 'completed').length;
    assert.ok(completed > JOBS / 2, `only ${completed} of ${JOBS} completed`);
  });
});
