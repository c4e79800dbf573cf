// The decision record (docs/api.md, "The decision record"): every step that reaches
// authorization records its decision; digests are SHA-256 over the RFC 8785 text of the value as
// recorded, computed here from that definition.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import type { ExecutionAuthorizer, Job, JobStep } from '../../src/index.js';
import { canonicalJson } from '../../src/json/canonical-json.js';
import { toJsonSafe } from '../../src/json/json-value.js';
import { recordingAuthorizer, register, runtimeWith } from '../support/runtime-fixtures.js';

const digestOf = (value: unknown): string =>
  `sha256:${createHash('sha256')
    .update(canonicalJson(toJsonSafe(value) ?? null))
    .digest('hex')}`;

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

function eventOf(job: Job, type: string, stepId: string) {
  return job.events.find((event) => event.type === type && event.data?.stepId === stepId);
}

describe('the decision record', () => {
  it('records an allowed step: outcome, input digest, registered version, time and the authorizer name', async () => {
    const authorizer = Object.assign(recordingAuthorizer(), { name: 'policy-v2' });
    const runtime = runtimeWith({ authorizer });
    const [name] = register(runtime, { version: '3.1.0', execute: () => ({ ok: [1, 2] }) });
    const input = { path: 'a.txt', when: new Date(0), n: 1n };
    const job = await runtime.executePlan({
      version: '1.0',
      steps: [{ id: 's', capability: name as string, input }],
    });
    assert.equal(job.status, 'completed');
    const step = job.steps[0] as JobStep;
    assert.deepEqual(
      { ...step.decision, decidedAt: 'time' },
      {
        outcome: 'allow',
        inputDigest: digestOf(input),
        capabilityVersion: '3.1.0',
        decidedAt: 'time',
        authorizer: 'policy-v2',
      },
    );
    assert.match(step.decision?.decidedAt ?? '', ISO);
    assert.equal('resolvedInput' in step, false, 'no references: the input as submitted is it');
    assert.equal(eventOf(job, 'capability.started', 's')?.data?.inputDigest, digestOf(input));
    assert.equal(
      eventOf(job, 'capability.completed', 's')?.data?.resultDigest,
      digestOf({ ok: [1, 2] }),
    );
    assert.equal(job.caller, undefined);
    assert.equal('caller' in job, false);
  });

  it('digests, when first read, exactly the input the authorizer was asked about, whatever changes it later', async () => {
    // docs/decisions.md, "The record nearly free": the digest is computed on first read. An
    // authorizer that never reads it and then changes the input, and a capability that changes
    // it again, change neither the decision's digest nor its event's nor the authorizer's own.
    let asked: { inputDigest?: string } | undefined;
    const authorizer: ExecutionAuthorizer = {
      authorize(context) {
        asked = context;
        (context.input as { n: number; added?: string }).n = 2;
        return { decision: 'allow' };
      },
    };
    const runtime = runtimeWith({ authorizer });
    const [name] = register(runtime, {
      execute: ({ input: given }: { input: unknown }) => {
        const input = given as { n: number; added?: string; list?: number[] };
        input.n = 3;
        input.added = 'later';
        input.list?.push(4);
        return 'done';
      },
    });
    const input = { n: 1, list: [1, 2, 3] };
    const before = digestOf(input);
    const job = await runtime.executePlan({
      version: '1.0',
      steps: [{ id: 's', capability: name as string, input }],
    });
    assert.equal(job.status, 'completed', job.error);
    assert.deepEqual(input, { n: 3, added: 'later', list: [1, 2, 3, 4] }, 'the same object ran');
    assert.equal(job.steps[0]?.decision?.inputDigest, before);
    assert.equal(eventOf(job, 'capability.started', 's')?.data?.inputDigest, before);
    assert.equal(asked?.inputDigest, before);
    assert.deepEqual(await runtime.verifyJob(job.id), { ok: true, events: job.events.length });
    await runtime.close();
  });

  it('leaves out the authorizer name when the authorizer has no own string name', async () => {
    const runtime = runtimeWith();
    const [name] = register(runtime, { execute: () => 1 });
    const job = await runtime.executePlan({
      version: '1.0',
      steps: [{ id: 's', capability: name as string }],
    });
    assert.equal(job.steps[0]?.decision?.outcome, 'allow');
    assert.equal('authorizer' in (job.steps[0]?.decision ?? {}), false);
    assert.equal(job.steps[0]?.decision?.inputDigest, digestOf(null));
  });

  it('records a denial with its reason, on the step and in capability.denied', async () => {
    const runtime = runtimeWith();
    const [write] = register(runtime, { risk: 'write', execute: () => 1 });
    const job = await runtime.executePlan({
      version: '1.0',
      steps: [{ id: 'w', capability: write as string, input: { to: 'x' } }],
    });
    const decision = job.steps[0]?.decision;
    assert.equal(decision?.outcome, 'deny');
    assert.equal(decision?.reason, 'Write capability requires explicit approval.');
    assert.equal(decision?.inputDigest, digestOf({ to: 'x' }));
    assert.equal(eventOf(job, 'capability.denied', 'w')?.data?.inputDigest, digestOf({ to: 'x' }));
    // Part I is unchanged: the same message on the step, the job and the event.
    assert.equal(job.steps[0]?.error, 'Write capability requires explicit approval.');
    assert.equal(job.error, 'Write capability requires explicit approval.');
  });

  it('records a malformed decision as invalid and a throwing or rejecting authorizer as error', async () => {
    const answers: [string, ExecutionAuthorizer['authorize'], string | undefined][] = [
      ['invalid', () => ({ decision: 'yes' }) as never, undefined],
      [
        'error',
        () => {
          throw new Error('policy down');
        },
        'policy down',
      ],
      ['error', () => Promise.reject(new Error('policy rejected')), 'policy rejected'],
    ];
    for (const [outcome, authorize, reason] of answers) {
      const runtime = runtimeWith({ authorizer: { authorize } });
      const [name] = register(runtime, { execute: () => 1 });
      const job = await runtime.executePlan({
        version: '1.0',
        steps: [{ id: 's', capability: name as string, input: { n: 1 } }],
      });
      assert.equal(job.status, 'failed');
      assert.equal(job.steps[0]?.decision?.outcome, outcome);
      assert.equal(job.steps[0]?.decision?.reason, reason);
      assert.equal(
        eventOf(job, 'capability.failed', 's')?.data?.inputDigest,
        digestOf({ n: 1 }),
        outcome,
      );
    }
  });

  it('records no decision, and no input digest, for a step that never reached authorization', async () => {
    const runtime = runtimeWith();
    const [name, checked] = register(
      runtime,
      { execute: () => ({ value: 1 }) },
      {
        inputSchema: { count: { type: 'number', required: true, description: 'n' } },
        execute: () => 1,
      },
    );
    const badReference = await runtime.executePlan({
      version: '1.0',
      steps: [
        { id: 'a', capability: name as string },
        { id: 'b', capability: name as string, input: { $ref: 'steps.a.result.missing' } },
      ],
    });
    assert.equal(badReference.steps[1]?.status, 'failed');
    assert.equal(badReference.steps[1]?.decision, undefined);
    assert.equal(
      'inputDigest' in (eventOf(badReference, 'capability.failed', 'b')?.data ?? {}),
      false,
    );
    const badInput = await runtime.executePlan({
      version: '1.0',
      steps: [
        { id: 'a', capability: name as string },
        { id: 'b', capability: checked as string, input: { count: { $ref: 'steps.a.result' } } },
      ],
    });
    assert.match(badInput.steps[1]?.error ?? '', /^Input validation failed/);
    assert.equal(badInput.steps[1]?.decision, undefined);
    assert.equal('inputDigest' in (eventOf(badInput, 'capability.failed', 'b')?.data ?? {}), false);
  });

  it('keeps the input digest on capability.failed when the capability itself fails', async () => {
    const runtime = runtimeWith();
    const [name] = register(runtime, {
      execute: () => {
        throw new Error('boom');
      },
    });
    const job = await runtime.executePlan({
      version: '1.0',
      steps: [{ id: 's', capability: name as string, input: { n: 2 } }],
    });
    assert.equal(job.steps[0]?.decision?.outcome, 'allow');
    assert.equal(eventOf(job, 'capability.failed', 's')?.data?.inputDigest, digestOf({ n: 2 }));
    assert.equal(eventOf(job, 'capability.failed', 's')?.data?.error, 'boom');
  });

  it('records the input as authorized for a step with references, and digests that', async () => {
    const authorizer = recordingAuthorizer();
    const runtime = runtimeWith({ authorizer });
    const [first, second] = register(
      runtime,
      { execute: () => ({ user: { id: 7 } }) },
      { execute: ({ input }) => input },
    );
    const job = await runtime.executePlan({
      version: '1.0',
      steps: [
        { id: 'a', capability: first as string },
        {
          id: 'b',
          capability: second as string,
          input: { id: { $ref: 'steps.a.result.user.id' }, fixed: true },
        },
      ],
    });
    const step = job.steps[1] as JobStep;
    assert.deepEqual(step.input, { id: { $ref: 'steps.a.result.user.id' }, fixed: true });
    assert.deepEqual(step.resolvedInput, { id: 7, fixed: true });
    assert.equal(step.resolvedInput, authorizer.calls[1]?.input, 'the very object authorized');
    assert.equal(step.decision?.inputDigest, digestOf({ id: 7, fixed: true }));
    assert.equal(
      eventOf(job, 'capability.started', 'b')?.data?.inputDigest,
      digestOf({ id: 7, fixed: true }),
    );
  });

  it('records the caller snapshot on the job when a caller is given', async () => {
    const runtime = runtimeWith();
    const [name] = register(runtime, { execute: () => 1 });
    const caller = { id: 'alice', scopes: ['read'], metadata: { team: 'ops' } };
    const job = await runtime.executePlan(
      { version: '1.0', steps: [{ id: 's', capability: name as string }] },
      { caller },
    );
    assert.deepEqual(job.caller, caller);
    assert.notEqual(job.caller, caller, 'a snapshot, not the object given');
    assert.ok(Object.isFrozen(job.caller));
  });

  it('never throws on values whose getters throw: recorded with the substitution, digested as recorded', async () => {
    const runtime = runtimeWith();
    const hostile = {
      get secret(): never {
        throw new Error('no');
      },
    };
    const [producer, consumer] = register(
      runtime,
      { execute: () => hostile },
      { execute: () => 'ran' },
    );
    const job = await runtime.executePlan({
      version: '1.0',
      steps: [
        { id: 'a', capability: producer as string },
        { id: 'b', capability: consumer as string, input: { from: { $ref: 'steps.a.result' } } },
      ],
    });
    assert.equal(job.status, 'completed');
    assert.equal(
      eventOf(job, 'capability.completed', 'a')?.data?.resultDigest,
      digestOf('[Unreadable]'),
    );
    assert.equal(job.steps[1]?.decision?.inputDigest, digestOf({ from: '[Unreadable]' }));
  });
});
