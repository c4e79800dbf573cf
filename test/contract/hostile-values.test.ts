// The library contract at the package root for hostile values: whatever is passed to
// executePlan(), the promise rejects only with a coded error (a PlanAdmissionError for the plan,
// EXECUTE_OPTIONS_INVALID for options) or resolves with a job; and decisions and thrown errors
// are read the same way whichever realm or shape they come in.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runInNewContext } from 'node:vm';
import {
  isPlanAdmissionError,
  type CapabilityAuthorizationDecision,
  type ExecutionPlan,
} from '../../src/index.js';
import { OperatorRuntime } from '../../src/index.js';
import { recordingAuthorizer, register, runtimeWith } from '../support/runtime-fixtures.js';

function revoked<T extends object>(target: T): T {
  const { proxy, revoke } = Proxy.revocable(target, {});
  revoke();
  return proxy;
}

describe('executePlan() with hostile plans', () => {
  const runtime = runtimeWith({ authorizer: recordingAuthorizer() });
  const [name] = register(runtime, { execute: () => 'ran' }) as [string];

  it('rejects revoked proxies as the plan, as steps and as a step with a PlanAdmissionError', async () => {
    const plans: [string, unknown][] = [
      ['the plan', revoked({ version: '1.0', steps: [] })],
      ['steps', { version: '1.0', steps: revoked([]) }],
      ['a step', { version: '1.0', steps: [revoked({ id: 'a', capability: name })] }],
      ['a second step', { version: '1.0', steps: [{ id: 'a', capability: name }, revoked({})] }],
      ['an input', { version: '1.0', steps: [{ id: 'a', capability: name, input: revoked({}) }] }],
    ];
    for (const [label, plan] of plans) {
      await assert.rejects(
        runtime.executePlan(plan as ExecutionPlan),
        (error: unknown) => {
          assert.ok(isPlanAdmissionError(error), `${label}: ${String(error)}`);
          assert.ok(
            error.issues.every((issue) => issue.code === 'INVALID_PLAN'),
            label,
          );
          return true;
        },
        label,
      );
    }
  });

  it('bounds issue texts: 600 steps sharing a 1 MiB id are refused with a bounded message', async () => {
    const id = 'i'.repeat(1 << 20);
    const steps = Array.from({ length: 600 }, () => ({ id, capability: 'no.such.capability' }));
    await assert.rejects(runtime.executePlan({ version: '1.0', steps }), (error: unknown) => {
      assert.ok(isPlanAdmissionError(error), String(error));
      // 600 unknown capabilities and 599 duplicates, all in `issues`, each text bounded.
      assert.equal(error.issues.length, 1199);
      for (const issue of error.issues) assert.ok(issue.message.length <= 500, issue.message);
      assert.equal(error.issues[0]?.stepId, id, 'the issue keeps the id itself');
      assert.ok(error.message.length <= 20_000, `message of ${error.message.length} chars`);
      assert.match(error.message, /and 1179 more issues \(see error\.issues\)$/);
      return true;
    });
  });

  it('bounds unreadable-field texts: a getter throwing a 1 MiB message', async () => {
    const plan = Object.defineProperty({ version: '1.0', steps: [] }, 'goal', {
      get() {
        throw new Error('m'.repeat(1 << 20));
      },
    });
    await assert.rejects(runtime.executePlan(plan as ExecutionPlan), (error: unknown) => {
      assert.ok(isPlanAdmissionError(error));
      for (const issue of error.issues) assert.ok(issue.message.length <= 500);
      return true;
    });
  });
});

describe('decisions and errors from other shapes and realms', () => {
  it('runs a step whose authorizer answers with an own accessor decision of "allow", reading it once', async () => {
    let reads = 0;
    const runtime = runtimeWith({
      authorizer: {
        authorize: () =>
          Object.defineProperty({}, 'decision', {
            get: () => (reads++, 'allow'),
          }) as CapabilityAuthorizationDecision,
      },
    });
    const [name] = register(runtime, { risk: 'write', execute: () => 'ran' });
    const job = await runtime.executePlan({
      version: '1.0',
      steps: [{ id: 'a', capability: name as string }],
    });
    assert.equal(job.status, 'completed');
    assert.equal(job.result, 'ran');
    assert.equal(reads, 1);
    await runtime.close();
  });

  it('keeps the message of an Error made in another realm, thrown by an authorizer or a capability', async () => {
    const foreign = (message: string) =>
      runInNewContext(`new Error(${JSON.stringify(message)})`) as unknown;
    const runtime = runtimeWith({
      authorizer: {
        authorize: ({ capability }) => {
          if (capability.risk === 'write') throw foreign('authorizer said x');
          return { decision: 'allow' };
        },
      },
    });
    const [read, write] = register(
      runtime,
      {
        execute: () => {
          throw foreign('capability said x');
        },
      },
      { risk: 'write', execute: () => 'never' },
    ) as [string, string];
    const failed = await runtime.executePlan({
      version: '1.0',
      steps: [{ id: 'a', capability: read }],
    });
    assert.equal(failed.error, 'capability said x');
    const refused = await runtime.executePlan({
      version: '1.0',
      steps: [{ id: 'a', capability: write }],
    });
    assert.equal(refused.error, 'authorizer said x');
    await runtime.close();
  });
});

describe('options that cannot be read', () => {
  const throwing = (key: string) =>
    Object.defineProperty({}, key, {
      enumerable: true,
      get() {
        throw new Error(`${key} getter`);
      },
    });

  it('are RUNTIME_OPTIONS_INVALID for new OperatorRuntime()', () => {
    const options = [
      revoked({}),
      ...['authorizer', 'store', 'maxJobs', 'maxPlanSteps', 'logger', 'onObserverError'].map(
        throwing,
      ),
      { authorizer: throwing('authorize') },
      { authorizer: revoked({}) },
      { logger: throwing('info') },
    ];
    for (const option of options) {
      assert.throws(() => new OperatorRuntime(option as never), {
        code: 'RUNTIME_OPTIONS_INVALID',
      });
    }
  });

  it('are EXECUTE_OPTIONS_INVALID for executePlan() and JOB_FILTER_INVALID for listJobs()', async () => {
    const runtime = runtimeWith();
    const [name] = register(runtime, { execute: () => 1 }) as [string];
    const plan = { version: '1.0' as const, steps: [{ id: 'a', capability: name }] };
    for (const options of [revoked({}), throwing('caller'), { caller: revoked({}) }]) {
      await assert.rejects(runtime.executePlan(plan, options as never), {
        code: 'EXECUTE_OPTIONS_INVALID',
      });
    }
    for (const filter of [revoked({}), throwing('status'), throwing('limit')]) {
      await assert.rejects(runtime.listJobs(filter as never), { code: 'JOB_FILTER_INVALID' });
    }
    await runtime.close();
  });
});
