import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { RuntimeEvent } from '../../src/index.js';
import { register, runtimeWith } from '../support/runtime-fixtures.js';

function oneStepPlan(capability: string) {
  return { version: '1.0' as const, steps: [{ id: 'only', capability }] };
}

describe('OperatorRuntime#subscribe()', () => {
  it('delivers events of one type, or all with "*", and stops after unsubscribe (idempotent)', async () => {
    const runtime = runtimeWith();
    const [name] = register(runtime, { execute: () => 1 });
    const completed: RuntimeEvent[] = [];
    const all: RuntimeEvent[] = [];
    const stop = runtime.subscribe('capability.completed', (event) => {
      completed.push(event);
    });
    runtime.subscribe('*', (event) => {
      all.push(event);
    });
    const job = await runtime.executePlan(oneStepPlan(name as string));
    assert.equal(completed.length, 1);
    assert.equal(all.length, 5);
    assert.match(String(job.events[3]?.data?.resultDigest), /^sha256:[0-9a-f]{64}$/);
    assert.deepEqual(completed[0], {
      id: job.events[3]?.id,
      type: 'capability.completed',
      timestamp: job.events[3]?.timestamp,
      jobId: job.id,
      stepId: 'only',
      data: {
        stepId: 'only',
        capability: name,
        resultDigest: job.events[3]?.data?.resultDigest,
      },
    });
    stop();
    stop();
    await runtime.executePlan(oneStepPlan(name as string));
    assert.equal(completed.length, 1);
    assert.equal(all.length, 10);
  });

  it('rejects unknown event types and non-function handlers with SUBSCRIPTION_INVALID', () => {
    const runtime = runtimeWith();
    assert.throws(() => runtime.subscribe('job.exploded' as never, () => {}), {
      name: 'TypeError',
      code: 'SUBSCRIPTION_INVALID',
    });
    assert.throws(() => runtime.subscribe('*', 'nope' as never), { code: 'SUBSCRIPTION_INVALID' });
  });

  it('awaits every handler before execution goes on, running handlers of one event concurrently', async () => {
    const runtime = runtimeWith();
    const order: string[] = [];
    const [name] = register(runtime, { execute: () => order.push('capability') });
    let concurrent = 0;
    let maxConcurrent = 0;
    const slow = async () => {
      concurrent++;
      maxConcurrent = Math.max(maxConcurrent, concurrent);
      await new Promise((resolve) => setTimeout(resolve, 5));
      concurrent--;
    };
    runtime.subscribe('capability.started', async () => {
      await slow();
      order.push('observer-a');
    });
    runtime.subscribe('capability.started', async () => {
      await slow();
      order.push('observer-b');
    });
    await runtime.executePlan(oneStepPlan(name as string));
    assert.deepEqual(order.slice(0, 2).sort(), ['observer-a', 'observer-b']);
    assert.equal(order[2], 'capability');
    assert.equal(maxConcurrent, 2);
  });

  it('contains a sync throw and an async rejection: same outcome, others still delivered, errors reported', async () => {
    const reported: { error: unknown; type: string }[] = [];
    const runtime = runtimeWith({
      onObserverError: (error, event) => reported.push({ error, type: event.type }),
    });
    const [name] = register(runtime, { execute: () => 'ok' });
    const delivered: string[] = [];
    runtime.subscribe('*', () => {
      throw new Error('sync observer bug');
    });
    runtime.subscribe('*', async () => {
      throw new Error('async observer bug');
    });
    runtime.subscribe('*', (event) => {
      delivered.push(event.type);
    });
    const job = await runtime.executePlan(oneStepPlan(name as string));
    assert.equal(job.status, 'completed');
    assert.equal(job.result, 'ok');
    assert.equal(delivered.length, 5);
    assert.equal(reported.length, 10);
    assert.deepEqual(
      new Set(reported.map((entry) => (entry.error as Error).message)),
      new Set(['sync observer bug', 'async observer bug']),
    );
  });

  it('lets a handler unsubscribe another mid-publication: the current event still reaches it, later ones do not', async () => {
    const runtime = runtimeWith();
    const [name] = register(runtime, { execute: () => 1 });
    const seenByVictim: string[] = [];
    let stopVictim: () => void = () => {};
    runtime.subscribe('*', (event) => {
      if (event.type === 'execution.started') stopVictim();
    });
    stopVictim = runtime.subscribe('*', (event) => {
      seenByVictim.push(event.type);
    });
    const job = await runtime.executePlan(oneStepPlan(name as string));
    assert.equal(job.status, 'completed');
    assert.deepEqual(seenByVictim, ['job.created', 'execution.started']);
  });

  it('survives hostile handler returns: a thenable whose then throws, a promise with a throwing constructor getter', async () => {
    const reported: unknown[] = [];
    const runtime = runtimeWith({ onObserverError: (error) => reported.push(error) });
    const [name] = register(runtime, { execute: () => 1 });
    runtime.subscribe('job.created', () => {
      return {
        then() {
          throw new Error('then exploded');
        },
      } as never;
    });
    runtime.subscribe('job.completed', () => {
      const promise = Promise.resolve();
      Object.defineProperty(promise, 'constructor', {
        get() {
          throw new Error('constructor getter exploded');
        },
      });
      return promise;
    });
    const job = await runtime.executePlan(oneStepPlan(name as string));
    assert.equal(job.status, 'completed');
    assert.equal(reported.length, 2);
  });

  it('keeps going when onObserverError itself throws', async () => {
    const runtime = runtimeWith({
      onObserverError: () => {
        throw new Error('reporter broken');
      },
    });
    const [name] = register(runtime, { execute: () => 1 });
    runtime.subscribe('*', () => Promise.reject(new Error('observer')));
    const job = await runtime.executePlan(oneStepPlan(name as string));
    assert.equal(job.status, 'completed');
  });

  it('survives an async onObserverError that rejects or returns a hostile thenable: no unhandled rejection', async () => {
    const unhandled: unknown[] = [];
    const record = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', record);
    try {
      let calls = 0;
      const runtime = runtimeWith({
        onObserverError: async () => {
          calls++;
          await Promise.resolve();
          throw new Error('reporter rejected');
        },
      });
      const hostile = runtimeWith({
        onObserverError: (() =>
          ({
            then() {
              throw new Error('hostile then');
            },
          }) as unknown as Promise<void>) as never,
      });
      const [name] = register(runtime, { execute: () => 1 });
      runtime.subscribe('*', () => Promise.reject(new Error('observer')));
      hostile.subscribe('*', () => {
        throw new Error('observer');
      });
      const job = await runtime.executePlan(oneStepPlan(name as string));
      const other = await hostile.executePlan(oneStepPlan(name as string));
      assert.equal(job.status, 'completed');
      assert.equal(other.status, 'completed');
      assert.equal(calls, job.events.length);
      // Unhandled rejections are reported after the microtask queue drains: wait two turns.
      for (let turn = 0; turn < 2; turn++) await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(unhandled, []);
    } finally {
      process.off('unhandledRejection', record);
    }
  });

  it('warns on one line by default when an observer fails', async (t) => {
    const warnings: string[] = [];
    t.mock.method(console, 'warn', (message: string) => warnings.push(message));
    const runtime = runtimeWith();
    const [name] = register(runtime, { execute: () => 1 });
    runtime.subscribe('job.completed', () => {
      throw new Error('multi\nline\nproblem');
    });
    await runtime.executePlan(oneStepPlan(name as string));
    assert.deepEqual(warnings, [
      'warrant: observer of job.completed failed (ignored): multi line problem',
    ]);
  });
});
