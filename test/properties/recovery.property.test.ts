// Recovery at random kill points (docs/api.md, "Recovery"): a runtime in a child process runs two
// plans of 5 steps (appends, not idempotent, and idempotent puts, each taking 0-30 ms) on a
// SQLite file and is SIGKILLed once a random number of steps (0-9) has been entered; a runtime
// opened afterwards with `recover: true` takes the jobs up. Whatever the kill point: every job
// ends completed, failed, cancelled or awaiting approval; no append ran twice; a put that ran
// twice ran with the same idempotency key; every invocation after the kill follows a decision
// of its own; every job verifies.
//
// The kill is a real SIGKILL of a child process, not an abandoned runtime in this process: the
// owner of an abandoned runtime is this (live) process, whose jobs recovery rightly refuses to
// take. A child costs about a second to start, so runs are WARRANT_PROPERTY_RUNS, at most
// MAX_RUNS.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import fc from 'fast-check';
import { OperatorRuntime, type ExecutionAuthorizer, type Job } from '../../src/index.js';
import recoveryModule from '../runtime/fixtures/recovery-capabilities.js';
import { settings } from './support.js';
import { waitFor } from '../support/wait.js';
import { TS_LOADER } from '../support/ts-loader.js';

const MAX_RUNS = 6;
const numRuns = Math.min(settings.numRuns, MAX_RUNS);
const ROOT = resolve(import.meta.dirname, '../..');
const CHILD = resolve(ROOT, 'test/runtime/fixtures/recovery-child.ts');
const directory = mkdtempSync(join(tmpdir(), 'warrant-recovery-property-'));
after(() => rmSync(directory, { recursive: true, force: true }));
new OperatorRuntime().use(recoveryModule);

const lines = (file: string) => readFileSync(file, 'utf8').split('\n').filter(Boolean);

const ledgerAuthorizer: ExecutionAuthorizer = {
  name: 'ledger',
  authorize({ jobId, stepId }) {
    appendFileSync(process.env.WARRANT_TEST_LEDGER as string, `authorize ${jobId} ${stepId}\n`);
    return { decision: 'allow' };
  },
};

const stepArbitrary = fc.record({
  idempotent: fc.boolean(),
  ms: fc.integer({ min: 0, max: 30 }),
});
const planArbitrary = fc.array(stepArbitrary, { minLength: 5, maxLength: 5 });

let runs = 0;
async function killAndRecover(
  plans: { idempotent: boolean; ms: number }[][],
  killAfter: number,
): Promise<void> {
  const run = ++runs;
  const ledger = join(directory, `ledger-${run}.txt`);
  writeFileSync(ledger, '');
  process.env.WARRANT_TEST_LEDGER = ledger;
  const store = `sqlite:${join(directory, `jobs-${run}.db`)}`;
  const submitted = plans.map((steps, n) => ({
    plan: {
      version: '1.0',
      goal: `plan ${n}`,
      steps: steps.map((step, index) => ({
        id: `s${index + 1}`,
        capability: step.idempotent ? 'recovery.put' : 'recovery.append',
        input: { ms: step.ms },
      })),
    },
  }));
  const child = spawn(process.execPath, [...TS_LOADER, CHILD, store, JSON.stringify(submitted)], {
    cwd: ROOT,
    env: { ...process.env, WARRANT_TEST_LEDGER: ledger },
  });
  let stdout = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  // Killed once `killAfter` steps were entered (the ledger file it appends to), or once it is
  // ready (all ran): at most 30 s.
  await waitFor(
    () =>
      lines(ledger).filter((line) => line.startsWith('run ')).length >= killAfter ||
      stdout.includes('"ready"'),
    { timeoutMs: 30_000, intervalMs: 2, what: `${killAfter} runs, or the child ready` },
  );
  child.kill('SIGKILL');
  await exited;
  const killedAt = lines(ledger).length;
  const runtime = new OperatorRuntime({ store, recover: true, authorizer: ledgerAuthorizer });
  try {
    const jobs = (await runtime.listJobs()) as Job[];
    for (const listed of jobs) {
      const job = (await runtime.waitForJob(listed.id, { timeoutMs: 20_000 })) as Job;
      assert.ok(
        ['completed', 'failed', 'cancelled', 'awaiting_approval'].includes(job.status),
        `${job.id} ${job.status}`,
      );
      assert.equal((await runtime.verifyJob(job.id))?.ok, true);
    }
  } finally {
    await runtime.close();
  }
  const all = lines(ledger);
  const seen = new Map<string, Set<string>>();
  const counts = new Map<string, number>();
  for (const line of all.filter((entry) => entry.startsWith('run '))) {
    const [, job, step, kind, key] = line.split(' ');
    const id = `${job} ${step} ${kind}`;
    counts.set(id, (counts.get(id) ?? 0) + 1);
    if (key !== undefined) seen.set(id, (seen.get(id) ?? new Set()).add(key));
  }
  for (const [id, count] of counts) if (id.endsWith(' append')) assert.equal(count, 1, id);
  for (const [id, keys] of seen) assert.equal(keys.size, 1, id);
  const decided = new Map<string, number>();
  for (const line of all.slice(killedAt)) {
    const [kind, job, step] = line.split(' ');
    const id = `${job} ${step}`;
    if (kind === 'authorize') decided.set(id, (decided.get(id) ?? 0) + 1);
    else {
      assert.ok((decided.get(id) ?? 0) > 0, `no decision of its own before ${line}`);
      decided.set(id, (decided.get(id) as number) - 1);
    }
  }
}

describe('recovery at random kill points', () => {
  it(`every job ends, nothing runs twice unless idempotent (seed ${settings.seed}, ${numRuns} runs)`, async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(planArbitrary, { minLength: 2, maxLength: 2 }),
        fc.integer({ min: 0, max: 9 }),
        killAndRecover,
      ),
      { seed: settings.seed, numRuns, endOnFailure: true },
    );
  });
});
