// What `warrant worker` prints on stderr (docs/guide/stores.md, "Many machines"; docs/api.md,
// "Workers"), from real worker processes on an embedded PostgreSQL: no warning of the pg driver,
// each line prefixed once, a failed capability named with its job, step and reason (never its
// input), and a job taken up from a killed worker recorded as recovered by the worker that took
// it (`job.recovered { by, worker }`).
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { OperatorRuntime } from '../../src/index.js';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';
import { waitFor } from '../support/wait.js';
import { startWorkerChild, type WorkerChild } from '../support/worker-child.js';
import loggingModule from './fixtures/logging-capabilities.js';

const MODULE = resolve(import.meta.dirname, 'fixtures/logging-capabilities.ts');
const TOKEN = 'tok-3f9a-never-logged';

describe('warrant worker logs', { timeout: 240_000 }, () => {
  let postgres: TestPostgres;
  let url: string;

  before(async () => {
    postgres = await startTestPostgres();
    url = await postgres.createDatabase();
  });

  after(async () => {
    await postgres?.stop();
  });

  it('one prefix, no driver warning, failures with job, step and reason; a take-over names the worker', async () => {
    const first: WorkerChild = await startWorkerChild(url, 'w1', ['--module', MODULE]);
    // Closed before the worker is killed: only a worker takes its job up.
    const submitter = new OperatorRuntime({ store: url, queue: { engine: 'dbos' } }).use(
      loggingModule,
    );
    let failedId: string;
    let heldId: string;
    try {
      failedId = (
        await submitter.submitPlan({
          version: '1.0',
          steps: [{ id: 'f', capability: 'logs.fail', input: { token: TOKEN } }],
        })
      ).jobId;
      assert.equal((await submitter.waitForJob(failedId, { timeoutMs: 30_000 }))?.status, 'failed');
      heldId = (
        await submitter.submitPlan({
          version: '1.0',
          steps: [{ id: 'h', capability: 'logs.hold', input: {} }],
        })
      ).jobId;
      await waitFor(async () => (await submitter.getJob(heldId))?.steps[0]?.status === 'running', {
        timeoutMs: 30_000,
        intervalMs: 50,
        what: 'the held step to start in w1',
      });
    } finally {
      await submitter.close();
    }
    const exited = new Promise((done) => first.child.once('exit', done));
    first.child.kill('SIGKILL');
    await exited;
    const second = await startWorkerChild(url, 'w2', ['--module', MODULE]);
    const reader = new OperatorRuntime({ store: url });
    try {
      const held = await reader.waitForJob(heldId, { timeoutMs: 60_000 });
      assert.equal(held?.status, 'failed', held?.error);
      const recovered = held?.events.find((event) => event.type === 'job.recovered');
      assert.equal(recovered?.data?.worker, 'w2', JSON.stringify(recovered?.data));
      assert.equal(typeof recovered?.data?.by, 'string');
    } finally {
      await reader.close();
    }
    await waitFor(() => second.output().includes('worker "w1" is gone'), {
      timeoutMs: 30_000,
      intervalMs: 50,
      what: () => `w2 to report w1 gone:\n${second.output()}`,
    });
    await second.stop();

    const output = `${first.output()}${second.output()}`;
    assert.doesNotMatch(output, /DeprecationWarning|Warning:/, output);
    assert.doesNotMatch(output, /warrant worker: warrant/, output);
    for (const line of output.trim().split('\n'))
      assert.match(line, /^warrant worker: /, `a line without the prefix: ${line}`);
    assert.ok(
      first
        .output()
        .includes(
          `warrant worker: capability failed (job ${failedId}, step f, capability logs.fail): the disk is full\n`,
        ),
      first.output(),
    );
    assert.ok(!output.includes(TOKEN), 'an input reached the log');
  });
});
