import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import type { ExecutionContext, JobEventType } from '../../src/index.js';
import { canonicalJson } from '../../src/json/canonical-json.js';
import { toJsonSafe } from '../../src/json/json-value.js';
import {
  recordEvents,
  recordingAuthorizer,
  register,
  runtimeWith,
} from '../support/runtime-fixtures.js';

/** The digest of the decision record, computed here from its definition: SHA-256 of JCS. */
const digestOf = (value: unknown): string =>
  `sha256:${createHash('sha256')
    .update(canonicalJson(toJsonSafe(value) ?? null))
    .digest('hex')}`;
/** A step without input: its input as authorized is absent, digested as null. */
const NULL_DIGEST = digestOf(null);

const types = (events: readonly { type: JobEventType }[]) => events.map((event) => event.type);

describe('OperatorRuntime#executePlan() event sequences', () => {
  it('records created, started, each step started/completed and job.completed on success', async () => {
    const runtime = runtimeWith();
    const [a, b] = register(runtime, { execute: () => 1 }, { execute: () => 2 });
    const observed = recordEvents(runtime);
    const job = await runtime.executePlan({
      version: '1.0',
      steps: [
        { id: 's1', capability: a as string },
        { id: 's2', capability: b as string },
      ],
    });
    const expected = [
      'job.created',
      'execution.started',
      'capability.started',
      'capability.completed',
      'capability.started',
      'capability.completed',
      'job.completed',
    ];
    assert.deepEqual(types(job.events), expected);
    assert.deepEqual(types(observed), expected);
    assert.deepEqual(job.events.at(-1)?.data, { stepCount: 2 });
    assert.deepEqual(job.events[2]?.data, {
      stepId: 's1',
      capability: a,
      inputDigest: NULL_DIGEST,
      capabilityVersion: '1.0.0',
    });
    assert.deepEqual(job.events[3]?.data, {
      stepId: 's1',
      capability: a,
      resultDigest: digestOf(1),
    });
    assert.deepEqual(
      observed.map((event) => event.stepId),
      [undefined, undefined, 's1', 's1', 's2', 's2', undefined],
    );
    assert.equal(job.status, 'completed');
    assert.equal(job.outcome, 'success');
    assert.ok(job.events.every((event) => event.jobId === job.id));
    assert.equal(new Set(job.events.map((event) => event.id)).size, job.events.length);
  });

  it('records capability.denied and job.failed, never capability.started, on an explicit denial', async () => {
    let invoked = 0;
    const runtime = runtimeWith();
    const [write] = register(runtime, { risk: 'write', execute: () => invoked++ });
    const job = await runtime.executePlan({
      version: '1.0',
      steps: [{ id: 'w', capability: write as string }],
    });
    assert.deepEqual(types(job.events), [
      'job.created',
      'execution.started',
      'capability.denied',
      'job.failed',
    ]);
    assert.equal(invoked, 0);
    assert.equal(job.status, 'failed');
    assert.equal(job.outcome, 'failed');
    assert.equal(job.error, 'Write capability requires explicit approval.');
    assert.deepEqual(job.events[2]?.data, {
      stepId: 'w',
      capability: write,
      risk: 'write',
      reason: 'Write capability requires explicit approval.',
      inputDigest: NULL_DIGEST,
      outcome: 'deny',
      capabilityVersion: '1.0.0',
      decidedAt: job.steps[0]?.decision?.decidedAt,
    });
    assert.deepEqual(job.events[3]?.data, {
      error: 'Write capability requires explicit approval.',
    });
    assert.equal(job.steps[0]?.status, 'failed');
    assert.equal(job.steps[0]?.startedAt, undefined);
  });

  it('uses "Capability not permitted: <name>" when a denial has no reason', async () => {
    const runtime = runtimeWith({ authorizer: recordingAuthorizer(() => ({ decision: 'deny' })) });
    const [name] = register(runtime, { execute: () => 1 });
    const job = await runtime.executePlan({
      version: '1.0',
      steps: [{ id: 'x', capability: name as string }],
    });
    assert.equal(job.error, `Capability not permitted: ${name}`);
    assert.equal(job.steps[0]?.error, `Capability not permitted: ${name}`);
  });

  it('records capability.failed with the thrown message when the authorizer throws or rejects', async () => {
    for (const authorize of [
      () => {
        throw new Error('policy service down');
      },
      () => Promise.reject(new Error('policy service down')),
    ]) {
      let invoked = 0;
      const runtime = runtimeWith({ authorizer: { authorize } as never });
      const [name] = register(runtime, { execute: () => invoked++ });
      const job = await runtime.executePlan({
        version: '1.0',
        steps: [{ id: 'x', capability: name as string }],
      });
      assert.deepEqual(types(job.events), [
        'job.created',
        'execution.started',
        'capability.failed',
        'job.failed',
      ]);
      assert.equal(job.error, 'policy service down');
      assert.deepEqual(job.events[2]?.data, {
        stepId: 'x',
        capability: name,
        error: 'policy service down',
        inputDigest: NULL_DIGEST,
        outcome: 'error',
        reason: 'policy service down',
        capabilityVersion: '1.0.0',
        decidedAt: job.steps[0]?.decision?.decidedAt,
      });
      assert.equal(invoked, 0);
    }
  });

  it('records capability.started then capability.failed when the capability throws, and skips later steps', async () => {
    let laterRan = false;
    const runtime = runtimeWith();
    const [boom, later] = register(
      runtime,
      {
        execute: () => {
          throw new TypeError('disk on fire');
        },
      },
      { execute: () => (laterRan = true) },
    );
    const job = await runtime.executePlan({
      version: '1.0',
      steps: [
        { id: 'boom', capability: boom as string },
        { id: 'later', capability: later as string },
      ],
    });
    assert.deepEqual(types(job.events), [
      'job.created',
      'execution.started',
      'capability.started',
      'capability.failed',
      'job.failed',
    ]);
    assert.equal(job.error, 'disk on fire');
    assert.deepEqual(
      job.steps.map((step) => step.status),
      ['failed', 'skipped'],
    );
    assert.equal(laterRan, false);
    assert.equal(job.result, undefined);
  });

  it('records a non-Error throw as a readable message', async () => {
    const runtime = runtimeWith();
    const [name] = register(runtime, {
      execute: () => {
        throw 42;
      },
    });
    const job = await runtime.executePlan({
      version: '1.0',
      steps: [{ id: 'x', capability: name as string }],
    });
    assert.equal(job.error, 'A non-error value was thrown: 42');
  });

  it('fails step 2 with capability.failed when its reference reads an inherited property', async () => {
    let secondRan = false;
    const authorizer = recordingAuthorizer();
    const runtime = runtimeWith({ authorizer });
    const [first, second] = register(
      runtime,
      { execute: () => ({ id: 7 }) },
      { execute: () => (secondRan = true) },
    );
    const job = await runtime.executePlan({
      version: '1.0',
      steps: [
        { id: 'one', capability: first as string },
        {
          id: 'two',
          capability: second as string,
          input: { value: { $ref: 'steps.one.result.toString' } },
        },
      ],
    });
    assert.deepEqual(types(job.events), [
      'job.created',
      'execution.started',
      'capability.started',
      'capability.completed',
      'capability.failed',
      'job.failed',
    ]);
    assert.equal(secondRan, false);
    assert.equal(authorizer.calls.length, 1, 'the failing step is never authorized');
    assert.match(job.error ?? '', /"toString": it is not an own property of steps\.one\.result/);
  });
});

describe('OperatorRuntime#executePlan() results and inputs', () => {
  it('sets job.result to the step result for one step and to the array of results for several', async () => {
    const runtime = runtimeWith();
    const [one, two] = register(runtime, { execute: () => ({ a: 1 }) }, { execute: () => 'two' });
    const single = await runtime.executePlan({
      version: '1.0',
      steps: [{ id: 'x', capability: one as string }],
    });
    assert.deepEqual(single.result, { a: 1 });
    const several = await runtime.executePlan({
      version: '1.0',
      steps: [
        { id: 'x', capability: one as string },
        { id: 'y', capability: two as string },
      ],
    });
    assert.deepEqual(several.result, [{ a: 1 }, 'two']);
    assert.deepEqual(
      several.steps.map((step) => step.result),
      [{ a: 1 }, 'two'],
    );
  });

  it('gives the authorizer and the capability the very same resolved input object', async () => {
    const seen: unknown[] = [];
    const authorizer = recordingAuthorizer();
    const runtime = runtimeWith({ authorizer });
    const [source, sink] = register(
      runtime,
      { execute: () => ({ user: { email: 'a@b.c' } }) },
      {
        execute: ({ input }) => {
          seen.push(input);
          return null;
        },
      },
    );
    const plainInput = { email: 'x@y.z' };
    const job = await runtime.executePlan({
      version: '1.0',
      steps: [
        { id: 'src', capability: source as string },
        {
          id: 'ref',
          capability: sink as string,
          input: { to: { $ref: 'steps.src.result.user.email' }, n: 1 },
        },
        { id: 'plain', capability: sink as string, input: plainInput },
      ],
    });
    assert.equal(job.status, 'completed');
    assert.equal(authorizer.calls[1]?.input, seen[0], 'resolved input: same object');
    assert.deepEqual(seen[0], { to: 'a@b.c', n: 1 });
    assert.equal(
      authorizer.calls[2]?.input,
      plainInput,
      'no references: the caller input root itself',
    );
    assert.equal(seen[1], plainInput);
  });

  it('sees an authorizer mutation of the input in the capability (no revalidation, docs/api.md, "runtime.executePlan")', async () => {
    let received: unknown;
    const authorizer = recordingAuthorizer((context) => {
      (context.input as { amount: number }).amount = 1;
      return { decision: 'allow' };
    });
    const runtime = runtimeWith({ authorizer });
    const [name] = register(runtime, {
      inputSchema: { amount: { type: 'number', required: true, description: 'amount' } },
      execute: ({ input }) => (received = input),
    });
    await runtime.executePlan({
      version: '1.0',
      steps: [{ id: 'x', capability: name as string, input: { amount: 5 } }],
    });
    assert.deepEqual(received, { amount: 1 });
  });

  it('hands the authorizer a frozen context with the registered identity and the caller snapshot', async () => {
    const authorizer = recordingAuthorizer();
    const runtime = runtimeWith({ authorizer });
    const [name] = register(runtime, {
      risk: 'destructive',
      version: '3.2.1',
      execute: () => null,
    });
    const caller = { id: 'u1', scopes: ['a'], metadata: { team: 'ops' } };
    const job = await runtime.executePlan(
      { version: '1.0', steps: [{ id: 'x', capability: name as string }] },
      { caller },
    );
    const context = authorizer.calls[0];
    assert.ok(context);
    assert.ok(Object.isFrozen(context));
    assert.equal(context.jobId, job.id);
    assert.equal(context.stepId, 'x');
    assert.deepEqual(context.capability, { name, version: '3.2.1', risk: 'destructive' });
    assert.deepEqual(context.caller, caller);
    assert.notEqual(context.caller, caller);
    assert.ok(Object.isFrozen(context.caller) && Object.isFrozen(context.caller?.scopes));
  });

  it('passes { jobId, stepId, caller, logger, signal } to the capability, caller identical to the authorizer one', async () => {
    let context: ExecutionContext | undefined;
    const authorizer = recordingAuthorizer();
    const runtime = runtimeWith({ authorizer });
    const [name] = register(runtime, { execute: ({ context: given }) => (context = given) });
    const job = await runtime.executePlan(
      { version: '1.0', steps: [{ id: 'x', capability: name as string }] },
      { caller: { id: 'c' } },
    );
    assert.ok(context);
    assert.equal(context.jobId, job.id);
    assert.equal(context.stepId, 'x');
    assert.equal(context.caller, authorizer.calls[0]?.caller);
    assert.equal(typeof context.logger.info, 'function');
    assert.ok(context.signal instanceof AbortSignal);
    assert.equal(context.signal.aborted, false);
  });

  it('fails the step when the resolved input breaks the field contract, before authorizing', async () => {
    const authorizer = recordingAuthorizer();
    const runtime = runtimeWith({ authorizer });
    const [source, sink] = register(
      runtime,
      { execute: () => ({ count: 'three' }) },
      {
        inputSchema: { count: { type: 'number', required: true, description: 'n' } },
        execute: () => null,
      },
    );
    const job = await runtime.executePlan({
      version: '1.0',
      steps: [
        { id: 'a', capability: source as string },
        { id: 'b', capability: sink as string, input: { count: { $ref: 'steps.a.result.count' } } },
      ],
    });
    assert.equal(
      job.error,
      'Input validation failed: input.count must be a finite number, got a string',
    );
    assert.equal(authorizer.calls.length, 1);
  });
});

describe('OperatorRuntime#executePlan() structural capture during execution', () => {
  it('ignores plan edits made from inside an authorizer or an observer', async () => {
    const ran: string[] = [];
    const plan = {
      version: '1.0' as const,
      goal: 'original',
      steps: [] as { id: string; capability: string; input?: unknown }[],
    };
    const authorizer = recordingAuthorizer(() => {
      plan.steps.length = 0;
      plan.steps.push({ id: 'evil', capability: evil as string });
      plan.goal = 'changed';
      return { decision: 'allow' };
    });
    const runtime = runtimeWith({ authorizer });
    const [good, other, evil] = register(
      runtime,
      { execute: () => ran.push('good') },
      { execute: () => ran.push('other') },
      { risk: 'destructive', execute: () => ran.push('evil') },
    );
    runtime.subscribe('capability.completed', () => {
      (plan.steps[0] as { capability: string }).capability = evil as string;
    });
    plan.steps.push(
      { id: 'one', capability: good as string },
      { id: 'two', capability: other as string },
    );
    const job = await runtime.executePlan(plan);
    assert.equal(job.status, 'completed');
    assert.deepEqual(ran, ['good', 'other']);
    assert.equal(job.goal, 'original');
    assert.deepEqual(
      job.steps.map((step) => [step.id, step.capability]),
      [
        ['one', good],
        ['two', other],
      ],
    );
  });
});

describe('executeAdmittedPlan() with a failing store', () => {
  it('rejects with JOB_STORE_FAILED (cause kept) and never invokes the capability when the started record cannot be written', async () => {
    const { captureSubmission } = await import('../../src/plan/capture.js');
    const { admitPlan } = await import('../../src/plan/admission.js');
    const { capabilityInventory } = await import('../../src/capabilities/inventory.js');
    const { executeAdmittedPlan } = await import('../../src/runtime/executor.js');
    const { EventBus } = await import('../../src/events/event-bus.js');
    const { defaultAuthorizer } = await import('../../src/authorization/default-policy.js');
    let invoked = 0;
    const runtime = runtimeWith();
    const [name] = register(runtime, { execute: () => invoked++ });
    const inventory = capabilityInventory();
    const admitted = admitPlan(
      captureSubmission({ version: '1.0', steps: [{ id: 'x', capability: name }] }, 10),
      (key) => inventory.get(key),
    );
    const diskFull = new Error('SQLITE_FULL: database or disk is full');
    let writes = 0;
    const store = {
      create() {},
      update() {
        writes++;
        if (writes === 1) throw diskFull; // creation also starts the job: 1 is capability.started
      },
      get: () => undefined,
      list: () => [],
      close() {},
    };
    await assert.rejects(
      executeAdmittedPlan(admitted, undefined, {
        store,
        bus: new EventBus(() => {}),
        authorizer: defaultAuthorizer,
        logger: console as never,
        signal: new AbortController().signal,
      }),
      (error: Error & { code?: string }) => {
        assert.equal(error.code, 'JOB_STORE_FAILED');
        assert.equal(error.cause, diskFull);
        assert.equal(error.message, 'The job store failed: SQLITE_FULL: database or disk is full');
        return true;
      },
    );
    assert.equal(invoked, 0);
  });
});
