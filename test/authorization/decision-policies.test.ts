import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  decisionPolicies,
  markDecisionPolicies,
} from '../../src/authorization/decision-policies.js';

describe('decision policies', () => {
  it('gives back a frozen copy of the marks of a decision object, and nothing for any other', () => {
    const ids = ['a', 'b'];
    const decision = { decision: 'allow' };
    markDecisionPolicies(decision, ids);
    ids.push('c');
    assert.deepEqual(decisionPolicies(decision), ['a', 'b']);
    assert.ok(Object.isFrozen(decisionPolicies(decision)));
    // Another answer with the same content claims nothing.
    assert.equal(decisionPolicies({ decision: 'allow' }), undefined);
    assert.equal(decisionPolicies('allow'), undefined);
    assert.equal(decisionPolicies(null), undefined);
  });
});
