// Idempotency across processes (docs/api.md, "Idempotency"): 100 submissions of one plan with one
// key, 25 at once from each of 4 processes on one store (SQLite, then PostgreSQL): one job, run
// once; every submission gets its id.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { after, describe, it } from 'node:test';
import { OperatorRuntime } from '../../src/index.js';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';
import { TS_LOADER } from '../support/ts-loader.js';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '../..');
const CHILD = resolve(import.meta.dirname, 'fixtures/idempotency-child.ts');
const directory = mkdtempSync(join(tmpdir(), 'warrant-idempotency-'));
let postgres: TestPostgres | undefined;
after(async () => {
  rmSync(directory, { recursive: true, force: true });
  await postgres?.stop();
});

async function fourProcesses(store: string, name: string) {
  const counter = join(directory, `${name}.count`);
  writeFileSync(counter, '');
  // The schema exists before the processes race (each would create it under a lock anyway).
  const opener = new OperatorRuntime({ store });
  await opener.listJobs({ limit: 1 });
  await opener.close();
  const answers = await Promise.all(
    Array.from({ length: 4 }, () =>
      run(process.execPath, [...TS_LOADER, CHILD, store, counter, '25'], {
        cwd: ROOT,
        timeout: 120_000,
      }),
    ),
  );
  const submitted = answers.flatMap(
    (answer) => JSON.parse(answer.stdout) as { jobId: string; replayed: boolean }[],
  );
  assert.equal(submitted.length, 100);
  const ids = new Set(submitted.map((one) => one.jobId));
  assert.equal(ids.size, 1, 'one job for every submission');
  assert.equal(submitted.filter((one) => !one.replayed).length, 1, 'one submission made it');
  const runs = readFileSync(counter, 'utf8').trim().split('\n');
  const [jobId] = ids;
  assert.equal(runs.length, 1, 'run once');
  assert.match(runs[0] as string, new RegExp(`^\\d+ ${jobId as string}:count$`));
  const runtime = new OperatorRuntime({ store });
  try {
    const jobs = await runtime.listJobs();
    assert.deepEqual(
      jobs.map((job) => [job.id, job.status, job.idempotencyKey]),
      [[jobId, 'completed', 'order-42']],
    );
  } finally {
    await runtime.close();
  }
}

describe('one idempotency key from 4 processes', () => {
  it('SQLite: one job, one run', async () => {
    await fourProcesses(`sqlite:${join(directory, 'jobs.db')}`, 'sqlite');
  });

  it('PostgreSQL: one job, one run', async () => {
    postgres = await startTestPostgres();
    await fourProcesses(await postgres.createDatabase(), 'postgres');
  });
});
