// docs/api.md, "Calling conventions": a capability object handed to use() as it is declares
// timeoutMs, retry and cost under exactly the rules of createCapability, and they are honoured.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { defineModule, OperatorRuntime, type Capability } from '../../src/index.js';

const unique = (stem: string) => `${stem}.${randomUUID().slice(0, 8)}`;

function plain(fields: Record<string, unknown>): Capability {
  return {
    name: unique('plain'),
    version: '1.0.0',
    description: 'a capability object given to use() as it is',
    risk: 'read',
    inputSchema: {},
    execute: () => 'ok',
    ...fields,
  } as Capability;
}

const use = (runtime: OperatorRuntime, capability: Capability) =>
  runtime.use(defineModule(unique('module'), '1.0.0', [capability]));

const planOf = (capability: string, steps: number) => ({
  version: '1.0' as const,
  steps: Array.from({ length: steps }, (_, index) => ({ id: `s${index}`, capability, input: {} })),
});

describe('a plain capability object', () => {
  it('counts its declared cost under a cost limit', async () => {
    let invoked = 0;
    const runtime = new OperatorRuntime({
      limits: [{ name: 'budget', per: 'global', max: 10, windowMs: 3_600_000, cost: true }],
    });
    const capability = plain({ cost: 5, execute: () => ++invoked });
    try {
      use(runtime, capability);
      const job = await runtime.executePlan(planOf(capability.name, 10));
      assert.equal(job.status, 'failed');
      assert.equal(invoked, 2);
      assert.equal(job.steps[2]?.error, 'limit budget: 15/10 in 1h');
    } finally {
      await runtime.close();
    }
  });

  it('retries as declared, with the same idempotency key', async () => {
    const keys: unknown[] = [];
    const runtime = new OperatorRuntime();
    const capability = plain({
      retry: { attempts: 3, idempotent: true },
      execute: (_input: unknown, context: { idempotencyKey: string }) => {
        keys.push(context.idempotencyKey);
        if (keys.length < 3) throw new Error('not yet');
        return 'third time';
      },
    });
    try {
      use(runtime, capability);
      const job = await runtime.executePlan(planOf(capability.name, 1));
      assert.equal(job.status, 'completed');
      assert.equal(job.steps[0]?.result, 'third time');
      assert.equal(keys.length, 3);
      assert.equal(new Set(keys).size, 1);
    } finally {
      await runtime.close();
    }
  });

  it('is bounded by its timeoutMs, and its signal aborts', async () => {
    let signal: AbortSignal | undefined;
    const runtime = new OperatorRuntime();
    const capability = plain({
      timeoutMs: 20,
      execute: (_input: unknown, context: { signal: AbortSignal }) => {
        signal = context.signal;
        return new Promise(() => {});
      },
    });
    try {
      use(runtime, capability);
      const job = await runtime.executePlan(planOf(capability.name, 1));
      assert.equal(job.status, 'failed');
      assert.equal(job.steps[0]?.error, 'Capability execution timed out after 20ms');
      assert.equal(signal?.aborted, true);
    } finally {
      await runtime.close();
    }
  });

  it('is refused what createCapability refuses, and middleware it cannot apply', () => {
    const runtime = new OperatorRuntime();
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ retry: { attempts: 5 } }, /retry needs idempotent: true/],
      [{ retry: { attempts: 0, idempotent: true } }, /retry.attempts must be an integer/],
      [{ retry: 3 }, /retry must be an object/],
      [{ cost: -1 }, /cost must be a finite non-negative number/],
      [{ cost: '5' }, /cost must be a finite non-negative number/],
      [{ timeoutMs: 0 }, /timeoutMs must be an integer from 1/],
      [{ middleware: [] }, /middleware is applied only by createCapability\(\)/],
      [{ lifecycleLogging: false }, /lifecycleLogging is applied only by createCapability\(\)/],
    ];
    for (const [fields, message] of cases) {
      const capability = plain(fields);
      assert.throws(() => use(runtime, capability), {
        code: 'CAPABILITY_DEFINITION_INVALID',
        message,
      });
      assert.equal(
        runtime.listCapabilities().some((entry) => entry.name === capability.name),
        false,
      );
    }
  });
});
