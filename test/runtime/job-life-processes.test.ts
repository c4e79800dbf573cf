// A cancel written by another process (docs/api.md, "runtime.cancelJob"): a runtime on the same
// store (a SQLite file; an embedded PostgreSQL database) cancels a job another process runs, and
// that process aborts the running step's signal within 1 s and records the job cancelled.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { after, describe, it } from 'node:test';
import { OperatorRuntime } from '../../src/index.js';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';

const ROOT = resolve(import.meta.dirname, '../..');
const CHILD = resolve(import.meta.dirname, 'fixtures/job-life-child.ts');
const directory = mkdtempSync(join(tmpdir(), 'warrant-job-life-processes-'));
let postgres: TestPostgres | undefined;
after(async () => {
  rmSync(directory, { recursive: true, force: true });
  await postgres?.stop();
});

/** Another process runs a job on `store`; this one cancels it there and watches it stop. */
async function cancelFromAnotherProcess(store: string): Promise<void> {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, store], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((done) => child.once('exit', done));
  const lines: Record<string, unknown>[] = [];
  const waiters: (() => void)[] = [];
  createInterface({ input: child.stdout }).on('line', (line) => {
    lines.push(JSON.parse(line) as Record<string, unknown>);
    for (const wake of waiters.splice(0)) wake();
  });
  /** The first line with `key`, waiting at most 20 s for it. */
  const lineWith = async (key: string): Promise<Record<string, unknown>> => {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const found = lines.find((line) => key in line);
      if (found !== undefined) return found;
      if (Date.now() > deadline) throw new Error(`no ${key} line; stderr: ${stderr}`);
      await new Promise<void>((wake) => {
        waiters.push(wake);
        setTimeout(wake, 100);
      });
    }
  };
  const runtime = new OperatorRuntime({ store });
  try {
    const jobId = (await lineWith('jobId')).jobId as string;
    await lineWith('entered');
    const cancelledAt = Date.now();
    const standing = await runtime.cancelJob(jobId, { caller: { id: 'alice' }, reason: 'stop' });
    assert.equal(standing?.status, 'executing');
    const aborted = await lineWith('aborted');
    assert.ok((aborted.aborted as number) - cancelledAt < 1000, 'aborted within 1 s');
    assert.equal(aborted.reason, 'Job cancelled: stop');
    const end = await lineWith('status');
    assert.deepEqual(end, { status: 'cancelled', steps: ['cancelled', 'skipped'] });
    assert.equal(await exited, 0, stderr);
    const job = await runtime.getJob(jobId);
    assert.equal(job?.status, 'cancelled');
    assert.deepEqual(job?.events.at(-1)?.data, { by: 'alice', reason: 'stop', stepId: 'wait' });
    assert.equal((await runtime.verifyJob(jobId))?.ok, true);
  } finally {
    child.kill();
    await runtime.close();
  }
}

describe('cancel across processes on one SQLite file', () => {
  it('stops the running step of another process within 1 s; the rest is skipped', async () => {
    await cancelFromAnotherProcess(`sqlite:${join(directory, 'jobs.db')}`);
  });
});

describe('cancel across processes on one PostgreSQL database', () => {
  it('stops the running step of another process within 1 s; the rest is skipped', async () => {
    postgres ??= await startTestPostgres();
    await cancelFromAnotherProcess(await postgres.createDatabase());
  });
});
