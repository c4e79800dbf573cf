import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setImmediate as turn } from 'node:timers/promises';
import { createCapability, type CapabilityMiddleware } from '../../src/index.js';
import { testContext as context } from '../support/execution-context.js';
import { register, runtimeWith } from '../support/runtime-fixtures.js';
import { within } from '../support/wait.js';

/**
 * Runs `body` and collects the rejections that went unhandled meanwhile (the suite's guard,
 * test/support/unhandled-rejection-guard.ts, also fails the process for each of them).
 */
async function unhandledDuring(body: () => Promise<void>): Promise<unknown[]> {
  const seen: unknown[] = [];
  const listener = (reason: unknown) => seen.push(reason);
  process.on('unhandledRejection', listener);
  try {
    await body();
    // Unhandled rejections are reported once the microtask queue drains: give it two turns.
    await turn();
    await turn();
  } finally {
    process.off('unhandledRejection', listener);
  }
  return seen;
}

const base = { name: 'make.test', version: '1', description: 'd', risk: 'read' as const };

describe('createCapability()', () => {
  it('takes a cost (a finite non-negative number) and refuses anything else', () => {
    const base = {
      name: 'c',
      version: '1',
      description: 'd',
      risk: 'read' as const,
      execute: () => 1,
    };
    assert.doesNotThrow(() => createCapability({ ...base, cost: 0 }));
    assert.doesNotThrow(() => createCapability({ ...base, cost: 2.5 }));
    for (const cost of [-1, Number.NaN, Number.POSITIVE_INFINITY, '1', null]) {
      assert.throws(() => createCapability({ ...base, cost: cost as number }), {
        name: 'TypeError',
        code: 'CAPABILITY_DEFINITION_INVALID',
        message: new RegExp(
          `^createCapability\\(\\) "c": cost must be a finite non-negative number, got `,
        ),
      });
    }
  });

  it('returns a frozen Capability whose execute(input, context) calls definition.execute({ input, context })', async () => {
    let seen: unknown;
    const capability = createCapability({
      ...base,
      execute: (execution) => ((seen = execution), 'out'),
    });
    const ctx = context();
    assert.equal(await capability.execute({ a: 1 }, ctx), 'out');
    assert.deepEqual(seen, { input: { a: 1 }, context: ctx });
    assert.ok(Object.isFrozen(capability));
    assert.deepEqual(Object.keys(capability).sort(), [
      'description',
      'execute',
      'inputSchema',
      'name',
      'risk',
      'version',
    ]);
  });

  it('runs lifecycle logging, then the timeout, then user middleware, outermost first', async () => {
    const order: string[] = [];
    const logger = {
      debug: (m: string) => order.push(`log:${m}`),
      info: (m: string) => order.push(`log:${m}`),
      warn() {},
      error() {},
    };
    const layer = (name: string): CapabilityMiddleware => ({
      async execute(execution, next) {
        order.push(`${name}:in`);
        const result = await next();
        order.push(`${name}:out`);
        return result;
      },
    });
    const capability = createCapability({
      ...base,
      timeoutMs: 1000,
      middleware: [layer('first'), layer('second')],
      execute: () => order.push('execute'),
    });
    await capability.execute({}, context({ logger }));
    assert.deepEqual(order, [
      'log:capability started',
      'first:in',
      'second:in',
      'execute',
      'second:out',
      'first:out',
      'log:capability completed',
    ]);
  });

  it('lets middleware pass a modified execution to next()', async () => {
    const capability = createCapability({
      ...base,
      lifecycleLogging: false,
      middleware: [
        { execute: (execution, next) => next({ ...execution, input: { changed: true } }) },
      ],
      execute: ({ input }) => input,
    });
    assert.deepEqual(await capability.execute({ changed: false }, context()), { changed: true });
  });

  it('fails with MIDDLEWARE_NEXT_CALLED_TWICE when a middleware calls next() twice', async () => {
    let runs = 0;
    const capability = createCapability({
      ...base,
      lifecycleLogging: false,
      middleware: [{ execute: async (_execution, next) => (await next(), next()) }],
      execute: () => ++runs,
    });
    await assert.rejects(Promise.resolve(capability.execute({}, context())), {
      code: 'MIDDLEWARE_NEXT_CALLED_TWICE',
    });
    assert.equal(runs, 1);
  });

  it('never lets a second next() end the process: it rejects (handled) and fails the step', async () => {
    let runs = 0;
    const runtime = runtimeWith();
    const [name] = register(runtime, {
      middleware: [
        {
          execute: (_execution, next) => {
            const first = next();
            void next(); // dropped: today an unhandled rejection that ends the process
            return first;
          },
        },
      ],
      execute: () => ++runs,
    });
    let job: Awaited<ReturnType<typeof runtime.executePlan>> | undefined;
    const unhandled = await unhandledDuring(async () => {
      job = await runtime.executePlan({
        version: '1.0',
        steps: [{ id: 'a', capability: name as string }],
      });
    });
    assert.deepEqual(unhandled, []);
    assert.equal(runs, 1);
    assert.equal(job?.status, 'failed');
    assert.match(job?.error ?? '', /called next\(\) more than once/);
    await runtime.close();
  });

  it('never lets a dropped next() whose capability throws end the process', async () => {
    const capability = createCapability({
      ...base,
      lifecycleLogging: false,
      middleware: [
        {
          execute: (_execution, next) => {
            void next(); // dropped, and the capability rejects
            return 'answered by the middleware';
          },
        },
      ],
      execute: () => {
        throw new Error('capability failed');
      },
    });
    let result: unknown;
    const unhandled = await unhandledDuring(async () => {
      result = await capability.execute({}, context());
    });
    assert.deepEqual(unhandled, []);
    assert.equal(result, 'answered by the middleware');
  });

  it('keeps the first outcome when next() is called again after the step settled', async () => {
    let late: Promise<unknown> | undefined;
    let calledAgain: () => void = () => {};
    const again = new Promise<void>((resolve) => (calledAgain = resolve));
    const capability = createCapability({
      ...base,
      lifecycleLogging: false,
      middleware: [
        {
          execute: (_execution, next) => {
            const first = next();
            setTimeout(() => {
              late = next();
              calledAgain();
            }, 0);
            return first;
          },
        },
      ],
      execute: () => 'first',
    });
    let result: unknown;
    const unhandled = await unhandledDuring(async () => {
      result = await capability.execute({}, context());
      await within(again, { what: 'the second call of next()' });
    });
    assert.deepEqual(unhandled, []);
    assert.equal(result, 'first');
    await assert.rejects(late as Promise<unknown>, { code: 'MIDDLEWARE_NEXT_CALLED_TWICE' });
  });

  it("with the runtime's silent logger, lifecycle logging steps aside: user middleware still runs, a synchronous throw still fails the step", async () => {
    const runtime = runtimeWith();
    const seen: string[] = [];
    const [wrapped, throwing] = register(
      runtime,
      {
        lifecycleLogging: true,
        middleware: [
          {
            execute: (execution, next) => {
              seen.push(execution.capability.name);
              return next();
            },
          } satisfies CapabilityMiddleware,
        ],
        execute: () => 'wrapped',
      },
      {
        lifecycleLogging: true,
        execute: () => {
          throw new Error('sync');
        },
      },
    ) as [string, string];
    const ok = await runtime.executePlan({
      version: '1.0',
      steps: [{ id: 'a', capability: wrapped }],
    });
    assert.equal(ok.result, 'wrapped');
    assert.deepEqual(seen, [wrapped]);
    const failed = await runtime.executePlan({
      version: '1.0',
      steps: [{ id: 'b', capability: throwing }],
    });
    assert.equal(failed.status, 'failed');
    assert.equal(failed.steps[0]?.error, 'sync');
  });

  it('turns a synchronous throw of execute into a rejection', async () => {
    const capability = createCapability({
      ...base,
      lifecycleLogging: false,
      execute: () => {
        throw new Error('sync');
      },
    });
    const outcome = capability.execute({}, context());
    assert.ok(outcome instanceof Promise, 'a promise, not a throw');
    await assert.rejects(outcome, /sync/);
  });

  it('without middleware, calls definition.execute({ input, context }) with the definition as this, and returns a promise', async () => {
    let seen: unknown;
    const selves: unknown[] = [];
    const definition = {
      ...base,
      lifecycleLogging: false,
      execute(this: unknown, execution: unknown) {
        seen = execution;
        selves.push(this);
        return { out: 1 };
      },
    };
    const capability = createCapability(definition);
    const ctx = context();
    const outcome = capability.execute({ a: 1 }, ctx);
    assert.ok(outcome instanceof Promise);
    assert.deepEqual(await outcome, { out: 1 });
    assert.deepEqual(seen, { input: { a: 1 }, context: ctx });
    assert.deepEqual(selves.length, 1);
    assert.equal(selves[0], definition);
    const thenable = createCapability({
      ...base,
      lifecycleLogging: false,
      execute: () => ({ then: (resolve: (value: string) => void) => resolve('adopted') }) as never,
    });
    assert.equal(await thenable.execute({}, ctx), 'adopted');
  });

  it('refuses a timeoutMs that setTimeout cannot honour: above 2^31-1, fractional, negative or NaN', () => {
    for (const timeoutMs of [2 ** 31, 2 ** 40, Number.MAX_SAFE_INTEGER, 1.5, -5, NaN, '10']) {
      assert.throws(
        () => createCapability({ ...base, timeoutMs: timeoutMs as number, execute: () => 1 }),
        (error: Error & { code?: string }) => {
          assert.equal(error.code, 'CAPABILITY_DEFINITION_INVALID');
          assert.match(error.message, /timeoutMs must be an integer from 1 to 2147483647/);
          return true;
        },
        String(timeoutMs),
      );
    }
    assert.ok(createCapability({ ...base, timeoutMs: 2 ** 31 - 1, execute: () => 1 }));
  });

  it('rejects malformed definitions with CAPABILITY_DEFINITION_INVALID', () => {
    const bad: Record<string, unknown>[] = [
      { ...base, lifecycleLogging: 'yes' },
      { ...base, middleware: {} },
      { ...base, middleware: [{}] },
      { ...base, timeoutMs: 0 },
      { ...base, timeoutMs: Infinity },
      { ...base, risk: 'unknown' },
      { ...base, execute: undefined },
    ];
    for (const definition of bad) {
      assert.throws(() => createCapability({ execute: () => 1, ...definition } as never), {
        name: 'TypeError',
        code: 'CAPABILITY_DEFINITION_INVALID',
      });
    }
  });
});
