// Fault injection (issue 9): hostile authorizers, observers and capabilities. Whatever they do,
// nothing unauthorized runs, the job records what happened, and the process survives.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createCapability } from '../../src/index.js';
import {
  recordEvents,
  recordingAuthorizer,
  register,
  runtimeWith,
} from '../support/runtime-fixtures.js';
import { within } from '../support/wait.js';

function oneStep(capability: string, input?: unknown) {
  return { version: '1.0' as const, steps: [{ id: 'only', capability, input }] };
}

describe('fault injection: authorizers', () => {
  const hostileDecisions: [string, () => unknown][] = [
    [
      'a proxy whose getOwnPropertyDescriptor trap throws',
      () =>
        new Proxy(
          {},
          {
            getOwnPropertyDescriptor: () => {
              throw new Error('trap');
            },
          },
        ),
    ],
    [
      'a proxy that reports allow through get but owns nothing',
      () => new Proxy({}, { get: () => 'allow' }),
    ],
    [
      'a proxy whose descriptor flips between reads',
      () => {
        let reads = 0;
        return new Proxy(
          { decision: 'deny' },
          {
            getOwnPropertyDescriptor: (target, key) => {
              reads++;
              return key === 'decision'
                ? {
                    value: reads === 1 ? 'deny' : 'allow',
                    writable: true,
                    enumerable: true,
                    configurable: true,
                  }
                : Reflect.getOwnPropertyDescriptor(target, key);
            },
          },
        );
      },
    ],
    [
      'a revoked proxy',
      () => {
        const { proxy, revoke } = Proxy.revocable({ decision: 'allow' }, {});
        revoke();
        return proxy;
      },
    ],
    [
      // An own getter answering allow counts (docs/decisions.md); an inherited one does not.
      'an inherited getter decision',
      () =>
        new (class {
          get decision() {
            return 'allow';
          }
        })(),
    ],
    [
      'an own getter decision that throws',
      () =>
        Object.defineProperty({}, 'decision', {
          get: () => {
            throw new Error('getter');
          },
        }),
    ],
    ['an inherited allow', () => Object.create({ decision: 'allow' })],
    ['an array holding allow', () => Object.assign(['allow'], { decision: 'allow' })],
    ['a string', () => 'allow'],
    [
      'a thenable that never calls back with allow but throws',
      () => ({
        then() {
          throw new Error('then exploded');
        },
      }),
    ],
    ['a promise of garbage', () => Promise.resolve({ decision: 'yes' })],
    ['a deny with a numeric reason', () => ({ decision: 'deny', reason: 42 })],
  ];

  for (const [label, make] of hostileDecisions) {
    it(`never invokes the capability when the authorizer returns ${label}`, async () => {
      let invoked = 0;
      const runtime = runtimeWith({ authorizer: recordingAuthorizer(() => make()) });
      const [name] = register(runtime, { execute: () => invoked++ });
      const job = await runtime.executePlan(oneStep(name as string));
      assert.equal(invoked, 0);
      assert.equal(job.status, 'failed');
      assert.equal(job.steps[0]?.status, 'failed');
      assert.ok(!job.events.some((event) => event.type === 'capability.started'));
    });
  }

  it('lets an authorizer mutate the input it approves (docs/decisions.md: inputs are not deeply immutable) but never swap it', async () => {
    let received: unknown;
    const authorizer = recordingAuthorizer((context) => {
      assert.throws(() => {
        (context as { input: unknown }).input = { swapped: true };
      }, TypeError);
      (context.input as { n: number }).n = 2;
      return { decision: 'allow' };
    });
    const runtime = runtimeWith({ authorizer });
    const [name] = register(runtime, { execute: ({ input }) => (received = input) });
    await runtime.executePlan(oneStep(name as string, { n: 1 }));
    assert.deepEqual(received, { n: 2 });
  });
});

describe('fault injection: observers', () => {
  it('leaves the job executing when an observer never settles (there is no observer time-out)', async () => {
    const runtime = runtimeWith();
    const [name] = register(runtime, { execute: () => 1 });
    runtime.subscribe('capability.completed', () => new Promise<void>(() => {}));
    let settled = false;
    // Two steps: the first step's completion is published while the job still has work to do.
    void runtime
      .executePlan({
        version: '1.0',
        steps: [
          { id: 'a', capability: name as string },
          { id: 'b', capability: name as string },
        ],
      })
      .then(() => (settled = true));
    for (let tick = 0; tick < 20; tick++) await new Promise((resolve) => setImmediate(resolve));
    assert.equal(settled, false);
    const [job] = await runtime.listJobs();
    assert.equal(job?.status, 'executing');
    assert.deepEqual(
      job?.steps.map((step) => step.status),
      ['completed', 'pending'],
      'the step outcome was recorded before publication',
    );
  });

  it('survives observers that unsubscribe everyone, throw non-errors and reject with undefined', async () => {
    const reported: unknown[] = [];
    const runtime = runtimeWith({ onObserverError: (error) => reported.push(error) });
    const [name] = register(runtime, { execute: () => 'done' });
    const stops: (() => void)[] = [];
    stops.push(runtime.subscribe('*', () => stops.forEach((stop) => stop())));
    stops.push(
      runtime.subscribe('*', () => {
        throw 'a string';
      }),
    );
    stops.push(runtime.subscribe('*', () => Promise.reject(undefined)));
    const job = await runtime.executePlan(oneStep(name as string));
    assert.equal(job.status, 'completed');
    assert.deepEqual(reported, ['a string', undefined]);
  });
});

describe('fault injection: capabilities', () => {
  it('records cyclic and very large results without crashing', async () => {
    const runtime = runtimeWith();
    const cyclic: Record<string, unknown> = { name: 'loop' };
    cyclic.self = cyclic;
    const [cycle, huge] = register(
      runtime,
      { execute: () => cyclic },
      { execute: () => 'x'.repeat(5_000_000) },
    );
    const job = await runtime.executePlan({
      version: '1.0',
      steps: [
        { id: 'cycle', capability: cycle as string },
        { id: 'huge', capability: huge as string },
      ],
    });
    assert.equal(job.status, 'completed');
    assert.equal((job.steps[0]?.result as { self: unknown }).self, cyclic);
    assert.equal((job.steps[1]?.result as string).length, 5_000_000);
  });

  it('fails the step, not the process, on throws of null, undefined, symbols and errors with throwing getters', async () => {
    const hostileError = new Error('x');
    Object.defineProperty(hostileError, 'message', {
      get: () => {
        throw new Error('getter');
      },
    });
    for (const thrown of [
      null,
      undefined,
      Symbol('s'),
      hostileError,
      new Proxy(
        {},
        {
          getPrototypeOf: () => {
            throw new Error('trap');
          },
        },
      ),
    ]) {
      const runtime = runtimeWith();
      const events = recordEvents(runtime);
      const [name] = register(runtime, {
        execute: () => {
          throw thrown;
        },
      });
      const job = await runtime.executePlan(oneStep(name as string));
      assert.equal(job.status, 'failed');
      assert.equal(typeof job.error, 'string');
      assert.equal(events.at(-1)?.type, 'job.failed');
    }
  });

  it('ignores a result that arrives after the timeout and fails the step with the timeout message', async () => {
    const runtime = runtimeWith();
    let lateResolved = false;
    let resolved: () => void = () => {};
    const late = new Promise<void>((resolve) => (resolved = resolve));
    const name = `late.${process.pid}`;
    runtime.use({
      manifest: { name: 'late', version: '1', capabilities: [name] },
      capabilities: [
        createCapability({
          name,
          version: '1',
          description: 'slow',
          risk: 'read',
          timeoutMs: 10,
          execute: () =>
            new Promise((resolve) =>
              setTimeout(() => {
                lateResolved = true;
                resolve('late');
                resolved();
              }, 40),
            ),
        }),
      ],
    });
    const job = await runtime.executePlan(oneStep(name));
    assert.equal(job.error, 'Capability execution timed out after 10ms');
    // Once the late result is in, and a turn later (anything it would set is set by then).
    await within(late, { what: 'the late result' });
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(lateResolved, true);
    assert.equal(job.steps[0]?.result, undefined);
    assert.equal(job.status, 'failed');
  });
});
