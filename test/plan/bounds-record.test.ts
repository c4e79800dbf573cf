// docs/api.md, "Bounds": a step's bounds are part of the recorded plan, in every store, proven by
// job.created's record digest (verifyJob); a step without bounds is recorded exactly as before.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { OperatorRuntime, type ExecutionPlan } from '../../src/index.js';
import { Database } from '../../src/stores/sqlite/sqlite-driver.cjs';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';
import { register } from '../support/runtime-fixtures.js';

const BOUNDS = { amount: { type: 'number', maximum: 100 }, to: { pattern: '^[a-z]+$' } } as const;

function plan(echo: string): ExecutionPlan {
  return {
    version: '2.0',
    steps: [
      { id: 'bounded', capability: echo, input: { amount: 5, to: 'ada' }, bounds: BOUNDS as never },
      { id: 'free', capability: echo, input: { amount: 6 } },
    ],
  };
}

async function recordsBounds(store: string, reopen = store): Promise<void> {
  const runtime = new OperatorRuntime({ planVersions: ['1.0', '2.0'], store });
  const [echo] = register(runtime, { execute: ({ input }) => input }) as [string];
  const job = await runtime.executePlan(plan(echo));
  assert.equal(job.status, 'completed', job.error);
  // A queued job is admitted again from its record: its bounds come back with it.
  const { jobId } = await runtime.submitPlan(plan(echo));
  assert.equal((await runtime.waitForJob(jobId, { timeoutMs: 30_000 }))?.status, 'completed');
  await runtime.close();
  const again = new OperatorRuntime({ planVersions: ['1.0', '2.0'], store: reopen });
  for (const id of [job.id, jobId]) {
    const stored = await again.getJob(id);
    assert.deepEqual(stored?.steps[0]?.bounds, BOUNDS);
    assert.equal('bounds' in (stored?.steps[1] ?? {}), false);
    assert.equal((await again.verifyJob(id))?.ok, true);
  }
  await again.close();
}

describe('bounds on the record', () => {
  let dir: string;
  let postgres: TestPostgres | undefined;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'warrant-bounds-'));
  });
  after(async () => {
    await postgres?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('memory: the job keeps the bounds of the step that has them, and verifies', async () => {
    const runtime = new OperatorRuntime({ planVersions: ['1.0', '2.0'] });
    const [echo] = register(runtime, { execute: ({ input }) => input }) as [string];
    const job = await runtime.executePlan(plan(echo));
    const stored = await runtime.getJob(job.id);
    assert.deepEqual(stored?.steps[0]?.bounds, BOUNDS);
    assert.equal('bounds' in (stored?.steps[1] ?? {}), false);
    assert.equal((await runtime.verifyJob(job.id))?.ok, true);
    await runtime.close();
  });

  it('SQLite: kept across a reopen; an edited bound fails verifyJob; a step without bounds has no bounds key', async () => {
    const file = join(dir, 'bounds.db');
    await recordsBounds(`sqlite:${file}`);
    const db = new Database(file);
    const fixed = db.prepare('SELECT fixed FROM job_steps ORDER BY job_seq, position').all() as {
      fixed: string;
    }[];
    assert.match(fixed[0]?.fixed ?? '', /"bounds":/);
    assert.doesNotMatch(fixed[1]?.fixed ?? '', /bounds/);
    // Widen the approved bound behind the runtime's back.
    db.prepare(
      'UPDATE job_steps SET fixed = replace(fixed, \'"maximum":100\', \'"maximum":1000000\') WHERE position = 0',
    ).run();
    db.close();
    const runtime = new OperatorRuntime({ planVersions: ['1.0', '2.0'], store: `sqlite:${file}` });
    const [first] = await runtime.listJobs({ limit: 10 });
    const stored = await runtime.getJob(first?.id as string);
    assert.equal((stored?.steps[0]?.bounds as typeof BOUNDS).amount.maximum, 1_000_000);
    const verdict = await runtime.verifyJob(first?.id as string);
    assert.equal(verdict?.ok, false);
    await runtime.close();
  });

  it('PostgreSQL: kept across a reopen, and verifies', async () => {
    postgres = await startTestPostgres();
    await recordsBounds(await postgres.createDatabase());
  });
});
