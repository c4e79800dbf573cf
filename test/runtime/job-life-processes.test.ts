// A cancel written by another process (docs/api.md, "runtime.cancelJob"): a runtime on the same
// store (a SQLite file; an embedded PostgreSQL database) cancels a job another process runs, and
// that process aborts the running step's signal and records the job cancelled.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { after, describe, it } from 'node:test';
import { OperatorRuntime } from '../../src/index.js';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';
import { Changes } from '../support/wait.js';
import { TS_LOADER } from '../support/ts-loader.js';

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
  const child = spawn(process.execPath, [...TS_LOADER, CHILD, store], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  let ended = false;
  const changes = new Changes();
  const exited = new Promise<number | null>((done) =>
    child.once('exit', (code) => {
      ended = true;
      changes.changed();
      done(code);
    }),
  );
  const lines: Record<string, unknown>[] = [];
  createInterface({ input: child.stdout }).on('line', (line) => {
    lines.push(JSON.parse(line) as Record<string, unknown>);
    changes.changed();
  });
  /** The first line with `key`, as soon as it is written (bounded: 20 s, or the child's exit). */
  const lineWith = async (key: string): Promise<Record<string, unknown>> => {
    const found = () => lines.find((line) => key in line);
    await changes.until(() => found() !== undefined || ended, {
      timeoutMs: 20_000,
      what: () => `a ${key} line; stderr: ${stderr}`,
    });
    return found() ?? assert.fail(`the child exited without a ${key} line; stderr: ${stderr}`);
  };
  const runtime = new OperatorRuntime({ store });
  try {
    const jobId = (await lineWith('jobId')).jobId as string;
    await lineWith('entered');
    const standing = await runtime.cancelJob(jobId, { caller: { id: 'alice' }, reason: 'stop' });
    assert.equal(standing?.status, 'executing');
    // The other process sees the cancel on its next look at the store (docs/api.md: within 1 s
    // on a quiet machine); here, while the step still waits (it ends by itself after 10 s).
    const aborted = await lineWith('aborted');
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
  it('stops the running step of another process; the rest is skipped', async () => {
    await cancelFromAnotherProcess(`sqlite:${join(directory, 'jobs.db')}`);
  });
});

describe('cancel across processes on one PostgreSQL database', () => {
  it('stops the running step of another process; the rest is skipped', async () => {
    postgres ??= await startTestPostgres();
    await cancelFromAnotherProcess(await postgres.createDatabase());
  });
});
