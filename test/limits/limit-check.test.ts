// Limits through the runtime (docs/api.md, "Limits"): checked after the allow and before each
// invocation, denied with the exact reason and decision.limit, recorded and verified; a store
// that cannot count denies.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { Database } from '../../src/stores/sqlite/sqlite-driver.cjs';
import { OperatorRuntime, type Job, type LimitDefinition } from '../../src/index.js';
import type { ExecutionCaller } from '../../src/callers/execution-caller.js';
import type { JobStore } from '../../src/jobs/job-store.js';
import { MemoryJobStore } from '../../src/stores/memory/memory-store.js';
import { runtimeOnStore } from '../../src/runtime/operator-runtime.js';
import { limitReason } from '../../src/limits/limit-check.js';
import { checkLimitsOption } from '../../src/limits/limit-options.js';
import { recordingAuthorizer, register } from '../support/runtime-fixtures.js';

const directory = mkdtempSync(join(tmpdir(), 'warrant-limit-check-'));
after(() => rmSync(directory, { recursive: true, force: true }));

const plan = (capability: string) => ({
  version: '1.0' as const,
  steps: [{ id: 's', capability, input: {} }],
});

async function runs(
  runtime: OperatorRuntime,
  capability: string,
  times: number,
  caller?: ExecutionCaller,
) {
  const jobs: Job[] = [];
  for (let index = 0; index < times; index++)
    jobs.push(await runtime.executePlan(plan(capability), caller === undefined ? {} : { caller }));
  return jobs;
}

describe('limits: the step check', () => {
  it('denies the step over a limit with "limit <name>: <n>/<max> in <window>" and decision.limit', async () => {
    let invoked = 0;
    const limits: LimitDefinition[] = [
      { name: 'per-minute', per: 'caller', max: 2, windowMs: 60_000 },
    ];
    const runtime = new OperatorRuntime({ limits });
    const [name] = register(runtime, { execute: () => ++invoked });
    try {
      const jobs = await runs(runtime, name as string, 3, { id: 'alice' });
      assert.deepEqual(
        jobs.map((job) => job.status),
        ['completed', 'completed', 'failed'],
      );
      assert.equal(invoked, 2);
      const step = jobs[2]?.steps[0];
      assert.equal(step?.error, 'limit per-minute: 3/2 in 1m');
      assert.equal(step?.decision?.outcome, 'deny');
      assert.equal(step?.decision?.reason, 'limit per-minute: 3/2 in 1m');
      assert.equal(step?.decision?.limit, 'per-minute');
      assert.equal(jobs[0]?.steps[0]?.decision?.limit, undefined);
      const denied = jobs[2]?.events.find((event) => event.type === 'capability.denied');
      assert.equal(denied?.data?.limit, 'per-minute');
      // Another caller has a counter of its own.
      const [bob] = await runs(runtime, name as string, 1, { id: 'bob' });
      assert.equal(bob?.status, 'completed');
      assert.deepEqual(await runtime.verifyJob(jobs[2]?.id as string), {
        ok: true,
        events: jobs[2]?.events.length,
      });
    } finally {
      await runtime.close();
    }
  });

  it('verifyJob catches an edit of decision.limit', async () => {
    const store = new MemoryJobStore(100);
    const runtime = runtimeOnStore(store, {
      limits: [{ name: 'none', per: 'global', max: 0, windowMs: 1_000 }],
    });
    const [name] = register(runtime, { execute: () => 1 });
    try {
      const [job] = await runs(runtime, name as string, 1);
      const held = store.held(job?.id as string) as Job;
      const step = held.steps[0] as { decision: object };
      step.decision = { ...step.decision, limit: 'another' };
      const verdict = await runtime.verifyJob(job?.id as string);
      assert.equal(verdict?.ok, false);
    } finally {
      await runtime.close();
    }
  });

  it('checks after the allow: a step the authorizer denies takes nothing', async () => {
    const authorizer = recordingAuthorizer((context) =>
      (context.input as { deny?: boolean }).deny === true
        ? { decision: 'deny', reason: 'no' }
        : { decision: 'allow' },
    );
    const runtime = new OperatorRuntime({
      authorizer,
      limits: [{ name: 'one', per: 'global', max: 1, windowMs: 60_000 }],
    });
    const [name] = register(runtime, { execute: () => 1 });
    try {
      const refused = await runtime.executePlan({
        version: '1.0',
        steps: [{ id: 's', capability: name as string, input: { deny: true } }],
      });
      assert.equal(refused.steps[0]?.error, 'no');
      const [allowed, over] = await runs(runtime, name as string, 2);
      assert.equal(allowed?.status, 'completed');
      assert.equal(over?.steps[0]?.error, 'limit one: 2/1 in 1m');
    } finally {
      await runtime.close();
    }
  });

  it('takes nothing while a step waits for approval, and counts it when it runs', async () => {
    let invoked = 0;
    const runtime = new OperatorRuntime({
      approvals: { approver: { canApprove: () => true } },
      limits: [{ name: 'writes', per: 'global', max: 1, windowMs: 60_000 }],
    });
    const [write] = register(runtime, { risk: 'write', execute: () => ++invoked });
    try {
      const waiting = await runtime.executePlan(plan(write as string), { caller: { id: 'a' } });
      assert.equal(waiting.status, 'awaiting_approval');
      assert.deepEqual((await runtime.listLimits()).counters, []);
      const done = await runtime.decideApproval({
        jobId: waiting.id,
        stepId: 's',
        inputDigest: waiting.steps[0]?.decision?.inputDigest as string,
        approver: { id: 'b' },
        decision: 'approve',
      });
      assert.equal(done.status, 'completed');
      assert.equal(invoked, 1);
      assert.deepEqual((await runtime.listLimits()).counters, [
        { limit: 'writes', per: 'global', used: 1, max: 1, windowMs: 60_000 },
      ]);
    } finally {
      await runtime.close();
    }
  });

  it('counts each retry: the attempt over the limit is denied', async () => {
    let invoked = 0;
    const runtime = new OperatorRuntime({
      limits: [{ name: 'tries', per: 'global', max: 2, windowMs: 60_000 }],
    });
    const [name] = register(runtime, {
      retry: { attempts: 5, idempotent: true },
      execute: () => {
        invoked++;
        throw new Error('flaky');
      },
    });
    try {
      const [job] = await runs(runtime, name as string, 1);
      assert.equal(invoked, 2);
      assert.equal(job?.steps[0]?.decision?.limit, 'tries');
      assert.equal(job?.steps[0]?.error, 'limit tries: 3/2 in 1m');
    } finally {
      await runtime.close();
    }
  });

  it('counts a declared cost under a cost limit (1 without one), and matches capability and risk', async () => {
    const runtime = new OperatorRuntime({
      authorizer: recordingAuthorizer(),
      limits: [
        { name: 'budget', per: 'tenant', max: 5, windowMs: 3_600_000, cost: true },
        { name: 'writes', match: { risk: 'write' }, per: 'global', max: 0, windowMs: 1_000 },
      ],
    });
    const [dear, cheap, write] = register(
      runtime,
      { cost: 2.5, execute: () => 1 },
      { execute: () => 1 },
      { risk: 'write', execute: () => 1 },
    );
    try {
      const caller = { id: 'a', tenant: 't1' };
      const jobs = await runs(runtime, dear as string, 3, caller);
      assert.deepEqual(
        jobs.map((job) => job.status),
        ['completed', 'completed', 'failed'],
      );
      assert.equal(jobs[2]?.steps[0]?.error, 'limit budget: 7.5/5 in 1h');
      // Another tenant has its own budget; a capability without a cost counts 1.
      const t2 = { id: 'b', tenant: 't2' };
      const others = [
        ...(await runs(runtime, dear as string, 1, t2)),
        ...(await runs(runtime, cheap as string, 3, t2)),
      ];
      assert.deepEqual(
        others.map((job) => job.steps[0]?.error ?? 'ok'),
        ['ok', 'ok', 'ok', 'limit budget: 5.5/5 in 1h'],
      );
      // Only the write matches `writes` (and it matches `budget` too: the first over is named).
      const [written] = await runs(runtime, write as string, 1, { id: 'c' });
      assert.equal(written?.steps[0]?.error, 'limit writes: 1/0 in 1s');
      assert.equal(written?.steps[0]?.decision?.limit, 'writes');
    } finally {
      await runtime.close();
    }
  });

  it('denies when the store cannot count: a store without counters', async () => {
    const memory = new MemoryJobStore(100);
    // A host's store that keeps jobs but has no limit counters.
    const store: JobStore = {
      create: (job) => memory.create(job),
      update: (job, change) => memory.update(job, change),
      get: (id) => memory.get(id),
      list: (filter) => memory.list(filter),
      close: () => memory.close(),
    };
    let invoked = 0;
    const runtime = runtimeOnStore(store, {
      limits: [{ name: 'any', per: 'global', max: 100, windowMs: 1_000 }],
    });
    const [name] = register(runtime, { execute: () => ++invoked });
    try {
      const [job] = await runs(runtime, name as string, 1);
      assert.equal(invoked, 0);
      assert.equal(job?.steps[0]?.error, 'limit any: not counted (the store cannot count)');
      assert.equal(job?.steps[0]?.decision?.limit, 'any');
    } finally {
      await runtime.close();
    }
  });

  it('denies when the store cannot count: a SQLite file that refuses the count', async () => {
    const file = join(directory, 'refusing.db');
    const db = new Database(file);
    db.exec(`CREATE TABLE limit_usage (name TEXT NOT NULL, key TEXT NOT NULL, at INTEGER NOT NULL,
      amount REAL NOT NULL, window_ms INTEGER NOT NULL);
      CREATE TRIGGER refuse BEFORE INSERT ON limit_usage BEGIN SELECT RAISE(ABORT, 'disk quota'); END;`);
    db.close();
    let invoked = 0;
    const runtime = new OperatorRuntime({
      store: `sqlite:${file}`,
      limits: [{ name: 'any', per: 'global', max: 100, windowMs: 1_000 }],
    });
    const [name] = register(runtime, { execute: () => ++invoked });
    try {
      const [job] = await runs(runtime, name as string, 1);
      assert.equal(invoked, 0);
      assert.equal(job?.steps[0]?.error, 'limit any: not counted (disk quota)');
    } finally {
      await runtime.close();
    }
  });

  it('writes the reason with the window in its largest unit', () => {
    const [limit] =
      checkLimitsOption([{ name: 'odd', per: 'global', max: 0.3, windowMs: 1_500 }]) ?? [];
    assert.equal(limitReason(limit as never, 0.1 + 0.2 + 0.1), 'limit odd: 0.4/0.3 in 1500ms');
  });
});
