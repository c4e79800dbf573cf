import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PlanAdmissionError, isPlanAdmissionError } from '../../src/plan/plan-admission-error.js';

describe('isPlanAdmissionError()', () => {
  const real = new PlanAdmissionError([
    { code: 'EMPTY_PLAN', message: 'plan: steps must contain at least one step' },
  ]);

  it('recognises an issued PlanAdmissionError and formats its message from the issues', () => {
    assert.equal(isPlanAdmissionError(real), true);
    assert.equal(real.code, 'PLAN_ADMISSION_REJECTED');
    assert.equal(real.name, 'PlanAdmissionError');
    assert.equal(
      real.message,
      'Execution plan failed validation: plan: steps must contain at least one step',
    );
    assert.ok(Object.isFrozen(real.issues) && Object.isFrozen(real.issues[0]));
  });

  it('rejects lookalikes, clones, proxies and objects inheriting from a real error', () => {
    const lookalike = Object.assign(new Error('x'), {
      name: 'PlanAdmissionError',
      code: 'PLAN_ADMISSION_REJECTED',
      issues: [],
    });
    assert.equal(isPlanAdmissionError(lookalike), false);
    assert.equal(isPlanAdmissionError({ ...real }), false);
    assert.equal(isPlanAdmissionError(structuredClone(real)), false);
    assert.equal(isPlanAdmissionError(new Proxy(real, {})), false);
    assert.equal(isPlanAdmissionError(Object.create(real)), false);
    for (const value of [undefined, null, 'PLAN_ADMISSION_REJECTED', 42, new Error('other')]) {
      assert.equal(isPlanAdmissionError(value), false);
    }
  });

  it('never throws, even for a revoked proxy', () => {
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    assert.equal(isPlanAdmissionError(proxy), false);
  });
});
