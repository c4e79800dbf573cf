// docs/api.md, "Plan version 2.0": the planVersions option, the version read once and refused
// before anything exists, the value domain at admission and at step time, and the two copies.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  isPlanAdmissionError,
  OperatorRuntime,
  type CapabilityAuthorizationContext,
  type ExecutionPlan,
  type PlanAdmissionIssue,
} from '../../src/index.js';
import { recordEvents, recordingAuthorizer, register } from '../support/runtime-fixtures.js';

const BOTH = ['1.0', '2.0'] as const;

async function issuesOf(run: () => Promise<unknown>): Promise<readonly PlanAdmissionIssue[]> {
  try {
    await run();
  } catch (error) {
    assert.ok(isPlanAdmissionError(error), `not a PlanAdmissionError: ${String(error)}`);
    return error.issues;
  }
  return assert.fail('admission did not reject');
}

function setup(planVersions?: readonly ('1.0' | '2.0')[], decide?: () => unknown) {
  const authorizer = recordingAuthorizer(decide);
  const runtime = new OperatorRuntime({ authorizer, planVersions: planVersions as never });
  const received: unknown[] = [];
  const [echo] = register(runtime, {
    execute: ({ input }) => {
      received.push(input);
      return input;
    },
  });
  const [mutate] = register(runtime, {
    execute: ({ input }) => {
      received.push(input);
      const target = input as { nested: { list: unknown[] }; added?: number };
      target.nested.list.push('pushed by the capability');
      target.added = 1;
      return 'done';
    },
  });
  const [dated] = register(runtime, { execute: () => ({ when: new Date(0) }) });
  return {
    runtime,
    authorizer,
    received,
    events: recordEvents(runtime),
    echo: echo as string,
    mutate: mutate as string,
    dated: dated as string,
  };
}

const plan2 = (steps: ExecutionPlan['steps']): ExecutionPlan => ({ version: '2.0', steps });

describe('planVersions (runtime option)', () => {
  it('defaults to ["1.0"] and is checked as a runtime option', () => {
    assert.deepEqual(new OperatorRuntime().planVersions, ['1.0']);
    assert.deepEqual(new OperatorRuntime({ planVersions: ['2.0', '1.0'] }).planVersions, [
      '2.0',
      '1.0',
    ]);
    const throwing = new Proxy([], {
      get() {
        throw new Error('boom');
      },
    });
    for (const [index, bad] of [
      [],
      ['3.0'],
      ['1.0', '1.0'],
      '1.0',
      [1],
      null,
      throwing,
    ].entries()) {
      assert.throws(
        () => new OperatorRuntime({ planVersions: bad as never }),
        (error: Error & { code?: string }) =>
          error.code === 'RUNTIME_OPTIONS_INVALID' &&
          error.message.startsWith('options.planVersions ') &&
          !error.message.includes('\n'),
        `case ${index}`,
      );
    }
  });

  it('refuses an unlisted version with nothing created, reading version once', async () => {
    for (const [versions, plan, expected] of [
      [undefined, '2.0', 'plan: version must be "1.0", got "2.0"'],
      [['2.0'], '1.0', 'plan: version must be "2.0", got "1.0"'],
      [BOTH, '3.0', 'plan: version must be one of "1.0", "2.0", got "3.0"'],
    ] as const) {
      const { runtime, authorizer, events, received, echo } = setup(versions);
      let reads = 0;
      const submitted = {
        get version() {
          reads++;
          return plan;
        },
        steps: [{ id: 'a', capability: echo, input: { x: 1 } }],
      };
      const issues = await issuesOf(() => runtime.executePlan(submitted as never));
      assert.deepEqual(issues, [
        { code: 'UNSUPPORTED_PLAN_VERSION', message: expected, field: 'version', path: '/version' },
      ]);
      assert.equal(reads, 1);
      assert.deepEqual(await runtime.listJobs(), []);
      assert.equal(events.length, 0);
      assert.equal(authorizer.calls.length, 0);
      assert.equal(received.length, 0);
    }
  });
});

describe('a 2.0 plan', () => {
  it('refuses each input outside the domain at admission, one issue per step, nothing created', async () => {
    const { runtime, authorizer, events, received, echo } = setup(BOTH);
    const holes: unknown[] = [1];
    holes[2] = 3;
    const steps = [
      { id: 'a', capability: echo, input: { when: new Date(0) } },
      { id: 'b', capability: echo, input: { ok: [1, 2] } },
      { id: 'c', capability: echo, input: { list: holes } },
      { id: 'd', capability: echo, input: { n: NaN, m: new Map() } },
    ];
    const issues = await issuesOf(() => runtime.executePlan(plan2(steps)));
    assert.deepEqual(
      issues.map((issue) => [issue.code, issue.stepId, issue.field]),
      [
        ['VALUE_NOT_PLAIN_DATA', 'a', 'input.when'],
        ['VALUE_NOT_PLAIN_DATA', 'c', 'input.list'],
        ['VALUE_NOT_PLAIN_DATA', 'd', 'input.n'],
      ],
    );
    assert.equal(
      issues[0]?.message,
      `steps[0] "a": input.when is a Date; a 2.0 plan's input must be plain JSON data`,
    );
    assert.deepEqual(await runtime.listJobs(), []);
    assert.equal(events.length + authorizer.calls.length + received.length, 0);
  });

  it('reports a plan-wide bound once, on the step that passed it', async () => {
    const { runtime, echo } = setup(BOTH);
    const half = 'x'.repeat(600_000);
    const issues = await issuesOf(() =>
      runtime.executePlan(
        plan2([
          { id: 'a', capability: echo, input: { s: half } },
          { id: 'b', capability: echo, input: { s: half } },
          { id: 'c', capability: echo, input: { s: half } },
        ]),
      ),
    );
    assert.deepEqual(
      issues.map((issue) => [issue.code, issue.stepId, issue.field]),
      [['VALUE_TOO_LONG', 'b', 'input.s']],
    );
    assert.equal(
      issues[0]?.message,
      'steps[1] "b": input.s: over 1048576 characters in all (bounds of a 2.0 plan\'s inputs)',
    );
  });

  it('runs an input at the bounds', async () => {
    const { runtime, echo } = setup(BOTH);
    let deep: unknown = 'leaf';
    for (let level = 0; level < 128; level++) deep = { d: deep };
    const job = await runtime.executePlan(
      plan2([
        { id: 'a', capability: echo, input: deep },
        { id: 'b', capability: echo, input: new Array<number>(99_000).fill(1) },
      ]),
    );
    assert.equal(job.status, 'completed', job.error);
  });

  it('reads a hostile input once, at capture: no getter or trap runs, the copy is what runs', async () => {
    const { runtime, received, echo } = setup(BOTH);
    let ran = 0;
    const input = {
      a: 1,
      get b() {
        ran++;
        return 2;
      },
    };
    const issues = await issuesOf(() =>
      runtime.executePlan(plan2([{ id: 'a', capability: echo, input }])),
    );
    assert.equal(issues[0]?.code, 'VALUE_NOT_PLAIN_DATA');
    assert.equal(issues[0]?.field, 'input.b');
    assert.equal(ran, 0);
    // A later edit of the caller's object reaches nothing: the job runs the copy.
    const submitted = { nested: { n: 1 } };
    const job = await runtime.executePlan(plan2([{ id: 'a', capability: echo, input: submitted }]));
    submitted.nested.n = 2;
    assert.deepEqual(received[0], { nested: { n: 1 } });
    assert.notEqual(received[0], submitted);
    assert.deepEqual((await runtime.getJob(job.id))?.steps[0]?.input, { nested: { n: 1 } });
  });

  it('keeps aliases: the same object twice is admitted, and the capability sees one object', async () => {
    const { runtime, received, echo } = setup(BOTH);
    const shared = { n: 1 };
    const job = await runtime.executePlan(
      plan2([{ id: 'a', capability: echo, input: { x: shared, y: [shared] } }]),
    );
    assert.equal(job.status, 'completed');
    const given = received[0] as { x: object; y: object[] };
    assert.equal(given.x, given.y[0]);
  });

  it('gives the authorizer a deep-frozen copy and the capability its own mutable copy', async () => {
    const { runtime, authorizer, received, mutate } = setup(BOTH);
    const job = await runtime.executePlan(
      plan2([{ id: 'a', capability: mutate, input: { nested: { list: [1] } } }]),
    );
    assert.equal(job.status, 'completed', job.error);
    const seen = authorizer.calls[0] as CapabilityAuthorizationContext;
    assert.ok(Object.isFrozen(seen.input));
    assert.ok(Object.isFrozen((seen.input as { nested: { list: unknown[] } }).nested.list));
    assert.notEqual(received[0], seen.input);
    // The capability pushed and added on its copy: the authorizer's copy and the record are as asked.
    assert.deepEqual(seen.input, { nested: { list: [1] } });
    assert.deepEqual(received[0], { nested: { list: [1, 'pushed by the capability'] }, added: 1 });
    const recorded = await runtime.getJob(job.id);
    assert.deepEqual(recorded?.steps[0]?.input, { nested: { list: [1] } });
    assert.equal(recorded?.planVersion, '2.0');
    assert.equal((await runtime.verifyJob(job.id))?.ok, true);
  });

  it('fails closed when the authorizer tries to mutate its copy, and nothing changes', async () => {
    const { runtime, received, mutate } = setup(BOTH, () => ({ decision: 'allow' }));
    const tamper = new OperatorRuntime({
      planVersions: BOTH,
      authorizer: {
        authorize(context) {
          (context.input as { nested: { list: unknown[] } }).nested.list.push('tampered');
          return { decision: 'allow' };
        },
      },
    });
    const job = await tamper.executePlan(
      plan2([{ id: 'a', capability: mutate, input: { nested: { list: [1] } } }]),
    );
    assert.equal(job.status, 'failed');
    assert.match(job.error ?? '', /not extensible|read only|read-only/);
    assert.equal(job.steps[0]?.decision?.outcome, 'error');
    assert.equal(received.length, 0);
    assert.deepEqual((await tamper.getJob(job.id))?.steps[0]?.input, { nested: { list: [1] } });
    await runtime.close();
    await tamper.close();
  });

  it('fails a step whose resolved input is outside the domain before the authorizer is asked', async () => {
    const { runtime, authorizer, received, dated, echo } = setup(BOTH);
    const job = await runtime.executePlan(
      plan2([
        { id: 'a', capability: dated },
        { id: 'b', capability: echo, input: { at: { $ref: 'steps.a.result' } } },
      ]),
    );
    assert.equal(job.status, 'failed');
    assert.equal(
      job.steps[1]?.error,
      'Value is not a supported governed representation: input.at.when is a Date',
    );
    assert.equal(job.steps[1]?.decision, undefined);
    assert.equal(authorizer.calls.length, 1);
    assert.equal(received.length, 0);
  });

  it('copies a resolved input that is plain data, frozen for the authorizer', async () => {
    const { runtime, authorizer, received, echo } = setup(BOTH);
    const job = await runtime.executePlan(
      plan2([
        { id: 'a', capability: echo, input: { v: [1] } },
        { id: 'b', capability: echo, input: { from: { $ref: 'steps.a.result.v' } } },
      ]),
    );
    assert.equal(job.status, 'completed', job.error);
    const asked = authorizer.calls[1]?.input as { from: unknown[] };
    assert.ok(Object.isFrozen(asked) && Object.isFrozen(asked.from));
    assert.deepEqual(received[1], { from: [1] });
    assert.notEqual(received[1], asked);
  });

  it('records the version on the job and in job.created, in a durable store too', async () => {
    const runtime = new OperatorRuntime({ planVersions: BOTH, store: 'sqlite::memory:' });
    const [echo] = register(runtime, { execute: ({ input }) => input });
    const job = await runtime.executePlan(
      plan2([{ id: 'a', capability: echo as string, input: { x: 1 } }]),
    );
    const stored = await runtime.getJob(job.id);
    assert.equal(stored?.planVersion, '2.0');
    const created = { ...stored?.events[0]?.data };
    assert.match(String(created.record), /^sha256:[0-9a-f]{64}$/);
    delete created.record;
    assert.deepEqual(created, { goal: 'External execution plan', planVersion: '2.0' });
    assert.equal((await runtime.verifyJob(job.id))?.ok, true);
    await runtime.close();
  });
});

describe('a 2.0 plan through submitPlan and previewPlan', () => {
  it('is admitted by submitPlan and previewPlan as by executePlan, and refused when unlisted', async () => {
    const s = setup(BOTH);
    const plan = plan2([{ id: 'a', capability: s.echo, input: { x: 1 } }]);
    const { jobId } = await s.runtime.submitPlan(plan);
    const job = await s.runtime.waitForJob(jobId, { timeoutMs: 5000 });
    assert.equal(job?.status, 'completed');
    assert.equal(job?.planVersion, '2.0');
    assert.deepEqual(
      (await s.runtime.previewPlan(plan)).steps.map((step) => step.outcome),
      ['allow'],
    );
    await s.runtime.close();

    const only1 = setup();
    const refused = plan2([{ id: 'a', capability: only1.echo, input: { x: 1 } }]);
    for (const attempt of [
      () => only1.runtime.submitPlan(refused),
      () => only1.runtime.previewPlan(refused),
    ]) {
      assert.equal((await issuesOf(attempt))[0]?.code, 'UNSUPPORTED_PLAN_VERSION');
    }
    await only1.runtime.close();
  });
});

describe('a 2.0 job resumed after approval', () => {
  it('is admitted again as 2.0: the authorizer gets a frozen copy, the capability its own', async () => {
    const asked: unknown[] = [];
    const runtime = new OperatorRuntime({
      planVersions: BOTH,
      approvals: { approver: { canApprove: () => true } },
      authorizer: {
        authorize(context) {
          asked.push(context.input);
          return context.approval === undefined
            ? { decision: 'require_approval' }
            : { decision: 'allow' };
        },
      },
    });
    const received: unknown[] = [];
    const [echo] = register(runtime, {
      execute: ({ input }) => {
        received.push(input);
        (input as { list: unknown[] }).list.push('changed by the capability');
        return 'done';
      },
    });
    const job = await runtime.executePlan(
      plan2([{ id: 'a', capability: echo as string, input: { list: [1] } }]),
    );
    assert.equal(job.status, 'awaiting_approval');
    const done = await runtime.decideApproval({
      jobId: job.id,
      stepId: 'a',
      inputDigest: job.steps[0]?.decision?.inputDigest as string,
      approver: { id: 'bob' },
      decision: 'approve',
    });
    assert.equal(done.status, 'completed', done.error);
    assert.equal(done.planVersion, '2.0');
    assert.equal(asked.length, 2);
    assert.ok(Object.isFrozen(asked[1]));
    assert.notEqual(received[0], asked[1]);
    assert.deepEqual(asked[1], { list: [1] });
    assert.deepEqual((await runtime.getJob(job.id))?.steps[0]?.input, { list: [1] });
    await runtime.close();
  });
});

describe('a 1.0 plan, with 2.0 listed too', () => {
  it('behaves as before: one object, by identity, for the authorizer and the capability', async () => {
    const { runtime, authorizer, received, echo } = setup(BOTH);
    const input = { nested: { when: new Date(0) } };
    const job = await runtime.executePlan({
      version: '1.0',
      steps: [{ id: 'a', capability: echo, input }],
    });
    assert.equal(job.status, 'completed');
    assert.equal(authorizer.calls[0]?.input, input);
    assert.equal(received[0], input);
    assert.ok(!Object.isFrozen(input));
    assert.equal(job.planVersion, undefined);
    const created = { ...job.events[0]?.data };
    delete created.record;
    assert.deepEqual(created, { goal: 'External execution plan' });
  });
});
