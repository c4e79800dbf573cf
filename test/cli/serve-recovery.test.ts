// `warrant serve` recovers at start (docs/api.md, "Recovery"; docs/guide/stores.md, "Recovery"):
// the built program on SQLite and on PostgreSQL runs plans of 5 steps whose capabilities append to
// a ledger file outside Warrant (some idempotent), is SIGKILLed mid-plan, and is started again on
// the same store. Every job then ends completed, failed, cancelled or awaiting approval; no step of
// a non-idempotent capability ran twice; every invocation after the restart follows an authorizer
// call of its own (the authorizer writes to the ledger too).
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { OperatorRuntime, type Job } from '../../src/index.js';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';
import { serveChild } from '../support/serve-child.js';
import { waitFor } from '../support/wait.js';

const MODULE = resolve(import.meta.dirname, '../runtime/fixtures/recovery-capabilities.ts');
const AUTHORIZER = resolve(import.meta.dirname, '../runtime/fixtures/recovery-authorizer.mjs');
const directory = mkdtempSync(join(tmpdir(), 'warrant-serve-recovery-'));
after(() => rmSync(directory, { recursive: true, force: true }));

const lines = (file: string) => readFileSync(file, 'utf8').split('\n').filter(Boolean);

/** Plans of 5 steps, appends and idempotent puts mixed, each step about 40 ms. */
function plans(count: number): unknown[] {
  return Array.from({ length: count }, (_, n) => ({
    version: '1.0',
    goal: `recovery ${n}`,
    steps: Array.from({ length: 5 }, (_, index) => ({
      id: `s${index + 1}`,
      capability: (n + index) % 3 === 0 ? 'recovery.put' : 'recovery.append',
      input: { ms: 40 },
    })),
  }));
}

async function post(address: string, path: string, body: unknown, prefer?: string) {
  const response = await fetch(`${address}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(prefer && { prefer }) },
    body: JSON.stringify(body),
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

async function killedAndRestarted(store: string, killAfter: number): Promise<void> {
  const ledger = join(directory, `ledger-${Date.now()}-${killAfter}.txt`);
  writeFileSync(ledger, '');
  const env = { WARRANT_TEST_LEDGER: ledger };
  const args = ['--store', store, '--module', MODULE, '--authorizer', AUTHORIZER];
  const first = serveChild(args, env);
  const ids: string[] = [];
  try {
    const address = await first.listening;
    for (const plan of plans(4)) {
      const answer = await post(address, '/api/plans', plan, 'respond-async');
      assert.equal(answer.status, 202, JSON.stringify(answer.json));
      ids.push(answer.json.id as string);
    }
    // Killed once `killAfter` steps have been entered (the ledger file the child appends to).
    await waitFor(
      () => lines(ledger).filter((line) => line.startsWith('run ')).length >= killAfter,
      { intervalMs: 5, what: () => `${killAfter} runs in the ledger: ${first.stderr()}` },
    );
  } finally {
    first.child.kill('SIGKILL');
    await first.exited;
  }
  const killedAt = lines(ledger).length;

  const second = serveChild(args, env);
  const jobs: Job[] = [];
  try {
    const address = await second.listening;
    for (const id of ids) {
      const response = await fetch(`${address}/api/jobs/${id}?waitMs=20000`);
      jobs.push((await response.json()) as Job);
    }
  } finally {
    await second.stop();
  }
  for (const job of jobs)
    assert.ok(
      ['completed', 'failed', 'cancelled', 'awaiting_approval'].includes(job.status),
      `${job.id} ${job.status}`,
    );
  const all = lines(ledger);
  const runs = new Map<string, number>();
  for (const line of all.filter((entry) => entry.startsWith('run '))) {
    const [, job, step, kind] = line.split(' ');
    const key = `${job} ${step} ${kind}`;
    runs.set(key, (runs.get(key) ?? 0) + 1);
  }
  for (const [key, count] of runs) if (key.endsWith(' append')) assert.equal(count, 1, key);
  // After the restart, each invocation has its own decision before it.
  const decided = new Map<string, number>();
  for (const line of all.slice(killedAt)) {
    const [kind, job, step] = line.split(' ');
    const key = `${job} ${step}`;
    if (kind === 'authorize') decided.set(key, (decided.get(key) ?? 0) + 1);
    else {
      assert.ok((decided.get(key) ?? 0) > 0, `no decision of its own before ${line}`);
      decided.set(key, (decided.get(key) as number) - 1);
    }
  }
  // Something was cut off, and taken up.
  const recovered = jobs.filter((job) =>
    job.events.some((event) => event.type === 'job.recovered'),
  );
  assert.ok(recovered.length > 0);
  const reader = new OperatorRuntime({ store });
  try {
    for (const id of ids) assert.equal((await reader.verifyJob(id))?.ok, true, id);
  } finally {
    await reader.close();
  }
}

describe('warrant serve recovers at start', () => {
  it('on SQLite: SIGKILLed mid-plan, restarted, every job ends and nothing runs twice', async () => {
    await killedAndRestarted(`sqlite:${join(directory, 'jobs.db')}`, 6);
  });

  describe('on PostgreSQL', () => {
    let postgres: TestPostgres;
    before(async () => {
      postgres = await startTestPostgres();
    });
    after(async () => {
      await postgres?.stop();
    });
    it('SIGKILLed mid-plan, restarted, every job ends and nothing runs twice', async () => {
      await killedAndRestarted(await postgres.createDatabase(), 9);
    });
  });
});
