import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TimeoutMiddleware, createCapability } from '../../src/index.js';
import { testContext } from '../support/execution-context.js';
import { within } from '../support/wait.js';

const context = testContext();

describe('TimeoutMiddleware', () => {
  it('fails with "Capability execution timed out after <ms>ms" (CAPABILITY_TIMEOUT) and aborts the signal inner layers received', async () => {
    let signal: AbortSignal | undefined;
    let rejected: () => void = () => {};
    const late = new Promise<void>((resolve) => (rejected = resolve));
    const capability = createCapability({
      name: 'slow.one',
      version: '1',
      description: 'd',
      risk: 'read',
      timeoutMs: 20,
      execute: ({ context: inner }) => {
        signal = inner.signal;
        return new Promise((_resolve, reject) =>
          inner.signal.addEventListener('abort', () =>
            setTimeout(() => {
              reject(new Error('late rejection'));
              rejected();
            }, 5),
          ),
        );
      },
    });
    await assert.rejects(Promise.resolve(capability.execute({}, context)), {
      code: 'CAPABILITY_TIMEOUT',
      message: 'Capability execution timed out after 20ms',
    });
    assert.equal(signal?.aborted, true);
    assert.equal(context.signal.aborted, false, 'the outer signal is untouched');
    // The inner layer's late rejection happens within this test, and is handled.
    await within(late, { what: 'the late rejection' });
    await new Promise((resolve) => setImmediate(resolve));
  });

  it('passes the result through when inner layers finish in time', async () => {
    const middleware = new TimeoutMiddleware(1000);
    assert.equal(middleware.ms, 1000);
    const result = await middleware.execute(
      { input: 1, context, capability: { name: 'x', version: '1', risk: 'read' } },
      async () => 'fast',
    );
    assert.equal(result, 'fast');
  });

  it('rejects a timeout that is not an integer from 1 to 2^31-1 with TIMEOUT_INVALID', () => {
    // Above 2^31-1 milliseconds setTimeout fires after 1 ms; fractions are not milliseconds.
    for (const ms of [0, -1, NaN, Infinity, '10', 2 ** 31, 1.5]) {
      assert.throws(() => new TimeoutMiddleware(ms as number), {
        name: 'TypeError',
        code: 'TIMEOUT_INVALID',
      });
    }
  });
});
