// Exactly once across processes (docs/decisions.md, "Approvals"): several processes decide one
// request on one SQLite file, and on one PostgreSQL database, at the same moment. Exactly one
// wins, the others answer APPROVAL_NOT_PENDING, and the capability ran at most once (once when
// an approval won). The chain of the job stays intact. Two processes approving at once: the write
// runs exactly once, the ledger of consumed approvals holds one entry, sealed by a checkpoint.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import pg from 'pg';
import { OperatorRuntime } from '../../src/index.js';
import { Database } from '../../src/stores/sqlite/sqlite-driver.cjs';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';
import { READ, WRITE, approvalModule } from './fixtures/approval-capabilities.js';
import { TS_LOADER } from '../support/ts-loader.js';

const CHILD = resolve(import.meta.dirname, 'fixtures/decide-child.ts');
const directory = mkdtempSync(join(tmpdir(), 'warrant-approvals-mp-'));
const invokedFile = join(directory, 'invoked.txt');
process.env.WARRANT_TEST_INVOKED = invokedFile;
let postgres: TestPostgres | undefined;
after(async () => {
  await postgres?.stop();
  rmSync(directory, { recursive: true, force: true });
});
new OperatorRuntime().use(approvalModule);

interface Child {
  readonly ready: Promise<void>;
  go(): void;
  readonly outcome: Promise<{ ok: boolean; code?: string }>;
}

/** A child that opened the store (`ready`), decides on `go()`; killed after 60 s. */
function decideIn(args: string[]): Child {
  const child = spawn(process.execPath, [...TS_LOADER, CHILD, ...args], {
    env: { ...process.env, WARRANT_TEST_INVOKED: invokedFile },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  let signalReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => (signalReady = resolve));
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    if (out.startsWith('ready\n')) signalReady();
  });
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const outcome = once(child, 'exit').then(() => {
    clearTimeout(timer);
    signalReady();
    const line = out.trim().split('\n').pop() ?? '';
    assert.ok(line.startsWith('{'), `child printed ${JSON.stringify(out)}; stderr ${err}`);
    return JSON.parse(line) as { ok: boolean; code?: string };
  });
  return { ready, go: () => child.stdin.end('go\n'), outcome };
}

/** The rows of the store's ledger of consumed approvals for one job: [decision, step]. */
async function ledgerOf(store: string, jobId: string): Promise<string[][]> {
  if (store.startsWith('sqlite:')) {
    const db = new Database(store.slice('sqlite:'.length), { readonly: true });
    try {
      return db
        .prepare('SELECT decision, step_id FROM approval_ledger WHERE job_id = ?')
        .raw()
        .all(jobId) as string[][];
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: store });
  await client.connect();
  try {
    const result = await client.query<{ decision: string; step_id: string }>(
      'SELECT decision, step_id FROM warrant_approval_ledger WHERE job_id = $1',
      [jobId],
    );
    return result.rows.map((row) => [row.decision, row.step_id]);
  } finally {
    await client.end();
  }
}

async function race(
  store: string,
  decisions: readonly ('approve' | 'reject')[] = ['approve', 'approve', 'approve', 'reject'],
): Promise<void> {
  writeFileSync(invokedFile, '');
  const runtime = new OperatorRuntime({
    store,
    approvals: { approver: { canApprove: () => true } },
  });
  try {
    const job = await runtime.executePlan(
      {
        version: '1.0',
        steps: [
          { id: 'look', capability: READ, input: {} },
          { id: 'save', capability: WRITE, input: { n: { $ref: 'steps.look.result.value' } } },
        ],
      },
      { caller: { id: 'alice' } },
    );
    assert.equal(job.status, 'awaiting_approval');
    const digest = job.steps[1]?.decision?.inputDigest ?? '';
    const children: Child[] = [];
    // Started one after the other (opening a store runs its migration), then released at once.
    for (let index = 0; index < decisions.length; index++) {
      const child = decideIn([
        store,
        job.id,
        'save',
        digest,
        `approver-${index}`,
        decisions[index] as string,
      ]);
      children.push(child);
      await child.ready;
    }
    for (const child of children) child.go();
    const outcomes = await Promise.all(children.map((child) => child.outcome));
    const winners = outcomes.filter((outcome) => outcome.ok);
    assert.equal(winners.length, 1, JSON.stringify(outcomes));
    for (const outcome of outcomes)
      if (!outcome.ok) assert.equal(outcome.code, 'APPROVAL_NOT_PENDING', JSON.stringify(outcome));
    const stored = await runtime.getJob(job.id);
    const invoked = readFileSync(invokedFile, 'utf8').split('\n').filter(Boolean).length;
    assert.equal(invoked, stored?.status === 'completed' ? 1 : 0);
    assert.ok(stored?.status === 'completed' || stored?.status === 'failed');
    assert.equal(
      stored?.events.filter((event) => /^approval\.(granted|rejected)$/.test(event.type)).length,
      1,
    );
    assert.deepEqual(await runtime.verifyJob(job.id), { ok: true, events: stored?.events.length });
    if (!decisions.includes('reject')) {
      assert.equal(stored?.status, 'completed');
      assert.equal(invoked, 1, 'the write ran exactly once');
    }
    const decided = stored?.status === 'completed' ? 'granted' : 'rejected';
    assert.deepEqual(await ledgerOf(store, job.id), [[decided, 'save']]);
  } finally {
    await runtime.close();
  }
  // Every process closed, so every checkpoint is written: the one ledger entry is sealed.
  const reopened = new OperatorRuntime({ store });
  try {
    const verified = await reopened.verifyStore();
    assert.equal(verified.ok, true, JSON.stringify(verified.problems));
    assert.equal(verified.unsealed, 0);
  } finally {
    await reopened.close();
  }
}

describe('approvals: concurrent decisions in several processes', () => {
  it('on one SQLite file: exactly one winner', { timeout: 120_000 }, async () => {
    await race(`sqlite:${join(directory, 'jobs.db')}`);
  });

  it('on one PostgreSQL database: exactly one winner', { timeout: 180_000 }, async () => {
    postgres ??= await startTestPostgres();
    await race(await postgres.createDatabase());
  });

  it(
    'two processes approving on one SQLite file: the write runs once',
    { timeout: 120_000 },
    async () => {
      await race(`sqlite:${join(directory, 'two.db')}`, ['approve', 'approve']);
    },
  );

  it(
    'two processes approving on one PostgreSQL database: the write runs once',
    { timeout: 180_000 },
    async () => {
      postgres ??= await startTestPostgres();
      await race(await postgres.createDatabase(), ['approve', 'approve']);
    },
  );
});
