import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { recordValue } from '../../src/jobs/recorded-value.js';
import {
  completeJob,
  createJob,
  endStep,
  failJob,
  interruptStep,
  joinChanges,
  recoverJob,
  startStep,
  type Decided,
  type NewJob,
} from '../../src/jobs/transitions.js';

const AT = '2026-11-23T00:00:00.000Z';
const LATER = '2026-11-23T00:00:00.005Z';

function plan(steps: number): NewJob {
  return {
    id: 'plan',
    goal: 'g',
    metadata: undefined,
    idempotencyKey: undefined,
    steps: Array.from({ length: steps }, (_, index) => ({
      id: `s${index}`,
      capability: { name: `cap${index}` },
      capabilityVersion: undefined,
      input: { n: index },
      reason: undefined,
      idempotencyKey: undefined,
    })),
  };
}

function decided(
  outcome: Decided['outcome'],
  input: unknown,
  more: Partial<Decided> = {},
): Decided {
  return {
    outcome,
    reason: undefined,
    authorizer: undefined,
    capabilityVersion: '1.0.0',
    at: AT,
    input,
    recorded: recordValue(input, 'input'),
    resolved: false,
    ...more,
  };
}

const types = (change: { events: readonly { type: string }[] }) =>
  change.events.map((event) => event.type);

describe('job transitions', () => {
  it('creates a job already started, every step pending, and names every step and both events', () => {
    const caller = Object.freeze({ id: 'alice' });
    const { running, change } = createJob(plan(2), caller, 'j', AT);
    const { job } = running;
    assert.equal(job.status, 'executing');
    assert.equal(job.startedAt, AT);
    assert.equal(job.planId, 'plan');
    assert.equal(job.caller, caller);
    assert.deepEqual(
      job.steps.map((step) => [step.id, step.capability, step.status]),
      [
        ['s0', 'cap0', 'pending'],
        ['s1', 'cap1', 'pending'],
      ],
    );
    assert.deepEqual(change.steps, [0, 1]);
    assert.equal(change.decided, undefined);
    assert.deepEqual(types(change), ['job.created', 'execution.started']);
    assert.deepEqual(change.events, job.events);
    assert.deepEqual(job.events[0], {
      id: 'j:1',
      jobId: 'j',
      type: 'job.created',
      timestamp: AT,
      data: {
        goal: 'g',
        caller: { id: 'alice' },
        record: (job.events[0]?.data as { record: string }).record,
      },
    });
    assert.match(String(job.events[0]?.data?.record), /^sha256:[0-9a-f]{64}$/);
    assert.deepEqual(job.events[1], {
      id: 'j:2',
      jobId: 'j',
      type: 'execution.started',
      timestamp: AT,
    });
    assert.equal('data' in (job.events[1] as object), false, 'no data key when there is none');
    assert.ok(job.events.every((event) => Object.isFrozen(event)));
    assert.equal('caller' in createJob(plan(1), undefined, 'k', AT).running.job, false);
  });

  it('leaves a finished record with every step and every event, the events shared with the job', () => {
    for (const outcome of ['completed', 'failed'] as const) {
      const { running } = createJob(plan(3), undefined, 'j', AT);
      const { job, record } = running;
      for (let index = 0; index < 3; index++) {
        startStep(running, index, LATER, decided('allow', { n: index }));
        endStep(running, index, LATER, { status: 'completed', result: index });
      }
      if (outcome === 'completed') completeJob(running, LATER);
      else failJob(running, LATER, 'stopped');
      for (const face of [job, record]) {
        assert.equal(face.steps.length, 3);
        assert.deepEqual(Object.keys(face.steps), ['0', '1', '2'], 'no holes');
      }
      assert.equal(record.events.length, 9);
      assert.ok(record.events.every((event, index) => event === job.events[index]));
      assert.deepEqual(
        record.events.map((event) => event.id),
        Array.from({ length: 9 }, (_, index) => `j:${index + 1}`),
      );
      assert.equal(
        record.events.at(-1)?.type,
        outcome === 'completed' ? 'job.completed' : 'job.failed',
      );
    }
  });

  it('starts a step with its decision, naming only that step, and completes it with the result digest', () => {
    const { running } = createJob(plan(2), undefined, 'j', AT);
    const { job } = running;
    const allow = decided('allow', { n: 1 }, { authorizer: 'policy' });
    const started = startStep(running, 1, LATER, allow);
    assert.deepEqual(started.steps, [1]);
    assert.equal(started.decided, 1);
    assert.deepEqual(types(started), ['capability.started']);
    assert.deepEqual(started.events[0]?.data, {
      stepId: 's1',
      capability: 'cap1',
      inputDigest: allow.recorded.digest,
      capabilityVersion: '1.0.0',
      authorizer: 'policy',
    });
    const step = job.steps[1];
    assert.equal(step?.status, 'running');
    assert.equal(step?.startedAt, LATER);
    assert.deepEqual(step?.decision, {
      outcome: 'allow',
      inputDigest: allow.recorded.digest,
      capabilityVersion: '1.0.0',
      decidedAt: AT,
      authorizer: 'policy',
    });
    assert.ok(Object.isFrozen(step?.decision));
    assert.equal('resolvedInput' in (step ?? {}), false, 'no references, no resolved input');
    assert.equal(job.updatedAt, LATER);
    const ended = endStep(running, 1, LATER, { status: 'completed', result: 42 });
    assert.deepEqual(ended.steps, [1]);
    assert.equal(ended.decided, undefined);
    assert.deepEqual(ended.events[0]?.data, {
      stepId: 's1',
      capability: 'cap1',
      resultDigest: recordValue(42, 'result').digest,
    });
    assert.equal(job.steps[1]?.result, 42);
    assert.equal(job.steps[0]?.status, 'pending');
    assert.equal(job.events.at(-1)?.id, 'j:4');
  });

  it('keeps the input as authorized on a step with references', () => {
    const { running } = createJob(plan(1), undefined, 'j', AT);
    const { job } = running;
    const resolved = { n: 'resolved' };
    startStep(running, 0, AT, decided('allow', resolved, { resolved: true }));
    assert.equal(job.steps[0]?.resolvedInput, resolved);
  });

  it('fails the job: the denied step (with its decision) and the skipped ones are in the change', () => {
    const { running } = createJob(plan(3), undefined, 'j', AT);
    const { job } = running;
    endStep(running, 0, AT, { status: 'completed', result: 1 });
    const deny = decided('deny', { n: 1 }, { reason: 'no' });
    const denied = endStep(running, 1, LATER, {
      status: 'denied',
      reason: 'no',
      risk: 'write',
      decided: deny,
    });
    const failed = failJob(running, LATER, 'no');
    const change = joinChanges(denied, failed);
    assert.deepEqual(failed.steps, [2]);
    assert.deepEqual(change.steps, [1, 2]);
    assert.equal(change.decided, 1);
    assert.deepEqual(types(change), ['capability.denied', 'job.failed']);
    assert.deepEqual(change.events[0]?.data, {
      stepId: 's1',
      capability: 'cap1',
      risk: 'write',
      reason: 'no',
      inputDigest: deny.recorded.digest,
      outcome: 'deny',
      capabilityVersion: deny.capabilityVersion,
      decidedAt: deny.at,
    });
    assert.deepEqual(job.steps[1]?.decision?.outcome, 'deny');
    assert.deepEqual(job.steps[1]?.decision?.reason, 'no');
    assert.deepEqual(
      job.steps.map((step) => step.status),
      ['completed', 'failed', 'skipped'],
    );
    assert.equal(job.steps[1]?.error, 'no');
    assert.equal(job.status, 'failed');
    assert.equal(job.outcome, 'failed');
    assert.equal(job.error, 'no');
    assert.equal(job.completedAt, LATER);
  });

  it('records capability.failed with the input digest only when a decision was made', () => {
    const { running } = createJob(plan(3), undefined, 'j', AT);
    const { job } = running;
    const before = endStep(running, 0, LATER, { status: 'failed', error: 'bad reference' });
    assert.deepEqual(before.events[0]?.data, {
      stepId: 's0',
      capability: 'cap0',
      error: 'bad reference',
    });
    assert.equal(job.steps[0]?.decision, undefined);
    const thrown = decided('error', { n: 1 }, { reason: 'authorizer down' });
    const atDecision = endStep(running, 1, LATER, {
      status: 'failed',
      error: 'authorizer down',
      decided: thrown,
    });
    assert.equal(atDecision.decided, 1);
    assert.equal(atDecision.events[0]?.data?.inputDigest, thrown.recorded.digest);
    assert.equal(job.steps[1]?.decision?.outcome, 'error');
    const allow = decided('allow', { n: 2 });
    startStep(running, 2, LATER, allow);
    const afterStart = endStep(running, 2, LATER, { status: 'failed', error: 'boom' });
    assert.equal(afterStart.decided, undefined, 'the decision was written when the step started');
    assert.equal(afterStart.events[0]?.data?.inputDigest, allow.recorded.digest);
    assert.equal(job.steps[2]?.error, 'boom');
  });

  it('completes the job with the one result, or the array of results, naming no step', () => {
    const oneRun = createJob(plan(1), undefined, 'a', AT).running;
    const one = oneRun.job;
    endStep(oneRun, 0, AT, { status: 'completed', result: { r: 1 } });
    const done = completeJob(oneRun, LATER);
    assert.deepEqual(done.steps, []);
    assert.deepEqual(types(done), ['job.completed']);
    assert.deepEqual(done.events[0]?.data, { stepCount: 1 });
    assert.deepEqual(one.result, { r: 1 });
    assert.equal(one.outcome, 'success');
    const twoRun = createJob(plan(2), undefined, 'b', AT).running;
    const two = twoRun.job;
    endStep(twoRun, 0, AT, { status: 'completed', result: 1 });
    endStep(twoRun, 1, AT, { status: 'completed', result: 2 });
    completeJob(twoRun, LATER);
    assert.deepEqual(two.result, [1, 2]);
  });

  it('keeps two faces: the job with values as given, the record with each value encoded when it happened', () => {
    const input = { when: new Date(0), n: 1n };
    const { running } = createJob(
      { ...plan(1), steps: [{ ...(plan(1).steps[0] as NewJob['steps'][number]), input }] },
      { id: 'c', tags: new Set(['a']) } as never,
      'j',
      AT,
    );
    const { job, record } = running;
    assert.equal(job.steps[0]?.input, input);
    assert.deepEqual(record.steps[0]?.input, { when: '1970-01-01T00:00:00.000Z', n: '1' });
    assert.deepEqual(record.caller, { id: 'c', tags: ['a'] });
    startStep(running, 0, AT, decided('allow', input));
    const result = { list: [1] };
    endStep(running, 0, LATER, { status: 'completed', result });
    completeJob(running, LATER);
    result.list.push(2);
    assert.equal(job.result, result);
    assert.deepEqual(record.steps[0]?.result, { list: [1] });
    assert.deepEqual(record.result, { list: [1] });
    assert.equal(job.events[2], record.events[2], 'one frozen event object, shared');
    assert.ok(Object.isFrozen(record.events[2]) && Object.isFrozen(record.events[2]?.data));
    assert.equal(job.status, record.status);
    assert.equal(job.completedAt, record.completedAt);
  });

  it('keeps the input as authorized when the submitted input changed after it was recorded', () => {
    const input = { n: 1 };
    const { running } = createJob(
      { ...plan(1), steps: [{ ...(plan(1).steps[0] as NewJob['steps'][number]), input }] },
      undefined,
      'j',
      AT,
    );
    input.n = 2;
    startStep(running, 0, AT, decided('allow', input));
    assert.deepEqual(running.record.steps[0]?.input, { n: 1 });
    assert.deepEqual(running.record.steps[0]?.resolvedInput, { n: 2 });
    assert.equal(running.job.steps[0]?.resolvedInput, input);
  });

  it('records an absent input as authorized as null, so its digest (that of null) checks out', () => {
    const { running } = createJob(plan(1), undefined, 'j', AT);
    startStep(running, 0, AT, decided('allow', undefined, { resolved: true }));
    assert.equal(running.record.steps[0]?.resolvedInput, null);
  });

  it('records a recovery (job.recovered { by }, no step) and an interrupted step (its row only)', () => {
    const { running } = createJob(plan(2), undefined, 'j', AT);
    startStep(running, 0, AT, decided('allow', { n: 1 }));
    const recovered = recoverJob(running, LATER, 'owner-1');
    assert.deepEqual(recovered.steps, []);
    assert.deepEqual(types(recovered), ['job.recovered']);
    assert.deepEqual(recovered.events[0]?.data, { by: 'owner-1' });
    const interrupted = interruptStep(running, 0, LATER);
    assert.deepEqual(interrupted.steps, [0]);
    assert.equal(interrupted.decided, undefined);
    assert.deepEqual(interrupted.events[0]?.data, { stepId: 's0', capability: 'cap0' });
    assert.equal(running.job.steps[0]?.status, 'interrupted');
    assert.equal(running.record.steps[0]?.status, 'interrupted');
    assert.equal(running.record.steps[0]?.completedAt, undefined);
    assert.equal(running.record.updatedAt, LATER);
  });
});
