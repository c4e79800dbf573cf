// Exactly once across processes (docs/decisions.md, "Approvals"): several processes decide one
// request on one SQLite file, and on one PostgreSQL database, at the same moment. Exactly one
// wins, the others answer APPROVAL_NOT_PENDING, and the capability ran at most once (once when
// an approval won). The chain of the job stays intact.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import { OperatorRuntime } from '../../src/index.js';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';
import { READ, WRITE, approvalModule } from './fixtures/approval-capabilities.js';

const CHILD = resolve(import.meta.dirname, 'fixtures/decide-child.ts');
const PROCESSES = 4;
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
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, ...args], {
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

async function race(store: string): Promise<void> {
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
    for (let index = 0; index < PROCESSES; index++) {
      const child = decideIn([
        store,
        job.id,
        'save',
        digest,
        `approver-${index}`,
        index === PROCESSES - 1 ? 'reject' : 'approve',
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
  } finally {
    await runtime.close();
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
});
