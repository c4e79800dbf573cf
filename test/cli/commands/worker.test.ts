// `warrant worker` (docs/guide/stores.md, "Many machines", docs/api.md "Workers"): real worker
// processes on an embedded PostgreSQL run the jobs this process submits with `submitPlan` on a
// runtime with `queue: { engine: 'dbos' }`. Every job completes and each step ran once (a ledger
// outside Warrant counts the invocations), in both workers; a cancel from this process aborts a
// step running in a worker; a worker with other capabilities fails a job it cannot admit, saying
// why.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { OperatorRuntime, type ExecutionPlan } from '../../../src/index.js';
import { startTestPostgres, type TestPostgres } from '../../support/postgres.js';
import { serveChild } from '../../support/serve-child.js';
import { startWorkerChild, type WorkerChild } from '../../support/worker-child.js';
import { waitFor } from '../../support/wait.js';
import ledgerModule from '../../workers/fixtures/ledger-capabilities.js';

const ROOT = resolve(import.meta.dirname, '../../..');
const MODULE = resolve(ROOT, 'test/workers/fixtures/ledger-capabilities.ts');
const BUILT = resolve(ROOT, 'dist/esm/cli/main.js');
const directory = mkdtempSync(join(tmpdir(), 'warrant-worker-'));
const ledger = join(directory, 'ledger.txt');
writeFileSync(ledger, '');

const workers: WorkerChild[] = [];

/** `warrant worker` as a user starts it, 2 jobs at a time, on the ledger module by default. */
async function startWorker(url: string, id: string, module = MODULE): Promise<WorkerChild> {
  const worker = await startWorkerChild(url, id, ['--module', module, '--concurrency', '2'], {
    WARRANT_TEST_LEDGER: ledger,
  });
  workers.push(worker);
  return worker;
}

const notes = (jobIndex: number): ExecutionPlan => ({
  version: '1.0',
  goal: `job ${jobIndex}`,
  steps: [
    ...['a', 'b', 'c'].map((id) => ({ id, capability: 'ledger.note', input: { entry: id } })),
    // Long enough that one worker (2 at a time) cannot drain the queue before the other polls.
    { id: 'pause', capability: 'ledger.wait', input: { ms: 100 } },
  ],
});

describe('warrant worker', { timeout: 240_000 }, () => {
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

  it('needs a PostgreSQL store: warrant worker and serve --queue exit 2 otherwise', async () => {
    for (const args of [
      ['worker', '--store', 'sqlite:./.warrant/x.db', '--module', MODULE],
      ['serve', '--queue', '--store', 'memory', '--port', '0'],
    ]) {
      // The built program (npm test's pretest builds it): it starts without compiling src/.
      const run = spawnSync(process.execPath, [BUILT, ...args], {
        cwd: ROOT,
        encoding: 'utf8',
        timeout: 60_000,
      });
      assert.equal(run.status, 2, run.stderr);
      assert.match(run.stderr, /needs --store <postgres:\/\/\.\.\.>: workers share PostgreSQL/);
    }
    // Its --help offers only what it accepts: a PostgreSQL store.
    const help = spawnSync(process.execPath, [BUILT, 'worker', '--help'], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.equal(help.status, 0, help.stderr);
    assert.doesNotMatch(help.stdout, /'memory', 'sqlite:<file>'/);
    assert.match(help.stdout, /--store <postgres:\/\/\.\.\.>\n\s+the PostgreSQL store/);
    assert.match(help.stdout, /memory and sqlite: stores are refused/);
  });

  it('runs every submitted job once, spread over the workers', async () => {
    const [first, second] = await Promise.all([startWorker(url, 'w1'), startWorker(url, 'w2')]);
    const ids: string[] = [];
    for (let index = 0; index < 20; index++)
      ids.push((await runtime.submitPlan(notes(index))).jobId);
    for (const id of ids) {
      const job = await runtime.waitForJob(id, { timeoutMs: 60_000 });
      assert.equal(job?.status, 'completed', `${id}: ${job?.status} ${job?.error ?? ''}`);
    }
    const lines = readFileSync(ledger, 'utf8').trim().split('\n');
    const keys = lines.map((line) => line.split(' ')[1]);
    assert.equal(keys.length, 60, 'each of 20 jobs x 3 steps ran');
    assert.equal(new Set(keys).size, 60, 'no step ran twice');
    for (const id of ids)
      for (const step of ['a', 'b', 'c']) assert.ok(keys.includes(`${id}:${step}`));
    const pids = new Set(lines.map((line) => line.split(' ')[0]));
    assert.ok(pids.size >= 2, `both workers ran jobs (${[...pids].join(', ')})`);
    assert.ok(!pids.has(String(process.pid)), 'the submitting process ran nothing');
    void first;
    void second;
  });

  it('cancels a step running in a worker from this process', async () => {
    const { jobId } = await runtime.submitPlan({
      version: '1.0',
      steps: [{ id: 'long', capability: 'ledger.wait', input: { ms: 60_000 } }],
    });
    // Started in a worker process: read from the store.
    await waitFor(async () => (await runtime.getJob(jobId))?.steps[0]?.status === 'running', {
      timeoutMs: 30_000,
      intervalMs: 50,
      what: 'the step to start in a worker',
    });
    await runtime.cancelJob(jobId, { caller: { id: 'ops', scopes: ['warrant:cancel'] } });
    const job = await runtime.waitForJob(jobId, { timeoutMs: 10_000 });
    assert.equal(job?.status, 'cancelled');
    assert.equal(job?.steps[0]?.status, 'cancelled');
  });

  it('runs a plan once for one idempotency key submitted through two runtimes (own connections) at once', async () => {
    const other = new OperatorRuntime({ store: url, queue: { engine: 'dbos' } });
    try {
      const keyed = { ...notes(500), idempotencyKey: 'order-500' };
      const submissions = Array.from({ length: 10 }, (_, index) =>
        (index % 2 === 0 ? runtime : other).submitPlan(keyed, { caller: { id: 'alice' } }),
      );
      const jobIds = new Set((await Promise.all(submissions)).map((answer) => answer.jobId));
      assert.equal(jobIds.size, 1);
      const [jobId] = [...jobIds] as [string];
      assert.equal((await runtime.waitForJob(jobId, { timeoutMs: 30_000 }))?.status, 'completed');
      const ran = readFileSync(ledger, 'utf8')
        .split('\n')
        .filter((line) => line.includes(jobId));
      assert.equal(ran.length, 3, 'its three notes ran once');
    } finally {
      await other.close();
    }
  });

  it('serve --queue runs none of its plans: workers do (201 once done, 202 with respond-async)', async () => {
    const served = serveChild(['--store', url, '--queue', '--module', MODULE], {
      WARRANT_TEST_LEDGER: ledger,
    });
    try {
      const address = await served.listening;
      const post = (headers: Record<string, string> = {}) =>
        fetch(`${address}/api/plans`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...headers },
          body: JSON.stringify(notes(1000)),
        });
      const done = await post();
      assert.equal(done.status, 201);
      const job = (await done.json()) as { id: string; status: string };
      assert.equal(job.status, 'completed');
      const queued = await post({ prefer: 'respond-async' });
      assert.equal(queued.status, 202);
      const location = queued.headers.get('location') as string;
      const waited = await fetch(`${address}${location}?waitMs=30000`);
      assert.equal(((await waited.json()) as { status: string }).status, 'completed');
      const lines = readFileSync(ledger, 'utf8').trim().split('\n');
      const ran = lines.filter((line) => line.includes(job.id));
      assert.equal(ran.length, 3);
      assert.ok(
        ran.every((line) => line.split(' ')[0] !== String(served.child.pid)),
        'the server ran no step',
      );
    } finally {
      await served.stop();
    }
  });

  it('fails a job a worker with other capabilities cannot admit, saying why', async () => {
    await Promise.all(workers.map((worker) => worker.stop()));
    const other = join(directory, 'other-module.mjs');
    writeFileSync(
      other,
      `export default { manifest: { name: 'other', version: '1.0.0', capabilities: ['other.echo'] },
        capabilities: [{ name: 'other.echo', version: '1.0.0', description: 'Echo', risk: 'read',
          execute: (input) => input }] };\n`,
    );
    await startWorker(url, 'w3', other);
    const { jobId } = await runtime.submitPlan(notes(99));
    const job = await runtime.waitForJob(jobId, { timeoutMs: 30_000 });
    assert.equal(job?.status, 'failed');
    assert.match(job?.error ?? '', /cannot run on this worker.*ledger\.note/);
  });
});
