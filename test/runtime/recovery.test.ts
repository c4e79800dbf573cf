// Recovery at start (docs/api.md, "Recovery"): a runtime in a child process is SIGKILLed with
// jobs queued, mid-step and between an approval and its step; a runtime opened afterwards with
// `recover: true` takes them up. Capabilities append to a ledger file outside Warrant, and so
// does the recovering runtime's authorizer, so the ledger shows what ran, how often, and that
// each invocation after the kill had its own decision. Stores: SQLite and PostgreSQL.
import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, it } from 'node:test';
import {
  OperatorRuntime,
  type ExecutionAuthorizer,
  type ExecutionPlan,
  type Job,
} from '../../src/index.js';
import { Database } from '../../src/stores/sqlite/sqlite-driver.cjs';
import { runAndKill } from '../support/killed-child.js';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';
import { stepRequests } from '../support/step-requests.js';
import recoveryModule from './fixtures/recovery-capabilities.js';
import { TS_LOADER } from '../support/ts-loader.js';

const ROOT = resolve(import.meta.dirname, '../..');
const CHILD = resolve(import.meta.dirname, 'fixtures/recovery-child.ts');
const directory = mkdtempSync(join(tmpdir(), 'warrant-recovery-'));
const children: ChildProcessWithoutNullStreams[] = [];
after(() => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  rmSync(directory, { recursive: true, force: true });
});
new OperatorRuntime().use(recoveryModule);

let files = 0;
/** A fresh ledger file; this process's capabilities and authorizers write to it. */
function newLedger(): string {
  const file = join(directory, `ledger-${++files}.txt`);
  writeFileSync(file, '');
  process.env.WARRANT_TEST_LEDGER = file;
  return file;
}

function ledgerLines(file: string): string[] {
  return readFileSync(file, 'utf8').split('\n').filter(Boolean);
}

/** An authorizer that allows and writes `authorize <job> <step> [approved-by]` to the ledger. */
const ledgerAuthorizer: ExecutionAuthorizer = {
  name: 'ledger',
  authorize({ jobId, stepId, approval }) {
    const by = approval === undefined ? '' : ` approved-by ${String(approval.approver.id)}`;
    appendFileSync(
      process.env.WARRANT_TEST_LEDGER as string,
      `authorize ${jobId} ${stepId}${by}\n`,
    );
    return { decision: 'allow' };
  },
};

const step = (id: string, capability: string, input: Record<string, unknown> = {}) => ({
  id,
  capability,
  input,
});
const plan = (...steps: ReturnType<typeof step>[]): ExecutionPlan =>
  ({ version: '1.0', goal: 'recovery', steps }) as ExecutionPlan;

async function ended(runtime: OperatorRuntime, ids: readonly string[]): Promise<Job[]> {
  const jobs: Job[] = [];
  for (const id of ids) jobs.push((await runtime.waitForJob(id, { timeoutMs: 20_000 })) as Job);
  return jobs;
}

/** Every `run` line after `from` follows an `authorize` line of the same job and step after `from`. */
function eachRunAuthorized(lines: readonly string[], from: number): void {
  const decided = new Map<string, number>();
  for (const line of lines.slice(from)) {
    const [kind, job, stepId] = line.split(' ');
    const key = `${job} ${stepId}`;
    if (kind === 'authorize') decided.set(key, (decided.get(key) ?? 0) + 1);
    if (kind === 'run') {
      const left = decided.get(key) ?? 0;
      assert.ok(left > 0, `no decision of its own before ${line}`);
      decided.set(key, left - 1);
    }
  }
}

function runsOf(lines: readonly string[], jobId: string, stepId: string): string[] {
  return lines.filter((line) => line.startsWith(`run ${jobId} ${stepId} `));
}

/** The crash scenarios, on one store. */
function scenarios(storeOf: () => Promise<string>): void {
  it('takes up queued, running, idempotent and cancelled jobs of a killed process', async () => {
    const store = await storeOf();
    const ledger = newLedger();
    const { jobIds } = await runAndKill(store, [
      plan(step('a1', 'recovery.append'), step('a2', 'recovery.append', { hang: true })),
      plan(
        step('p1', 'recovery.put'),
        step('p2', 'recovery.put', { hang: true }),
        step('p3', 'recovery.append'),
      ),
      plan(step('c1', 'recovery.append', { hang: true }), step('c2', 'recovery.append')),
      plan(step('f1', 'recovery.append', { hang: true })),
      plan(step('q1', 'recovery.append'), step('q2', 'recovery.put')),
    ]);
    const [interrupted, idempotent, cancelled, filler, queued] = jobIds as [
      string,
      string,
      string,
      string,
      string,
    ];
    const killedAt = ledgerLines(ledger).length;
    // A cancel written after the kill, as another process would: recorded, never run.
    // A process that only reads and cancels: it takes nothing up (recovery is on by default).
    const reader = new OperatorRuntime({ store, recover: false });
    assert.equal((await reader.getJob(queued))?.status, 'queued');
    await reader.cancelJob(cancelled, { caller: { id: 'alice' }, reason: 'stop' });
    await reader.close();

    const runtime = new OperatorRuntime({ store, recover: true, authorizer: ledgerAuthorizer });
    try {
      const jobs = await ended(runtime, jobIds);
      const lines = ledgerLines(ledger);
      const [first, second, third, fourth, fifth] = jobs as [Job, Job, Job, Job, Job];
      // Started, never ended, not idempotent: interrupted, never run again; the job fails.
      assert.equal(first.status, 'failed');
      assert.match(first.error ?? '', /^STEP_INTERRUPTED: step "a2"/);
      assert.deepEqual(
        first.steps.map((s) => s.status),
        ['completed', 'interrupted'],
      );
      assert.equal(runsOf(lines, interrupted, 'a2').length, 1);
      assert.equal(fourth.status, 'failed');
      assert.equal(runsOf(lines, filler, 'f1').length, 1);
      // Idempotent: run again with the same idempotency key, authorized again.
      assert.equal(second.status, 'completed');
      const puts = runsOf(lines, idempotent, 'p2');
      assert.deepEqual(puts, [
        `run ${idempotent} p2 put ${idempotent}:p2`,
        `run ${idempotent} p2 put ${idempotent}:p2`,
      ]);
      assert.equal(runsOf(lines, idempotent, 'p1').length, 1);
      assert.equal(runsOf(lines, idempotent, 'p3').length, 1);
      // Cancelled: no step starts again.
      assert.equal(third.status, 'cancelled');
      assert.deepEqual(
        third.steps.map((s) => s.status),
        ['cancelled', 'skipped'],
      );
      assert.equal(runsOf(lines, cancelled, 'c1').length, 1);
      // Queued: runs once, here.
      assert.equal(fifth.status, 'completed');
      assert.equal(runsOf(lines, queued, 'q1').length, 1);
      eachRunAuthorized(lines, killedAt);
      assert.ok(lines.slice(killedAt).includes(`authorize ${idempotent} p2`));
      for (const job of jobs) {
        const recovered = job.events.filter((event) => event.type === 'job.recovered');
        assert.equal(recovered.length, 1, job.id);
        assert.match(String(recovered[0]?.data?.by), /^owner-[0-9a-f]{24}$/);
        assert.deepEqual(await runtime.verifyJob(job.id), {
          ok: true,
          events: job.events.length,
        });
      }
      assert.ok(first.events.some((event) => event.type === 'step.interrupted'));
    } finally {
      await runtime.close();
    }
    if (store.startsWith('sqlite:')) {
      // An edit of what recovery recorded is caught: the interrupted step shown as completed.
      const db = new Database(store.slice('sqlite:'.length));
      db.prepare(
        "UPDATE job_steps SET status = 'completed' WHERE position = 1 AND job_seq = (SELECT seq FROM jobs WHERE id = ?)",
      ).run(interrupted);
      db.close();
      // A process that only verifies: it takes nothing up (recovery is on by default).
      const reader = new OperatorRuntime({ store, recover: false });
      const verdict = await reader.verifyJob(interrupted);
      await reader.close();
      assert.equal(verdict?.ok, false);
    }
    // Taken once: a second recovering runtime finds nothing to take.
    const again = new OperatorRuntime({ store, recover: true, authorizer: ledgerAuthorizer });
    const before = ledgerLines(ledger).length;
    await again.listJobs({ limit: 0 });
    await again.close();
    assert.equal(ledgerLines(ledger).length, before);
  });

  it('with approvals: an interrupted step asks for approval; a granted, never started step is decided again', async () => {
    const store = await storeOf();
    const ledger = newLedger();
    const { jobIds } = await runAndKill(
      store,
      [
        plan(step('h1', 'recovery.append', { hang: true })),
        plan(step('g0', 'recovery.append'), step('gate', 'recovery.append')),
      ],
      'approve',
    );
    const [hung, gated] = jobIds as [string, string];
    const runtime = new OperatorRuntime({
      store,
      recover: true,
      authorizer: ledgerAuthorizer,
      approvals: { approver: { canApprove: () => true } },
    });
    try {
      const [waiting, resumed] = (await ended(runtime, jobIds)) as [Job, Job];
      assert.equal(waiting.status, 'awaiting_approval');
      const [request] = stepRequests(await runtime.listApprovals({ jobId: hung }));
      assert.equal(request?.reason, 'interrupted: may have run');
      assert.ok(waiting.events.some((event) => event.type === 'step.interrupted'));
      // Granted before the crash, never started: decided again, the grant as context.approval.
      assert.equal(resumed.status, 'completed');
      const lines = ledgerLines(ledger);
      assert.ok(lines.includes(`authorize ${gated} gate approved-by bob`), lines.join('\n'));
      assert.equal(runsOf(lines, gated, 'gate').length, 1);
      assert.equal(runsOf(lines, hung, 'h1').length, 1);
      // It may have run as it was: it cannot be approved with another input; nothing is decided.
      await assert.rejects(
        runtime.decideApproval({
          jobId: hung,
          stepId: 'h1',
          decision: 'approve',
          approver: { id: 'carol' },
          inputDigest: request?.inputDigest as string,
          input: { hang: false },
        }),
        { code: 'APPROVAL_INPUT_INVALID', message: /started before and may have run/ },
      );
      assert.equal((await runtime.listApprovals({ jobId: hung })).length, 1);
      // Approved by a person who knows it may have run: it runs again, decided again.
      const done = await runtime.decideApproval({
        jobId: hung,
        stepId: 'h1',
        decision: 'approve',
        approver: { id: 'carol' },
        inputDigest: request?.inputDigest as string,
      });
      assert.equal(done.status, 'completed');
      const after = ledgerLines(ledger);
      assert.equal(runsOf(after, hung, 'h1').length, 2);
      assert.ok(after.includes(`authorize ${hung} h1 approved-by carol`));
      for (const id of jobIds) assert.equal((await runtime.verifyJob(id))?.ok, true);
    } finally {
      await runtime.close();
    }
  });

  it('a step started under a plan grant and interrupted is not run again unless idempotent', async () => {
    const store = await storeOf();
    const ledger = newLedger();
    const { jobIds } = await runAndKill(
      store,
      [
        plan(step('w1', 'recovery.append', { hang: true })),
        plan(step('w2', 'recovery.put', { hang: true })),
      ],
      'approve-plan',
    );
    const [appended, put] = jobIds as [string, string];
    const runtime = new OperatorRuntime({
      store,
      recover: true,
      authorizer: ledgerAuthorizer,
      approvals: { approver: { canApprove: () => true } },
    });
    try {
      const [waiting, resumed] = (await ended(runtime, jobIds)) as [Job, Job];
      // Both ran under the plan grant before the kill (docs/api.md, "Plan warrants").
      for (const job of [waiting, resumed]) {
        const started = job.events.find((event) => event.type === 'capability.started');
        assert.deepEqual(
          started?.data?.approval,
          {
            kind: 'plan',
            planDigest: job.events.find((event) => event.type === 'approval.granted')?.data
              ?.planDigest,
            approver: 'bob',
          },
          JSON.stringify(job.events),
        );
      }
      // Not idempotent: it may have run, so a person decides again; the grant does not cover it.
      assert.equal(waiting.status, 'awaiting_approval');
      const [request] = stepRequests(await runtime.listApprovals({ jobId: appended }));
      assert.equal(request?.reason, 'interrupted: may have run');
      assert.equal(runsOf(ledgerLines(ledger), appended, 'w1').length, 1);
      // Idempotent: run again, authorized again.
      assert.equal(resumed.status, 'completed');
      assert.equal(runsOf(ledgerLines(ledger), put, 'w2').length, 2);
      for (const id of jobIds) assert.equal((await runtime.verifyJob(id))?.ok, true);
    } finally {
      await runtime.close();
    }
  });

  it('an edited grant recorded before a crash: the step runs with the approved input, bound to its digest', async () => {
    const store = await storeOf();
    const ledger = newLedger();
    const { jobIds } = await runAndKill(
      store,
      [plan(step('g0', 'recovery.append'), step('gate', 'recovery.append', { note: 'proposed' }))],
      'approve-edit',
    );
    const [gated] = jobIds as [string];
    const asked: { input: unknown; digest: unknown; approval: unknown }[] = [];
    const runtime = new OperatorRuntime({
      store,
      recover: true,
      authorizer: {
        name: 'ledger',
        authorize(context) {
          if (context.stepId === 'gate') {
            const approval = { ...context.approval, approver: context.approval?.approver.id };
            asked.push({ input: context.input, digest: context.inputDigest, approval });
          }
          return ledgerAuthorizer.authorize(context);
        },
      },
      approvals: { approver: { canApprove: () => true } },
    });
    try {
      const [done] = (await ended(runtime, jobIds)) as [Job];
      assert.equal(done.status, 'completed', done.error);
      const gate = done.steps[1];
      assert.deepEqual(gate?.result, { appended: 'gate', note: 'approved' });
      assert.deepEqual(gate?.proposedInput, { note: 'proposed' });
      assert.deepEqual(gate?.approvedInput, { note: 'approved' });
      const granted = done.events.find((event) => event.type === 'approval.granted');
      assert.equal(granted?.data?.edited, true);
      assert.deepEqual(
        asked.map(({ approval, ...rest }) => ({
          ...rest,
          approval: { ...(approval as object), grantedAt: 'time' },
        })),
        [
          {
            input: { note: 'approved' },
            digest: granted?.data?.inputDigest,
            approval: {
              approver: 'bob',
              grantedAt: 'time',
              inputDigest: granted?.data?.inputDigest,
              edited: true,
              proposedDigest: granted?.data?.proposedDigest,
            },
          },
        ],
      );
      assert.equal(runsOf(ledgerLines(ledger), gated, 'gate').length, 1);
      assert.deepEqual(await runtime.verifyJob(gated), { ok: true, events: done.events.length });
    } finally {
      await runtime.close();
    }
  });

  it('never takes the jobs of a live process', async () => {
    const store = await storeOf();
    const ledger = newLedger();
    const child = spawn(
      process.execPath,
      [
        ...TS_LOADER,
        CHILD,
        store,
        JSON.stringify([{ plan: plan(step('l1', 'recovery.append', { hang: true })) }]),
      ],
      { cwd: ROOT, env: { ...process.env, WARRANT_TEST_HANG: '1' } },
    );
    children.push(child);
    const exited = new Promise<void>((done) => child.once('exit', () => done()));
    const ready = new Promise<string>((done, failed) => {
      let jobId = '';
      const timer = setTimeout(() => failed(new Error('child not ready in 30 s')), 30_000);
      createInterface({ input: child.stdout }).on('line', (line) => {
        const parsed = JSON.parse(line) as { jobId?: string; ready?: boolean };
        if (parsed.jobId !== undefined) jobId = parsed.jobId;
        if (parsed.ready === true) {
          clearTimeout(timer);
          done(jobId);
        }
      });
    });
    const jobId = await ready;
    const runtime = new OperatorRuntime({ store, recover: true, authorizer: ledgerAuthorizer });
    try {
      await runtime.listJobs({ limit: 0 });
      const job = await runtime.getJob(jobId);
      assert.equal(job?.status, 'executing');
      assert.ok(!job?.events.some((event) => event.type === 'job.recovered'));
      assert.equal(runsOf(ledgerLines(ledger), jobId, 'l1').length, 1);
    } finally {
      await runtime.close();
      child.kill('SIGKILL');
      await exited;
    }
    // Once it is gone, the next runtime takes the job up.
    const next = new OperatorRuntime({ store, recover: true, authorizer: ledgerAuthorizer });
    try {
      await next.listJobs({ limit: 0 });
      const job = await next.waitForJob(jobId, { timeoutMs: 20_000 });
      assert.equal(job?.status, 'failed');
      assert.match(job?.error ?? '', /^STEP_INTERRUPTED/);
    } finally {
      await next.close();
    }
  });
}

describe('recovery on SQLite', () => {
  let count = 0;
  scenarios(async () => `sqlite:${join(directory, `jobs-${++count}.db`)}`);
});

describe('recovery on PostgreSQL', () => {
  let postgres: TestPostgres;
  before(async () => {
    postgres = await startTestPostgres();
  });
  after(async () => {
    await postgres?.stop();
  });
  scenarios(() => postgres.createDatabase());

  it('a running runtime takes up the jobs of a process killed after it opened', async () => {
    const store = await postgres.createDatabase();
    const ledger = newLedger();
    const child = spawn(
      process.execPath,
      [
        ...TS_LOADER,
        CHILD,
        store,
        JSON.stringify(
          [
            plan(step('a1', 'recovery.append'), step('a2', 'recovery.append', { hang: true })),
            plan(step('p1', 'recovery.put', { hang: true })),
            plan(step('f1', 'recovery.append', { hang: true })),
            plan(step('g1', 'recovery.append', { hang: true })),
            // Behind the four that hang (the child runs 4 at once): queued.
            plan(step('q1', 'recovery.append')),
          ].map((queued) => ({ plan: queued })),
        ),
      ],
      { cwd: ROOT, env: { ...process.env, WARRANT_TEST_HANG: '1' } },
    );
    children.push(child);
    const exited = new Promise<void>((done) => child.once('exit', () => done()));
    const jobIds: string[] = [];
    await new Promise<void>((ready, failed) => {
      const timer = setTimeout(() => failed(new Error('child not ready in 30 s')), 30_000);
      createInterface({ input: child.stdout }).on('line', (line) => {
        const parsed = JSON.parse(line) as { jobId?: string; ready?: boolean };
        if (parsed.jobId !== undefined) jobIds.push(parsed.jobId);
        if (parsed.ready === true) {
          clearTimeout(timer);
          ready();
        }
      });
    });
    const [interrupted, idempotent, hung, other, queued] = jobIds as [
      string,
      string,
      string,
      string,
      string,
    ];
    // Opened while the child lives: its recovery at open takes nothing.
    const runtime = new OperatorRuntime({ store, recover: true, authorizer: ledgerAuthorizer });
    try {
      await runtime.listJobs({ limit: 0 });
      assert.equal((await runtime.getJob(queued))?.status, 'queued');
      const before = await runtime.getJob(interrupted);
      assert.equal(before?.status, 'executing');
      assert.ok(!before?.events.some((event) => event.type === 'job.recovered'));
      // Killed while the runtime runs: its lock is released after the runtime opened, and the
      // runtime takes its jobs up then.
      child.kill('SIGKILL');
      await exited;
      const jobs = await ended(runtime, jobIds);
      const lines = ledgerLines(ledger);
      const byId = new Map(jobs.map((job) => [job.id, job]));
      assert.equal(byId.get(interrupted)?.status, 'failed');
      assert.match(byId.get(interrupted)?.error ?? '', /^STEP_INTERRUPTED: step "a2"/);
      assert.equal(byId.get(idempotent)?.status, 'completed');
      assert.equal(runsOf(lines, idempotent, 'p1').length, 2);
      for (const [id, stepId] of [
        [interrupted, 'a2'],
        [hung, 'f1'],
        [other, 'g1'],
        [queued, 'q1'],
      ] as const)
        assert.equal(runsOf(lines, id, stepId).length, 1, `${id} ${stepId}`);
      assert.equal(byId.get(queued)?.status, 'completed');
      const takers = new Set<unknown>();
      for (const job of jobs) {
        const recovered = job.events.filter((event) => event.type === 'job.recovered');
        assert.equal(recovered.length, 1, job.id);
        takers.add(recovered[0]?.data?.by);
        assert.equal((await runtime.verifyJob(job.id))?.ok, true, job.id);
      }
      assert.equal(takers.size, 1);
    } finally {
      await runtime.close();
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
