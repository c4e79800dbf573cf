import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  MAX_ISSUE_CHARS,
  MAX_LISTED_ISSUES,
  PlanAdmissionError,
  isPlanAdmissionError,
} from '../../src/plan/plan-admission-error.js';

describe('isPlanAdmissionError()', () => {
  const real = new PlanAdmissionError([
    { code: 'EMPTY_PLAN', message: 'plan: steps must contain at least one step', path: '/steps' },
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

  it('lists at most MAX_LISTED_ISSUES issue texts, each cut to MAX_ISSUE_CHARS, and keeps every issue', () => {
    const issues = Array.from({ length: 1000 }, (_, index) => ({
      code: 'INVALID_PLAN' as const,
      message: `issue ${index} ${'x'.repeat(10_000)}`,
      path: '',
    }));
    const error = new PlanAdmissionError(issues);
    assert.equal(error.issues.length, 1000);
    assert.equal(error.issues[999]?.message, issues[999]?.message);
    assert.ok(error.message.length <= 40 + MAX_LISTED_ISSUES * (MAX_ISSUE_CHARS + 2) + 50);
    assert.ok(error.message.endsWith('; and 980 more issues (see error.issues)'));
    assert.match(error.message, /^Execution plan failed validation: issue 0 x+\.\.\.; issue 1 /);
    const one = new PlanAdmissionError([...issues.slice(0, MAX_LISTED_ISSUES + 1)]);
    assert.ok(one.message.endsWith('; and 1 more issue (see error.issues)'));
  });
});
