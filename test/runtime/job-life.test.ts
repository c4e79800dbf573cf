// A job's life (docs/api.md, "Queued jobs and cancellation"): submitPlan and waitForJob, the
// in-process queue, cancelJob of a running, a queued and an awaiting job, the cancel policy.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import {
  OperatorRuntime,
  type ExecutionContext,
  type OperatorRuntimeOptions,
} from '../../src/index.js';
import { gate, planOf, register, withRuntime } from '../support/runtime-fixtures.js';
import { Changes } from '../support/wait.js';

const ALICE = { id: 'alice' };
const directory = mkdtempSync(join(tmpdir(), 'warrant-job-life-'));
after(() => rmSync(directory, { recursive: true, force: true }));
let files = 0;
const sqliteFile = () => `sqlite:${join(directory, `jobs-${++files}.db`)}`;

describe('submitPlan and waitForJob', () => {
  it('records the job queued, resolves its id at once, and runs it through the executor', async () => {
    await withRuntime({}, async (runtime) => {
      const g = gate();
      const [cap] = register(runtime, g.definition) as [string];
      const { jobId } = await runtime.submitPlan(
        planOf({ id: 'a', capability: cap, input: { n: 1 } }),
        {
          caller: ALICE,
        },
      );
      assert.equal(typeof jobId, 'string');
      const queued = await runtime.getJob(jobId);
      assert.equal(queued?.status, 'queued');
      assert.deepEqual(
        queued?.events.map((event) => event.type),
        ['job.created'],
      );
      await g.entered();
      g.release(0);
      const done = await runtime.waitForJob(jobId, { timeoutMs: 5000 });
      assert.equal(done?.status, 'completed');
      assert.deepEqual(done?.result, { released: { n: 1 } });
      assert.deepEqual(
        done?.events.map((event) => event.type),
        [
          'job.created',
          'execution.started',
          'capability.started',
          'capability.completed',
          'job.completed',
        ],
      );
      assert.deepEqual(await runtime.verifyJob(jobId), { ok: true, events: 5 });
    });
  });

  it('refuses a plan as executePlan does, creating no job', async () => {
    await withRuntime({}, async (runtime) => {
      await assert.rejects(
        runtime.submitPlan(planOf({ id: 'a', capability: 'no.such.capability' })),
        { code: 'PLAN_ADMISSION_REJECTED' },
      );
      assert.deepEqual(await runtime.listJobs(), []);
    });
  });

  it('waitForJob: undefined for an unknown id, the job as it stands after timeoutMs, the signal', async () => {
    await withRuntime({}, async (runtime) => {
      const g = gate();
      const [cap] = register(runtime, g.definition) as [string];
      assert.equal(await runtime.waitForJob('job_unknown', { timeoutMs: 10 }), undefined);
      const { jobId } = await runtime.submitPlan(planOf({ id: 'a', capability: cap }));
      await g.entered();
      const started = Date.now();
      const standing = await runtime.waitForJob(jobId, { timeoutMs: 50 });
      assert.equal(standing?.status, 'executing');
      assert.ok(Date.now() - started >= 45);
      const controller = new AbortController();
      const waiting = runtime.waitForJob(jobId, { signal: controller.signal });
      controller.abort(new Error('stop waiting'));
      await assert.rejects(waiting, /stop waiting/);
      await assert.rejects(runtime.waitForJob(jobId, { timeoutMs: -1 }), {
        code: 'JOB_OPTIONS_INVALID',
      });
      g.release(0);
      assert.equal((await runtime.waitForJob(jobId))?.status, 'completed');
    });
  });

  it('runs queued jobs in submission order, at most queue.concurrency at once', async () => {
    await withRuntime({ queue: { concurrency: 2 } }, async (runtime) => {
      const g = gate();
      const [cap] = register(runtime, g.definition) as [string];
      const ids: string[] = [];
      for (let n = 0; n < 4; n++) {
        ids.push(
          (await runtime.submitPlan(planOf({ id: 'a', capability: cap, input: { n } }))).jobId,
        );
      }
      await g.entered(2);
      assert.deepEqual(
        g.seen.map((seen) => seen.input),
        [{ n: 0 }, { n: 1 }],
      );
      assert.equal((await runtime.getJob(ids[2] as string))?.status, 'queued');
      g.release(0);
      await g.entered(3);
      assert.deepEqual(g.seen[2]?.input, { n: 2 });
      g.release(1);
      g.release(2);
      await g.entered(4);
      g.release(3);
      for (const id of ids) assert.equal((await runtime.waitForJob(id))?.status, 'completed');
      assert.equal(g.mostAtOnce(), 2, 'never more than queue.concurrency steps at once');
    });
  });

  it('refuses a malformed queue option', () => {
    for (const queue of [null, 1, { concurrency: 0 }, { concurrency: 1.5 }]) {
      assert.throws(() => new OperatorRuntime({ queue } as OperatorRuntimeOptions), {
        code: 'RUNTIME_OPTIONS_INVALID',
      });
    }
  });
});

describe('cancelJob', () => {
  for (const store of ['memory', 'sqlite'] as const) {
    it(`aborts a running step's signal with the reason, keeps a returned result, skips the rest (${store})`, async () => {
      await withRuntime(
        { store: store === 'memory' ? 'memory' : sqliteFile() },
        async (runtime) => {
          const g = gate();
          const after = gate();
          const [cap, later] = register(runtime, g.definition, after.definition) as [
            string,
            string,
          ];
          const { jobId } = await runtime.submitPlan(
            planOf({ id: 'a', capability: cap }, { id: 'b', capability: later }),
            { caller: ALICE },
          );
          await g.entered();
          const standing = await runtime.cancelJob(jobId, {
            caller: ALICE,
            reason: 'no longer needed',
          });
          // As it stands: the memory store holds the live record, which may have ended already.
          assert.ok(['executing', 'cancelled'].includes(standing?.status as string));
          const signal = g.seen[0]?.signal as AbortSignal;
          assert.equal(signal.aborted, true);
          assert.equal((signal.reason as { code?: string }).code, 'JOB_CANCELLED');
          assert.match((signal.reason as Error).message, /no longer needed/);
          const job = await runtime.waitForJob(jobId, { timeoutMs: 5000 });
          assert.equal(job?.status, 'cancelled');
          assert.deepEqual(
            job?.steps.map((step) => step.status),
            ['cancelled', 'skipped'],
          );
          assert.equal(after.seen.length, 0);
          const cancelled = job?.events.at(-1);
          assert.equal(cancelled?.type, 'job.cancelled');
          assert.deepEqual(cancelled?.data, {
            by: 'alice',
            reason: 'no longer needed',
            stepId: 'a',
          });
          assert.deepEqual((await runtime.verifyJob(jobId))?.ok, true);
        },
      );
    });
  }

  it('keeps the result of a step that ignored its signal and returned', async () => {
    await withRuntime({}, async (runtime) => {
      let release: (() => void) | undefined;
      const changes = new Changes();
      const [cap] = register(runtime, {
        execute: () =>
          new Promise((resolve) => {
            release = () => resolve({ finished: true });
            changes.changed();
          }),
      }) as [string];
      const { jobId } = await runtime.submitPlan(planOf({ id: 'a', capability: cap }), {
        caller: ALICE,
      });
      await changes.until(() => release !== undefined, { what: 'the step to start' });
      await runtime.cancelJob(jobId, { caller: ALICE });
      release?.();
      const job = await runtime.waitForJob(jobId);
      assert.equal(job?.status, 'cancelled');
      assert.equal(job?.steps[0]?.status, 'cancelled');
      assert.deepEqual(job?.steps[0]?.result, { finished: true });
      assert.deepEqual(job?.events.at(-1)?.data, { by: 'alice', stepId: 'a' });
      assert.equal((await runtime.verifyJob(jobId))?.ok, true);
    });
  });

  it('a queued job never starts', async () => {
    await withRuntime({ queue: { concurrency: 1 } }, async (runtime) => {
      const g = gate();
      const [cap] = register(runtime, g.definition) as [string];
      const first = await runtime.submitPlan(
        planOf({ id: 'a', capability: cap, input: { n: 1 } }),
        {
          caller: ALICE,
        },
      );
      const second = await runtime.submitPlan(
        planOf({ id: 'a', capability: cap, input: { n: 2 } }),
        {
          caller: ALICE,
        },
      );
      await g.entered();
      const cancelled = await runtime.cancelJob(second.jobId, { caller: ALICE, reason: 'dup' });
      assert.equal(cancelled?.status, 'cancelled');
      assert.deepEqual(
        cancelled?.steps.map((step) => step.status),
        ['skipped'],
      );
      assert.deepEqual(
        cancelled?.events.map((event) => event.type),
        ['job.created', 'job.cancelled'],
      );
      g.release(0);
      assert.equal((await runtime.waitForJob(first.jobId))?.status, 'completed');
      // The queue runs in submission order: once a job submitted after it has run, the cancelled
      // job's turn has passed.
      const third = await runtime.submitPlan(
        planOf({ id: 'a', capability: cap, input: { n: 3 } }),
        { caller: ALICE },
      );
      await g.entered(2);
      g.release(1);
      assert.equal((await runtime.waitForJob(third.jobId))?.status, 'completed');
      assert.deepEqual(
        g.seen.map((seen) => seen.input),
        [{ n: 1 }, { n: 3 }],
      );
      assert.equal((await runtime.getJob(second.jobId))?.status, 'cancelled');
      assert.equal((await runtime.verifyJob(second.jobId))?.ok, true);
    });
  });

  it('a job awaiting approval never runs, even when approved afterwards', async () => {
    await withRuntime({ approvals: { approver: { canApprove: () => true } } }, async (runtime) => {
      const invoked: unknown[] = [];
      const [write] = register(runtime, {
        risk: 'write',
        execute: ({ input }: { input: unknown }) => invoked.push(input),
      }) as [string];
      const job = await runtime.executePlan(planOf({ id: 'w', capability: write }), {
        caller: ALICE,
      });
      assert.equal(job.status, 'awaiting_approval');
      const cancelled = await runtime.cancelJob(job.id, {
        caller: ALICE,
        reason: 'changed my mind',
      });
      assert.equal(cancelled?.status, 'cancelled');
      assert.equal(cancelled?.steps[0]?.status, 'cancelled');
      const [request] = job.events.filter((event) => event.type === 'approval.requested');
      await assert.rejects(
        runtime.decideApproval({
          jobId: job.id,
          stepId: 'w',
          inputDigest: request?.data?.inputDigest as string,
          approver: { id: 'bob' },
          decision: 'approve',
        }),
        { code: 'APPROVAL_NOT_PENDING' },
      );
      assert.deepEqual(invoked, []);
      assert.equal((await runtime.verifyJob(job.id))?.ok, true);
    });
  });

  it('refuses another caller with CANCEL_FORBIDDEN; allows warrant:cancel in the same tenant, or the policy', async () => {
    await withRuntime({ queue: { concurrency: 1 } }, async (runtime) => {
      const g = gate();
      const [cap] = register(runtime, g.definition) as [string];
      await runtime.submitPlan(planOf({ id: 'a', capability: cap }), { caller: ALICE });
      await g.entered();
      const submit = async () =>
        (
          await runtime.submitPlan(planOf({ id: 'a', capability: cap }), {
            caller: { id: 'alice', tenant: 'acme' },
          })
        ).jobId;
      const jobId = await submit();
      await assert.rejects(runtime.cancelJob(jobId, { caller: { id: 'mallory' } }), {
        code: 'CANCEL_FORBIDDEN',
      });
      await assert.rejects(runtime.cancelJob(jobId, { caller: { id: 'alice' } }), {
        code: 'CANCEL_FORBIDDEN',
      });
      await assert.rejects(
        runtime.cancelJob(jobId, {
          caller: { id: 'ops', scopes: ['warrant:cancel'], tenant: 'other' },
        }),
        { code: 'CANCEL_FORBIDDEN' },
      );
      assert.equal((await runtime.getJob(jobId))?.status, 'queued');
      const byOps = await runtime.cancelJob(jobId, {
        caller: { id: 'ops', scopes: ['warrant:cancel'], tenant: 'acme' },
      });
      assert.deepEqual(byOps?.events.at(-1)?.data, { by: 'ops' });
      assert.equal(await runtime.cancelJob('job_unknown', { caller: ALICE }), undefined);
      await assert.rejects(runtime.cancelJob(jobId, {} as never), { code: 'JOB_OPTIONS_INVALID' });
      g.release(0);
    });
    await withRuntime({ cancelPolicy: (caller) => caller.id === 'root' }, async (runtime) => {
      const [cap] = register(runtime, { execute: () => 1 }) as [string];
      const job = await runtime.executePlan(planOf({ id: 'a', capability: cap }), {
        caller: ALICE,
      });
      assert.equal(
        (await runtime.cancelJob(job.id, { caller: { id: 'root' } }))?.status,
        'completed',
      );
    });
    // No policy crosses tenants (docs/api.md, "Reading and tenants"): a policy that allows any
    // caller holding `ops` is asked only about jobs of the caller's own tenant.
    await withRuntime(
      {
        queue: { concurrency: 1 },
        cancelPolicy: (caller) => caller.scopes?.includes('ops') === true,
      },
      async (runtime) => {
        const g = gate();
        const [cap] = register(runtime, g.definition) as [string];
        const { jobId } = await runtime.submitPlan(planOf({ id: 'a', capability: cap }), {
          caller: { id: 'alice', tenant: 'acme' },
        });
        await g.entered();
        for (const caller of [
          { id: 'eve', scopes: ['ops'], tenant: 'evil' },
          { id: 'eve', scopes: ['ops'] },
        ]) {
          await assert.rejects(runtime.cancelJob(jobId, { caller }), { code: 'CANCEL_FORBIDDEN' });
        }
        assert.equal((await runtime.getJob(jobId))?.status, 'executing');
        await runtime.cancelJob(jobId, {
          caller: { id: 'sam', scopes: ['ops'], tenant: 'acme' },
        });
        assert.equal((await runtime.waitForJob(jobId, { timeoutMs: 10_000 }))?.status, 'cancelled');
      },
    );
    assert.throws(() => new OperatorRuntime({ cancelPolicy: 1 } as never), {
      code: 'RUNTIME_OPTIONS_INVALID',
    });
  });

  it('cancels a job started by executePlan: its step signal aborts, executePlan resolves it cancelled', async () => {
    await withRuntime({}, async (runtime) => {
      const g = gate();
      const [cap] = register(runtime, g.definition) as [string];
      let jobId = '';
      runtime.subscribe('job.created', (event) => {
        jobId = event.jobId;
      });
      const running = runtime.executePlan(planOf({ id: 'a', capability: cap }), { caller: ALICE });
      await g.entered();
      await runtime.cancelJob(jobId, { caller: ALICE });
      const job = await running;
      assert.equal(job.status, 'cancelled');
      assert.equal(g.seen[0]?.signal.aborted, true);
    });
  });

  it('a step that reads its signal only after the cancel finds it aborted, with the reason', async () => {
    await withRuntime({}, async (runtime) => {
      let release: () => void = () => {};
      let entered = false;
      const changes = new Changes();
      const read: AbortSignal[] = [];
      const [cap] = register(runtime, {
        execute: ({ context }: { context: ExecutionContext }) =>
          new Promise((resolve) => {
            entered = true;
            changes.changed();
            release = () => {
              read.push(context.signal, context.signal);
              resolve(1);
            };
          }),
      }) as [string];
      const running = runtime.submitPlan(planOf({ id: 'a', capability: cap }), { caller: ALICE });
      const { jobId } = await running;
      await changes.until(() => entered, { what: 'the step to start' });
      await runtime.cancelJob(jobId, { caller: ALICE, reason: 'late reader' });
      release();
      const job = await runtime.waitForJob(jobId, { timeoutMs: 5000 });
      assert.equal(job?.status, 'cancelled');
      assert.equal(read[0], read[1], 'one signal per job');
      assert.equal(read[0]?.aborted, true);
      assert.match((read[0]?.reason as Error).message, /late reader/);
    });
  });
});

describe('idempotency keys', () => {
  it('a repeat of the same plan is the first job and runs nothing; another plan is IDEMPOTENCY_CONFLICT', async () => {
    await withRuntime({}, async (runtime) => {
      const keys: unknown[] = [];
      const [cap] = register(runtime, {
        execute: ({ context }: { context: ExecutionContext }) => keys.push(context.idempotencyKey),
      }) as [string];
      const plan = { ...planOf({ id: 'a', capability: cap }), idempotencyKey: 'k1' };
      const first = await runtime.submitPlan(plan, { caller: ALICE });
      assert.equal(first.replayed, false);
      const again = await runtime.submitPlan(plan, { caller: ALICE });
      assert.deepEqual(again, { jobId: first.jobId, replayed: true });
      await assert.rejects(
        runtime.submitPlan(
          { ...planOf({ id: 'b', capability: cap }), idempotencyKey: 'k1' },
          {
            caller: ALICE,
          },
        ),
        { code: 'IDEMPOTENCY_CONFLICT' },
      );
      // The same key is another caller's own, and a tenant's own.
      const bob = await runtime.submitPlan(plan, { caller: { id: 'bob' } });
      const acme = await runtime.submitPlan(plan, { caller: { id: 'alice', tenant: 'acme' } });
      assert.equal(new Set([first.jobId, bob.jobId, acme.jobId]).size, 3);
      // The option wins over the plan's key.
      const other = await runtime.submitPlan(plan, { caller: ALICE, idempotencyKey: 'k2' });
      assert.equal(other.replayed, false);
      assert.equal((await runtime.getJob(other.jobId))?.idempotencyKey, 'k2');
      // executePlan: the first job, nothing run.
      const executed = await runtime.executePlan(plan, { caller: ALICE });
      assert.equal(executed.id, first.jobId);
      for (const id of [first.jobId, bob.jobId, acme.jobId, other.jobId])
        assert.equal((await runtime.waitForJob(id))?.status, 'completed');
      assert.equal(keys.length, 4);
      assert.ok(keys.includes(`${first.jobId}:a`));
      assert.equal((await runtime.listJobs()).length, 4);
    });
  });

  it('is not enforced without a caller id, and ends after idempotencyTtlMs', async () => {
    await withRuntime({}, async (runtime) => {
      const [cap] = register(runtime, { execute: () => 1 }) as [string];
      const plan = { ...planOf({ id: 'a', capability: cap }), idempotencyKey: 'k' };
      const anonymous = [await runtime.submitPlan(plan), await runtime.submitPlan(plan)];
      assert.notEqual(anonymous[0]?.jobId, anonymous[1]?.jobId);
      const first = await runtime.submitPlan(plan, { caller: ALICE });
      assert.equal((await runtime.submitPlan(plan, { caller: ALICE })).jobId, first.jobId);
    });
    // Only a lower bound is waited for (a loaded machine can take longer, never shorter).
    await withRuntime({ idempotencyTtlMs: 30 }, async (runtime) => {
      const [cap] = register(runtime, { execute: () => 1 }) as [string];
      const plan = { ...planOf({ id: 'a', capability: cap }), idempotencyKey: 'k' };
      const first = await runtime.submitPlan(plan, { caller: ALICE });
      await new Promise((resolve) => setTimeout(resolve, 40));
      assert.notEqual((await runtime.submitPlan(plan, { caller: ALICE })).jobId, first.jobId);
    });
    assert.throws(() => new OperatorRuntime({ idempotencyTtlMs: 0 }), {
      code: 'RUNTIME_OPTIONS_INVALID',
    });
  });

  it("gives every step context.idempotencyKey: the step's own key, else <jobId>:<stepId>", async () => {
    await withRuntime({}, async (runtime) => {
      const keys: unknown[] = [];
      const [cap] = register(runtime, {
        execute: ({ context }: { context: ExecutionContext }) => keys.push(context.idempotencyKey),
      }) as [string];
      const job = await runtime.executePlan({
        version: '1.0',
        steps: [
          { id: 'a', capability: cap, input: {} },
          { id: 'b', capability: cap, input: {}, idempotencyKey: 'pay-7' },
        ],
      });
      assert.deepEqual(keys, [`${job.id}:a`, 'pay-7']);
    });
  });
});

describe('retries', () => {
  it('invokes again after a throw, authorizing each attempt, with capability.retrying; the same idempotency key', async () => {
    const asked: number[] = [];
    let calls = 0;
    await withRuntime(
      {
        authorizer: {
          authorize: () => {
            asked.push(calls);
            return { decision: 'allow' };
          },
        },
      },
      async (runtime) => {
        const keys: unknown[] = [];
        const [flaky] = register(runtime, {
          retry: { attempts: 3, backoffMs: 1, idempotent: true },
          execute: ({ context }: { context: ExecutionContext }) => {
            keys.push(context.idempotencyKey);
            calls++;
            if (calls < 3) throw new Error(`flake ${calls}`);
            return 'third time';
          },
        }) as [string];
        const job = await runtime.executePlan(planOf({ id: 'f', capability: flaky }));
        assert.equal(job.status, 'completed');
        assert.equal(job.result, 'third time');
        assert.deepEqual(asked, [0, 1, 2], 'authorized before each invocation');
        assert.deepEqual(keys, [`${job.id}:f`, `${job.id}:f`, `${job.id}:f`]);
        const retrying = job.events.filter((event) => event.type === 'capability.retrying');
        assert.deepEqual(
          retrying.map((event) => event.data),
          [
            { stepId: 'f', attempt: 2, error: 'flake 1' },
            { stepId: 'f', attempt: 3, error: 'flake 2' },
          ],
        );
        assert.equal((await runtime.verifyJob(job.id))?.ok, true);
      },
    );
  });

  it('stops after attempts, never retries a denial, and a denied retry ends the step denied', async () => {
    let allow = 2;
    await withRuntime(
      { authorizer: { authorize: () => ({ decision: allow-- > 0 ? 'allow' : 'deny' }) } },
      async (runtime) => {
        let calls = 0;
        const [failing] = register(runtime, {
          retry: { attempts: 5, idempotent: true },
          execute: () => {
            calls++;
            throw new Error('down');
          },
        }) as [string];
        const job = await runtime.executePlan(planOf({ id: 'x', capability: failing }));
        assert.equal(calls, 2);
        assert.equal(job.status, 'failed');
        assert.equal(job.events.at(-2)?.type, 'capability.denied');
      },
    );
    await withRuntime({}, async (runtime) => {
      let calls = 0;
      const [failing] = register(runtime, {
        retry: { attempts: 2, idempotent: true },
        execute: () => {
          calls++;
          throw new Error('down');
        },
      }) as [string];
      const job = await runtime.executePlan(planOf({ id: 'x', capability: failing }));
      assert.equal(calls, 2);
      assert.equal(job.steps[0]?.error, 'down');
    });
  });

  it('refuses a retry without idempotent: true, or attempts not an integer from 1 to 100, at definition', async () => {
    const { createCapability } = await import('../../src/index.js');
    for (const retry of [
      { attempts: 3 },
      { attempts: 3, idempotent: false },
      { attempts: 0, idempotent: true },
      { attempts: 101, idempotent: true },
      { attempts: 1.5, idempotent: true },
      { attempts: 2, idempotent: true, backoffMs: -1 },
      'often',
    ]) {
      assert.throws(
        () =>
          createCapability({
            name: 'retry.bad',
            version: '1.0.0',
            description: 'x',
            risk: 'read',
            retry: retry as never,
            execute: () => 1,
          }),
        { code: 'CAPABILITY_DEFINITION_INVALID' },
      );
    }
  });
});
