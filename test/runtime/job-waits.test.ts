// Waiting for a job (docs/api.md, "runtime.waitForJob", "Idempotency"): executePlan says which
// submission replayed (`onReplay`), and a job running in this runtime is waited for by its end,
// the store read once then, not polled.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MemoryJobStore } from '../../src/stores/memory/memory-store.js';
import { runtimeOnStore } from '../../src/runtime/operator-runtime.js';
import type { ExecutionCaller, OperatorRuntime } from '../../src/index.js';
import { countingStore } from '../support/counting-store.js';
import { gate, planOf, register, withRuntime } from '../support/runtime-fixtures.js';
import { within } from '../support/wait.js';

const ALICE: ExecutionCaller = { id: 'alice' };

/** A runtime on a memory store whose reads are counted. */
async function withCountedRuntime<T>(
  use: (runtime: OperatorRuntime, counted: ReturnType<typeof countingStore>) => Promise<T>,
): Promise<T> {
  const counted = countingStore(new MemoryJobStore(1000));
  const runtime = runtimeOnStore(counted.store);
  try {
    return await use(runtime, counted);
  } finally {
    await runtime.close();
  }
}

describe('executePlan: onReplay', () => {
  it('is told the first job when a key repeats for the same plan, which runs nothing', async () => {
    await withRuntime({}, async (runtime) => {
      let runs = 0;
      const [cap] = register(runtime, { execute: () => ++runs }) as [string];
      const plan = { ...planOf({ id: 'a', capability: cap }), idempotencyKey: 'k1' };
      const replays: string[] = [];
      const onReplay = (jobId: string) => replays.push(jobId);
      const first = await runtime.executePlan(plan, { caller: ALICE, onReplay });
      assert.deepEqual(replays, []);
      const again = await runtime.executePlan(plan, { caller: ALICE, onReplay });
      assert.deepEqual(replays, [first.id]);
      assert.equal(again.id, first.id);
      assert.equal(again.status, 'completed');
      assert.equal(runs, 1);
      // Another caller's key is its own: a new job, no replay.
      await runtime.executePlan(plan, { caller: { id: 'bob' }, onReplay });
      assert.deepEqual(replays, [first.id]);
    });
  });

  it('a replay of a job still running resolves at its end, the store read once', async () => {
    await withCountedRuntime(async (runtime, counted) => {
      const held = gate();
      const [cap] = register(runtime, held.definition) as [string];
      const plan = { ...planOf({ id: 'a', capability: cap }), idempotencyKey: 'k1' };
      const first = runtime.executePlan(plan, { caller: ALICE });
      await held.entered(1);
      counted.reset();
      let replayed: string | undefined;
      const again = runtime.executePlan(plan, {
        caller: ALICE,
        onReplay: (jobId) => {
          replayed = jobId;
        },
      });
      // Polling would have read the running job by now; the wait reads nothing until its end.
      await new Promise(setImmediate);
      const readWhileRunning = counted.rows();
      held.release(0);
      assert.equal(readWhileRunning, 0, 'the running first job was read');
      const [done, replay] = await within(Promise.all([first, again]), {
        what: 'the first job and its replay',
      });
      assert.equal(replayed, done.id);
      assert.equal(replay.id, done.id);
      assert.equal(replay.status, 'completed');
      assert.equal(counted.rows(), 1);
    });
  });

  it('refuses an onReplay that is not a function: EXECUTE_OPTIONS_INVALID', async () => {
    await withRuntime({}, async (runtime) => {
      const [cap] = register(runtime, { execute: () => 1 }) as [string];
      await assert.rejects(
        runtime.executePlan(planOf({ id: 'a', capability: cap }), {
          caller: ALICE,
          onReplay: 'yes' as never,
        }),
        { code: 'EXECUTE_OPTIONS_INVALID', message: /options\.onReplay must be a function/ },
      );
    });
  });
});

describe('waitForJob', () => {
  it('waits for a job running here by its end: no read until then, one read after', async () => {
    await withCountedRuntime(async (runtime, counted) => {
      const held = gate();
      const [cap] = register(runtime, held.definition) as [string];
      const ids: string[] = [];
      runtime.subscribe('job.created', (event) => {
        ids.push(event.jobId);
      });
      const running = runtime.executePlan(planOf({ id: 'a', capability: cap }));
      await held.entered(1);
      counted.reset();
      const waited = runtime.waitForJob(ids[0] as string);
      await new Promise(setImmediate);
      const readWhileRunning = counted.rows();
      held.release(0);
      assert.equal(readWhileRunning, 0, 'the running job was read');
      const job = await within(waited, { what: 'waitForJob' });
      assert.equal(job?.status, 'completed');
      assert.equal(counted.rows(), 1);
      await running;
    });
  });

  it('with timeoutMs, answers the job as it stands when the time is up', async () => {
    await withRuntime({}, async (runtime) => {
      const held = gate();
      const [cap] = register(runtime, held.definition) as [string];
      const { jobId } = await runtime.submitPlan(planOf({ id: 'a', capability: cap }));
      await held.entered(1);
      const job = await within(runtime.waitForJob(jobId, { timeoutMs: 1 }), {
        what: 'waitForJob with timeoutMs 1',
      });
      assert.equal(job?.status, 'executing');
      const aborted = new AbortController();
      const waiting = runtime.waitForJob(jobId, { signal: aborted.signal });
      aborted.abort(new Error('stop'));
      await assert.rejects(waiting, { message: 'stop' });
      held.release(0);
      assert.equal((await runtime.waitForJob(jobId))?.status, 'completed');
    });
  });
});
