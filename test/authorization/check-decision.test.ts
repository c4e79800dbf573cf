import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkDecision } from '../../src/authorization/check-decision.js';

describe('checkDecision()', () => {
  it('allows only an own data property decision === "allow"', () => {
    assert.deepEqual(checkDecision({ decision: 'allow' }), { kind: 'allow' });
    assert.deepEqual(checkDecision(Object.freeze({ decision: 'allow', extra: 1 })), {
      kind: 'allow',
    });
    assert.deepEqual(
      checkDecision(Object.assign(Object.create(null) as object, { decision: 'allow' })),
      { kind: 'allow' },
    );
  });

  it('reads an explicit denial with an undefined or string reason', () => {
    assert.deepEqual(checkDecision({ decision: 'deny' }), { kind: 'deny', reason: undefined });
    assert.deepEqual(checkDecision({ decision: 'deny', reason: undefined }), {
      kind: 'deny',
      reason: undefined,
    });
    assert.deepEqual(checkDecision({ decision: 'deny', reason: 'no' }), {
      kind: 'deny',
      reason: 'no',
    });
  });

  it('fails closed on everything else', () => {
    const { proxy: revoked, revoke } = Proxy.revocable({ decision: 'allow' }, {});
    revoke();
    const invalid: unknown[] = [
      undefined,
      null,
      'allow',
      true,
      ['allow'],
      Object.assign([], { decision: 'allow' }),
      {},
      { decision: 'ALLOW' },
      { decision: 'maybe' },
      { decision: true },
      Object.create({ decision: 'allow' }),
      Object.defineProperty({}, 'decision', { get: () => 'ALLOW' }),
      Object.defineProperty({}, 'decision', { set: () => undefined }),
      Object.defineProperty({}, 'decision', {
        get: () => {
          throw new Error('getter');
        },
      }),
      Object.create(Object.defineProperty({}, 'decision', { get: () => 'allow' })),
      { decision: 'deny', reason: 42 },
      { decision: 'deny', reason: null },
      Object.defineProperty({ decision: 'deny' }, 'reason', { get: () => 42 }),
      new Proxy(
        {},
        {
          getOwnPropertyDescriptor: () => {
            throw new Error('trap');
          },
        },
      ),
      revoked,
    ];
    for (const value of invalid) assert.deepEqual(checkDecision(value), { kind: 'invalid' });
  });

  it('reads decision exactly once', () => {
    let reads = 0;
    const decision = new Proxy(
      { decision: 'allow' },
      {
        getOwnPropertyDescriptor(target, key) {
          if (key === 'decision') reads++;
          return Reflect.getOwnPropertyDescriptor(target, key);
        },
      },
    );
    checkDecision(decision);
    assert.equal(reads, 1);
  });

  it('allows an own accessor decision that returns "allow", calling its getter exactly once', () => {
    let calls = 0;
    const answers = ['allow', 'deny'];
    const decision = Object.defineProperty({}, 'decision', {
      enumerable: true,
      get: () => answers[calls++],
    });
    assert.deepEqual(checkDecision(decision), { kind: 'allow' });
    assert.equal(calls, 1);
    class Decision {
      get decision() {
        return 'allow';
      }
    }
    // The getter of a class is inherited, not own: it fails closed.
    assert.deepEqual(checkDecision(new Decision()), { kind: 'invalid' });
  });

  it('reads an own accessor deny and its own accessor reason, each getter once', () => {
    let decisionReads = 0;
    let reasonReads = 0;
    const denial = Object.defineProperties(
      {},
      {
        decision: { get: () => (decisionReads++, 'deny') },
        reason: { get: () => (reasonReads++, 'not today') },
      },
    );
    assert.deepEqual(checkDecision(denial), { kind: 'deny', reason: 'not today' });
    assert.deepEqual([decisionReads, reasonReads], [1, 1]);
  });
});

describe('checkDecision() with approvals', () => {
  it('reads require_approval (and its reason) only when approvals are on', () => {
    assert.deepEqual(checkDecision({ decision: 'require_approval' }), { kind: 'invalid' });
    assert.deepEqual(checkDecision({ decision: 'require_approval', reason: 'r' }, false), {
      kind: 'invalid',
    });
    assert.deepEqual(checkDecision({ decision: 'require_approval' }, true), {
      kind: 'require_approval',
      reason: undefined,
    });
    assert.deepEqual(checkDecision({ decision: 'require_approval', reason: 'r' }, true), {
      kind: 'require_approval',
      reason: 'r',
    });
    assert.deepEqual(checkDecision({ decision: 'require_approval', reason: 1 }, true), {
      kind: 'invalid',
    });
    assert.deepEqual(
      checkDecision(Object.create({ decision: 'require_approval' }) as object, true),
      { kind: 'invalid' },
    );
    assert.deepEqual(checkDecision({ decision: 'deny' }, true), {
      kind: 'deny',
      reason: undefined,
    });
  });
});
