// The checks of `new OperatorRuntime()` options (src/runtime/runtime-options.ts), through the
// public constructor.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { OperatorRuntime } from '../../src/index.js';

describe('new OperatorRuntime(options)', () => {
  it('rejects malformed options with RUNTIME_OPTIONS_INVALID', () => {
    const bad: unknown[] = [
      null,
      { authorizer: {} },
      { authorizer: { authorize: 'yes' } },
      { store: 'redis://x' },
      { store: 42 },
      { maxJobs: 0 },
      { maxJobs: 1.5 },
      { maxPlanSteps: -1 },
      { logger: { info() {} } },
      { onObserverError: 'x' },
      { auditKey: '' },
      { recover: 'yes' },
      { recover: 1 },
      { onStoreOutage: 'log' },
      { onStoreOutage: {} },
      { auditKey: 42 },
      { readPolicy: 'audit' },
      { readPolicy: {} },
      { limits: {} },
      { limits: [{ name: 'l', per: 'everyone', max: 1, windowMs: 1 }] },
      { limits: [{ name: 'l', per: 'global', max: 1, windowMs: 0 }] },
    ];
    for (const options of bad) {
      assert.throws(() => new OperatorRuntime(options as never), {
        name: 'TypeError',
        code: 'RUNTIME_OPTIONS_INVALID',
      });
    }
  });

  it('takes an onStoreOutage function', () => {
    assert.doesNotThrow(() => new OperatorRuntime({ onStoreOutage: () => {} }));
  });
});
