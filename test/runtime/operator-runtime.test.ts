import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { OperatorRuntime, operatorRuntime, type ExecutionPlan, type Job } from '../../src/index.js';
import type { JobStore } from '../../src/jobs/job-store.js';
import { MemoryJobStore } from '../../src/stores/memory/memory-store.js';
import { SqliteJobStore } from '../../src/stores/sqlite/sqlite-store.js';
import { runtimeOnStore } from '../../src/runtime/operator-runtime.js';
import { register, runtimeWith } from '../support/runtime-fixtures.js';
import { within } from '../support/wait.js';
import { TS_LOADER } from '../support/ts-loader.js';

describe('new OperatorRuntime(options)', () => {
  it('exports an inert default instance', async () => {
    assert.ok(operatorRuntime instanceof OperatorRuntime);
    assert.equal(await operatorRuntime.getJob('missing'), undefined);
  });

  it('use() returns the runtime for chaining', () => {
    const runtime = runtimeWith();
    const name = `chain.${process.pid}`;
    const returned = runtime.use({
      manifest: { name: 'chain', version: '1', capabilities: [name] },
      capabilities: [{ name, version: '1', description: 'd', risk: 'read', execute: () => 1 }],
    });
    assert.equal(returned, runtime);
  });

  it('passes the configured logger to capabilities', async () => {
    const lines: string[] = [];
    const logger = {
      debug: (message: string) => lines.push(`debug ${message}`),
      info: (message: string) => lines.push(`info ${message}`),
      warn: (message: string) => lines.push(`warn ${message}`),
      error: (message: string) => lines.push(`error ${message}`),
    };
    const runtime = runtimeWith({ logger });
    const [name] = register(runtime, {
      execute: ({ context }) => {
        context.logger.info('inside');
      },
    });
    await runtime.executePlan({ version: '1.0', steps: [{ id: 'x', capability: name as string }] });
    assert.deepEqual(lines, ['info inside']);
  });

  it('rejects executePlan() options that are not an object, and a malformed caller, with EXECUTE_OPTIONS_INVALID', async () => {
    const runtime = runtimeWith();
    const [name] = register(runtime, { execute: () => 1 });
    const plan = { version: '1.0' as const, steps: [{ id: 'x', capability: name as string }] };
    await assert.rejects(runtime.executePlan(plan, null as never), {
      code: 'EXECUTE_OPTIONS_INVALID',
    });
    await assert.rejects(runtime.executePlan(plan, { caller: 'root' as never }), {
      code: 'EXECUTE_OPTIONS_INVALID',
    });
    assert.deepEqual(await runtime.listJobs(), []);
  });
});

describe('OperatorRuntime#getJob() and #listJobs()', () => {
  it('returns jobs by id, newest first, filtered by status, capability and goal, limited', async () => {
    const runtime = runtimeWith();
    const [read, write] = register(
      runtime,
      { execute: () => 1 },
      { risk: 'write', execute: () => 2 },
    );
    const first = await runtime.executePlan({
      version: '1.0',
      goal: ' first ',
      steps: [{ id: 'a', capability: read as string }],
    });
    const second = await runtime.executePlan({
      version: '1.0',
      steps: [{ id: 'b', capability: write as string }],
    });
    const third = await runtime.executePlan({
      version: '1.0',
      goal: 'third',
      steps: [{ id: 'c', capability: read as string }],
    });
    // The store keeps the record (values as recorded); plain values read the same.
    assert.deepEqual(await runtime.getJob(first.id), first);
    assert.equal(await runtime.getJob('nope'), undefined);
    assert.equal(first.goal, 'first');
    assert.equal(second.goal, 'External execution plan');
    const ids = (jobs: { id: string }[]) => jobs.map((job) => job.id);
    assert.deepEqual(ids(await runtime.listJobs()), [third.id, second.id, first.id]);
    assert.deepEqual(ids(await runtime.listJobs({ status: 'failed' })), [second.id]);
    assert.deepEqual(ids(await runtime.listJobs({ capability: read as string })), [
      third.id,
      first.id,
    ]);
    assert.deepEqual(ids(await runtime.listJobs({ goal: 'first' })), [first.id]);
    assert.deepEqual(ids(await runtime.listJobs({ limit: 2 })), [third.id, second.id]);
    assert.deepEqual(await runtime.listJobs({ limit: 0 }), []);
  });

  it('keeps at most maxJobs jobs in memory, evicting the oldest finished first', async () => {
    const runtime = runtimeWith({ maxJobs: 3 });
    const [name] = register(runtime, { execute: () => 1 });
    const jobs = [];
    for (let index = 0; index < 5; index++) {
      jobs.push(
        await runtime.executePlan({
          version: '1.0',
          steps: [{ id: 'x', capability: name as string }],
        }),
      );
    }
    const listed = await runtime.listJobs();
    assert.deepEqual(
      listed.map((job) => job.id),
      [jobs[4]?.id, jobs[3]?.id, jobs[2]?.id],
    );
    assert.equal(await runtime.getJob(jobs[0]?.id as string), undefined);
  });

  it('keeps 1,000 finished jobs by default (docs/api.md, maxJobs)', async () => {
    const runtime = runtimeWith();
    const [name] = register(runtime, { execute: () => 1 });
    const plan: ExecutionPlan = {
      version: '1.0',
      steps: [{ id: 'x', capability: name as string }],
    };
    const ids: string[] = [];
    for (let index = 0; index < 1000; index++) ids.push((await runtime.executePlan(plan)).id);
    assert.ok(await runtime.getJob(ids[0] as string), 'the 1,000th job evicts nothing');
    ids.push((await runtime.executePlan(plan)).id);
    assert.equal(await runtime.getJob(ids[0] as string), undefined);
    assert.ok(await runtime.getJob(ids[1000] as string));
  });

  it('keeps a running job even when it is the oldest beyond maxJobs', async () => {
    const runtime = runtimeWith({ maxJobs: 1 });
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    const [slow, fast] = register(runtime, { execute: () => gate }, { execute: () => 1 });
    const running = runtime.executePlan({
      version: '1.0',
      steps: [{ id: 's', capability: slow as string }],
    });
    await new Promise((resolve) => setImmediate(resolve));
    const done = await runtime.executePlan({
      version: '1.0',
      steps: [{ id: 'f', capability: fast as string }],
    });
    const [runningJob] = await runtime.listJobs({ status: 'executing' });
    assert.ok(runningJob, 'the executing job was not evicted');
    assert.deepEqual(await runtime.getJob(done.id), done);
    release();
    assert.equal((await running).status, 'completed');
  });
});

describe('OperatorRuntime#executePlan() and its store', () => {
  it('opens the store only for an admitted plan: a refused plan creates no SQLite file', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'warrant-refused-')), 'jobs.db');
    const runtime = new OperatorRuntime({ store: `sqlite:${file}` });
    try {
      await assert.rejects(runtime.executePlan({ version: '1.0', steps: [] }), {
        code: 'PLAN_ADMISSION_REJECTED',
      });
      assert.equal(existsSync(file), false);
    } finally {
      await runtime.close();
    }
  });

  it('reports why a plan was refused even when the store cannot be opened', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'warrant-unopenable-'));
    const runtime = new OperatorRuntime({ store: `sqlite:${join(dir, 'missing', 'jobs.db')}` });
    try {
      await assert.rejects(runtime.executePlan({ version: '1.0', steps: [] }), {
        code: 'PLAN_ADMISSION_REJECTED',
      });
      const [name] = register(runtime, { execute: () => 1 });
      await assert.rejects(
        runtime.executePlan({ version: '1.0', steps: [{ id: 'x', capability: name as string }] }),
        { code: 'STORE_OPEN_FAILED' },
      );
    } finally {
      await runtime.close();
    }
  });

  it('runs on a store it is given internally, and writes each change as the transitions name it', async () => {
    const changes: [string, readonly number[], string[]][] = [];
    const memory = new MemoryJobStore(10);
    const store: JobStore = {
      create: (job) => memory.create(job),
      update: (job, change) => {
        changes.push([job.status, change.steps, change.events.map((event) => event.type)]);
        memory.update(job, change);
      },
      get: (id) => memory.get(id),
      list: (filter) => memory.list(filter),
      close: () => memory.close(),
    };
    const runtime = runtimeOnStore(store);
    const [read, write] = register(
      runtime,
      { execute: () => 1 },
      { risk: 'write', execute: () => 2 },
    );
    const job = await runtime.executePlan({
      version: '1.0',
      steps: [
        { id: 'a', capability: read as string },
        { id: 'b', capability: write as string },
        { id: 'c', capability: read as string },
        { id: 'd', capability: read as string },
      ],
    });
    assert.equal(job.status, 'failed');
    assert.deepEqual(changes, [
      ['executing', [0], ['capability.started']],
      ['executing', [0], ['capability.completed']],
      ['failed', [1, 2, 3], ['capability.denied', 'job.failed']],
    ]);
    assert.equal(await runtime.getJob(job.id), memory.get(job.id));
    await runtime.close();
    assert.equal(memory.get(job.id), undefined, 'the runtime closes the store it was given');
  });
});

describe('OperatorRuntime#close()', () => {
  it('is idempotent and makes later executePlan() calls reject with RUNTIME_CLOSED', async () => {
    const runtime = runtimeWith();
    const [name] = register(runtime, { execute: () => 1 });
    await runtime.executePlan({ version: '1.0', steps: [{ id: 'x', capability: name as string }] });
    await runtime.close();
    await runtime.close();
    await assert.rejects(
      runtime.executePlan({ version: '1.0', steps: [{ id: 'x', capability: name as string }] }),
      {
        code: 'RUNTIME_CLOSED',
      },
    );
  });
});

describe('OperatorRuntime#close() while jobs run (issue 15, item 9)', () => {
  const settledYet = async (promise: Promise<unknown>): Promise<boolean> => {
    let settled = false;
    void promise.then(
      () => (settled = true),
      () => (settled = true),
    );
    for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
    return settled;
  };

  for (const kind of ['memory', 'sqlite'] as const) {
    it(`${kind}: stops admitting, lets running jobs end with every step recorded, then releases the store`, async () => {
      const file = join(mkdtempSync(join(tmpdir(), 'warrant-close-')), 'jobs.db');
      const runtime = new OperatorRuntime({
        store: kind === 'memory' ? 'memory' : `sqlite:${file}`,
      });
      let release: () => void = () => {};
      const gate = new Promise<void>((resolve) => (release = resolve));
      let entered: () => void = () => {};
      const started = new Promise<void>((resolve) => (entered = resolve));
      const ran: string[] = [];
      const [slow, after] = register(
        runtime,
        {
          execute: async () => {
            entered();
            await gate;
            ran.push('slow');
            return 'slow done';
          },
        },
        {
          execute: () => {
            ran.push('after');
            return 'after done';
          },
        },
      );
      const running = runtime.executePlan({
        version: '1.0',
        goal: 'closing',
        steps: [
          { id: 'one', capability: slow as string },
          { id: 'two', capability: after as string },
        ],
      });
      await within(started, { what: 'the first step' });
      const closed = runtime.close();
      assert.equal(runtime.close(), closed, 'every call returns the same promise');
      await assert.rejects(
        runtime.executePlan({ version: '1.0', steps: [{ id: 'x', capability: after as string }] }),
        { code: 'RUNTIME_CLOSED' },
      );
      assert.equal(await settledYet(closed), false, 'close() waits for the running job');
      release();
      const job = await within(running, { what: 'the running job' });
      await within(closed, { what: 'close()' });
      assert.equal(job.status, 'completed', job.error);
      assert.deepEqual(ran, ['slow', 'after']);
      assert.deepEqual(
        job.steps.map((step) => step.status),
        ['completed', 'completed'],
      );
      await assert.rejects(runtime.getJob(job.id), { code: 'RUNTIME_CLOSED' });
      if (kind === 'sqlite') {
        const reopened = new SqliteJobStore(file);
        try {
          const stored = reopened.get(job.id) as Job;
          assert.equal(stored.status, 'completed');
          assert.deepEqual(
            stored.steps.map((step) => [step.status, step.result]),
            [
              ['completed', 'slow done'],
              ['completed', 'after done'],
            ],
          );
          assert.equal(stored.events.at(-1)?.type, 'job.completed');
        } finally {
          reopened.close();
        }
      }
    });
  }

  it('waits for every running job, one that fails included, and for nothing once they ended', async () => {
    const runtime = runtimeWith();
    const gates: (() => void)[] = [];
    let entered = 0;
    const [gated] = register(runtime, {
      execute: async ({ input }) => {
        entered++;
        await new Promise<void>((resolve) => gates.push(resolve));
        if ((input as { fail?: boolean }).fail === true) throw new Error('failed on purpose');
        return 'done';
      },
    });
    const plan = (fail: boolean) => ({
      version: '1.0' as const,
      steps: [{ id: 'x', capability: gated as string, input: { fail } }],
    });
    const jobs = [runtime.executePlan(plan(false)), runtime.executePlan(plan(true))];
    jobs.push(runtime.executePlan(plan(false)));
    for (let turn = 0; turn < 50 && entered < 3; turn++)
      await new Promise((resolve) => setImmediate(resolve));
    assert.equal(entered, 3);
    const closed = runtime.close();
    for (const open of gates.splice(0, 2)) open();
    await within(Promise.all(jobs.slice(0, 2)), { what: 'the first two jobs' });
    assert.equal(await settledYet(closed), false, 'one job still runs');
    gates.splice(0).forEach((open) => open());
    const [, failed, last] = await within(Promise.all(jobs), { what: 'every job' });
    await within(closed, { what: 'close()' });
    assert.equal(failed?.status, 'failed');
    assert.equal(last?.status, 'completed');
    const idle = runtimeWith();
    await within(idle.close(), { what: 'close() of a runtime that ran nothing' });
  });
});

describe('the unhandled-rejection guard of the test suite', () => {
  it('fails a test process in which a rejection goes unhandled, even if a handler swallows it', () => {
    const script = [
      "process.on('unhandledRejection', () => {});",
      "Promise.reject(new Error('lost'));",
      'setTimeout(() => {}, 10);',
    ].join('\n');
    const child = spawnSync(
      process.execPath,
      [
        ...TS_LOADER,
        '--import',
        './test/support/unhandled-rejection-guard.ts',
        '--input-type=module',
        '-e',
        script,
      ],
      { encoding: 'utf8' },
    );
    assert.equal(child.status, 1, child.stderr);
    assert.match(child.stderr, /unhandledRejection in test process/);
  });
});
