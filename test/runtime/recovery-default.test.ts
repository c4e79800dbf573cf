// Recovery on by default, taking up only what this runtime can admit (docs/api.md, "Recovery";
// issue 47 item 7): a child process registering a capability the test process lacks is
// SIGKILLed with two jobs executing; a runtime opened with default options takes up the job it
// can run and leaves the other, which `waitingJobs()` and `warrant jobs --status
// queued,executing` say waits for a runtime with that capability; `recover: false` takes
// nothing; a runtime that registers the capability takes the job up.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import { OperatorRuntime, type ExecutionPlan } from '../../src/index.js';
import { runAndKill } from '../support/killed-child.js';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';
import recoveryModule, { elsewhereModule } from './fixtures/recovery-capabilities.js';

const directory = mkdtempSync(join(tmpdir(), 'warrant-recovery-default-'));
after(() => rmSync(directory, { recursive: true, force: true }));
const ledger = join(directory, 'ledger.txt');
writeFileSync(ledger, '');
process.env.WARRANT_TEST_LEDGER = ledger;
new OperatorRuntime().use(recoveryModule);
const bin = resolve('dist/esm/cli/main.js');
const allow = { name: 'allow', authorize: () => ({ decision: 'allow' as const }) };

const planOf = (capability: string): ExecutionPlan => ({
  version: '1.0',
  goal: `needs ${capability}`,
  steps: [{ id: 's1', capability, input: { hang: true } }],
});

/** The scenario on one store; `register` ends it by registering the capability (once per file). */
async function scenario(store: string, register: boolean): Promise<void> {
  {
    const { jobIds } = await runAndKill(
      store,
      [planOf('recovery.elsewhere'), planOf('recovery.append'), planOf('recovery.elsewhere')],
      undefined,
      { WARRANT_TEST_ELSEWHERE: '1' },
    );
    const [elsewhere, here, cancelled] = jobIds as [string, string, string];

    // recover: false takes nothing; the cancel it writes is recorded for whoever takes the job.
    const off = new OperatorRuntime({ store, recover: false, authorizer: allow });
    try {
      await off.listJobs({ limit: 0 });
      assert.equal((await off.getJob(here))?.status, 'executing');
      await off.cancelJob(cancelled, { caller: { id: 'alice' }, reason: 'not needed' });
      assert.equal((await off.getJob(cancelled))?.status, 'executing');
      const waiting = await off.waitingJobs();
      assert.deepEqual(
        waiting.map((job) => [job.jobId, job.needs]),
        [
          [elsewhere, ['recovery.elsewhere@1.0.0']],
          [here, []],
          [cancelled, ['recovery.elsewhere@1.0.0']],
        ],
      );
    } finally {
      await off.close();
    }

    // Default options: the job it can admit is taken up (its step interrupted: not idempotent),
    // the other stays its gone owner's, untouched.
    const runtime = new OperatorRuntime({ store, authorizer: allow });
    try {
      const taken = await runtime.waitForJob(here, { timeoutMs: 20_000 });
      assert.equal(taken?.status, 'failed');
      assert.match(taken?.error ?? '', /^STEP_INTERRUPTED/);
      assert.ok(taken?.events.some((event) => event.type === 'job.recovered'));
      const left = await runtime.getJob(elsewhere);
      assert.equal(left?.status, 'executing');
      assert.ok(!left?.events.some((event) => event.type === 'job.recovered'));
      // A cancelled job is ended although nothing here can admit it: ending runs nothing.
      const ended = await runtime.waitForJob(cancelled, { timeoutMs: 20_000 });
      assert.equal(ended?.status, 'cancelled');
      assert.ok(ended?.events.some((event) => event.type === 'job.recovered'));
      assert.deepEqual(
        (await runtime.waitingJobs()).map((job) => [job.jobId, job.needs]),
        [[elsewhere, ['recovery.elsewhere@1.0.0']]],
      );
    } finally {
      await runtime.close();
    }

    // The CLI says what the job waits for, in the table and in JSON; it takes nothing itself.
    const cli = (...args: string[]) =>
      spawnSync(
        process.execPath,
        [bin, 'jobs', '--status', 'queued,executing', '--store', store, ...args],
        {
          encoding: 'utf8',
          timeout: 60_000,
        },
      );
    const table = cli();
    assert.equal(table.status, 0, table.stderr);
    assert.match(table.stdout, /waiting/);
    assert.ok(
      table.stdout
        .split('\n')
        .some(
          (line) =>
            line.includes(elsewhere) &&
            line.includes('waiting for a runtime with recovery.elsewhere@1.0.0'),
        ),
      table.stdout,
    );
    const json = cli('--json');
    assert.equal(json.status, 0, json.stderr);
    const listed = JSON.parse(json.stdout) as { id: string; status: string; waiting?: string }[];
    assert.deepEqual(
      listed.map((job) => [job.id, job.status, job.waiting]),
      [[elsewhere, 'executing', 'waiting for a runtime with recovery.elsewhere@1.0.0']],
    );
    const bad = cli('--status', 'queued,nope');
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /"nope" is not a job status/);

    if (!register) return;
    // A runtime that registers the capability takes it up.
    new OperatorRuntime().use(elsewhereModule);
    const able = new OperatorRuntime({ store, authorizer: allow });
    try {
      const job = await able.waitForJob(elsewhere, { timeoutMs: 20_000 });
      assert.equal(job?.status, 'failed');
      assert.match(job?.error ?? '', /^STEP_INTERRUPTED/);
      assert.deepEqual(await able.waitingJobs(), []);
    } finally {
      await able.close();
    }
  }
}

describe('recovery by default', () => {
  let postgres: TestPostgres | undefined;
  after(async () => {
    await postgres?.stop();
  });
  it('SQLite: takes up only the jobs it can admit; the others wait and say for what', async () => {
    await scenario(`sqlite:${join(directory, 'jobs.db')}`, false);
  });
  it('PostgreSQL: the same, and the job is taken up by a runtime that can', async () => {
    postgres = await startTestPostgres();
    await scenario(await postgres.createDatabase(), true);
  });
});
