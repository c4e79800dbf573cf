import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { captureSubmission } from '../../src/plan/capture.js';

function countingProxy<T extends object>(target: T, reads: Map<PropertyKey, number>): T {
  return new Proxy(target, {
    get(object, key, receiver) {
      reads.set(key, (reads.get(key) ?? 0) + 1);
      return Reflect.get(object, key, receiver);
    },
  });
}

describe('captureSubmission()', () => {
  it('reads each step of a steps proxy once, by its index key, and keeps absent fields absent', () => {
    const reads = new Map<PropertyKey, number>();
    const steps = countingProxy([{ id: 'a', capability: 'c' }, 'not a step'], reads);
    const captured = captureSubmission({ version: '1.0', steps }, 10);
    assert.equal(reads.get('0'), 1);
    assert.equal(reads.get('1'), 1);
    assert.equal(reads.get('length'), 1);
    const [first, second] = captured.steps;
    assert.deepEqual(first?.reason, { ok: true, value: undefined });
    assert.deepEqual(first?.id, { ok: true, value: 'a' });
    assert.equal(second?.isObject, false);
    assert.deepEqual(captured.goal, { ok: true, value: undefined });
  });

  it('reads every structural field of the plan and of each step exactly once', () => {
    const planReads = new Map<PropertyKey, number>();
    const stepReads = new Map<PropertyKey, number>();
    const input = { a: 1 };
    const step = countingProxy(
      { id: 's', capability: 'c', capabilityVersion: '1', input, reason: 'r', idempotencyKey: 'k' },
      stepReads,
    );
    const plan = countingProxy(
      { version: '1.0', id: 'p', goal: 'g', steps: [step], metadata: {}, idempotencyKey: 'pk' },
      planReads,
    );
    const captured = captureSubmission(plan, 10);
    for (const key of ['version', 'id', 'goal', 'steps', 'metadata', 'idempotencyKey'])
      assert.equal(planReads.get(key), 1, key);
    for (const key of [
      'id',
      'capability',
      'capabilityVersion',
      'input',
      'reason',
      'idempotencyKey',
    ])
      assert.equal(stepReads.get(key), 1, key);
    assert.equal(
      captured.steps[0]?.input.ok && captured.steps[0].input.value,
      input,
      'input root kept by identity',
    );
  });

  it('is not redirected by getters that mutate the plan while it is read', () => {
    const steps: unknown[] = [{ id: 'a', capability: 'first' }];
    const plan = {
      version: '1.0',
      get steps() {
        const current = [...steps];
        steps.push({ id: 'b', capability: 'smuggled' });
        return current;
      },
    };
    const captured = captureSubmission(plan, 10);
    assert.equal(captured.steps.length, 1);
    assert.deepEqual(captured.steps[0]?.capability, { ok: true, value: 'first' });
  });

  it('keeps later caller edits out of the captured structure', () => {
    const plan = { version: '1.0', steps: [{ id: 'a', capability: 'x', input: { n: 1 } }] };
    const captured = captureSubmission(plan, 10);
    (plan.steps[0] as { capability: string }).capability = 'y';
    plan.steps.push({ id: 'b', capability: 'z', input: { n: 2 } });
    assert.equal(captured.steps.length, 1);
    assert.deepEqual(captured.steps[0]?.capability, { ok: true, value: 'x' });
  });

  it('records a throwing getter as a failed read instead of throwing', () => {
    const plan = {
      version: '1.0',
      steps: [
        {
          id: 'a',
          get capability(): string {
            throw new Error('boom');
          },
        },
      ],
    };
    const captured = captureSubmission(plan, 10);
    const field = captured.steps[0]?.capability;
    assert.equal(field?.ok, false);
    assert.equal(field?.ok === false && (field.error as Error).message, 'boom');
  });

  it('records a step whose index getter throws, and a non-object step', () => {
    const steps = ['not a step'];
    Object.defineProperty(steps, 1, {
      get() {
        throw new Error('index trap');
      },
      enumerable: true,
    });
    const captured = captureSubmission({ version: '1.0', steps }, 10);
    assert.equal(captured.steps[0]?.isObject, false);
    assert.equal(captured.steps[0]?.readFailure, undefined);
    assert.equal(captured.steps[1]?.isObject, false);
    assert.equal((captured.steps[1]?.readFailure?.error as Error).message, 'index trap');
  });

  it('refuses to walk more steps than maxSteps, or an unreadable length, without reading any step', () => {
    let touched = 0;
    const huge = new Proxy([], {
      get(target, key) {
        if (key === 'length') return 1e9;
        if (typeof key === 'string' && /^\d+$/.test(key)) touched++;
        return Reflect.get(target, key);
      },
    });
    const captured = captureSubmission({ version: '1.0', steps: huge }, 100);
    assert.match(captured.stepsProblem ?? '', /1000000000 steps; at most 100 are accepted/);
    assert.equal(touched, 0);
    const broken = new Proxy([], {
      get: (target, key) => (key === 'length' ? 'many' : Reflect.get(target, key)),
    });
    assert.equal(
      captureSubmission({ version: '1.0', steps: broken }, 100).stepsProblem,
      'plan.steps has an unreadable length',
    );
  });

  it('works with frozen and null-prototype plans and marks non-objects', () => {
    const frozen = Object.freeze({
      version: '1.0',
      steps: Object.freeze([Object.freeze({ id: 'a', capability: 'c' })]),
    });
    assert.equal(captureSubmission(frozen, 10).steps.length, 1);
    const bare = Object.assign(Object.create(null) as object, {
      version: '1.0',
      steps: [Object.assign(Object.create(null) as object, { id: 'a', capability: 'c' })],
    });
    assert.equal(captureSubmission(bare, 10).steps[0]?.isObject, true);
    for (const value of [null, undefined, 'plan', 42, []])
      assert.equal(captureSubmission(value, 10).isObject, false);
  });

  it('records revoked proxies as the plan, as steps and as a step as failed reads, never throwing', () => {
    const revoked = <T extends object>(target: T): T => {
      const { proxy, revoke } = Proxy.revocable(target, {});
      revoke();
      return proxy;
    };
    const plan = captureSubmission(revoked({}), 10);
    assert.equal(plan.isObject, false);
    assert.equal(plan.readFailure?.ok, false);
    const steps = captureSubmission({ version: '1.0', steps: revoked([]) }, 10);
    assert.equal(steps.stepsIsArray, false);
    assert.match(steps.stepsProblem ?? '', /^plan\.steps could not be read \(/);
    const step = captureSubmission({ version: '1.0', steps: [revoked({})] }, 10);
    assert.equal(step.stepsIsArray, true);
    assert.equal(step.steps[0]?.isObject, false);
    assert.equal(step.steps[0]?.readFailure?.ok, false);
  });
});

describe('captureSubmission() of a 2.0 plan (docs/api.md, "Plan version 2.0")', () => {
  it('copies each input once, deep-frozen, when the runtime admits 2.0', () => {
    const input = { a: { b: [1] } };
    const [step] = captureSubmission(
      { version: '2.0', steps: [{ id: 's', capability: 'c', input }] },
      10,
      ['1.0', '2.0'],
    ).steps;
    assert.equal(step?.inputProblem, undefined);
    const copy = step?.input.ok === true ? (step.input.value as typeof input) : undefined;
    assert.deepEqual(copy, input);
    assert.notEqual(copy, input);
    assert.ok(Object.isFrozen(copy) && Object.isFrozen(copy?.a.b));
  });

  it('keeps the input root by identity when 2.0 is not admitted (the plan is refused anyway)', () => {
    const input = { a: 1 };
    const captured = captureSubmission(
      { version: '2.0', steps: [{ id: 's', capability: 'c', input }] },
      10,
    );
    assert.equal(captured.governed, false);
    assert.deepEqual(captured.steps[0]?.input, { ok: true, value: input });
  });

  it('keeps the problem of an input outside the domain, its getter never called', () => {
    let calls = 0;
    const input = {
      get g() {
        calls++;
        return 1;
      },
    };
    const [step] = captureSubmission(
      { version: '2.0', steps: [{ id: 's', capability: 'c', input }] },
      10,
      ['2.0'],
    ).steps;
    assert.deepEqual(step?.inputProblem, {
      code: 'VALUE_NOT_PLAIN_DATA',
      path: ['g'],
      what: 'an accessor (getter or setter)',
    });
    assert.equal(calls, 0);
  });
});
