import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  completeJob,
  createJob,
  endStep,
  failJob,
  joinChanges,
  startStep,
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

const types = (change: { events: readonly { type: string }[] }) =>
  change.events.map((event) => event.type);

describe('job transitions', () => {
  it('creates a job already started, every step pending, and names every step and both events', () => {
    const { job, change } = createJob(plan(2), 'j', AT);
    assert.equal(job.status, 'executing');
    assert.equal(job.startedAt, AT);
    assert.equal(job.planId, 'plan');
    assert.deepEqual(
      job.steps.map((step) => [step.id, step.capability, step.status]),
      [
        ['s0', 'cap0', 'pending'],
        ['s1', 'cap1', 'pending'],
      ],
    );
    assert.deepEqual(change.steps, [0, 1]);
    assert.deepEqual(types(change), ['job.created', 'execution.started']);
    assert.deepEqual(change.events, job.events);
    assert.deepEqual(job.events[0], {
      id: 'j:1',
      jobId: 'j',
      type: 'job.created',
      timestamp: AT,
      data: { goal: 'g' },
    });
  });

  it('starts and completes a step, naming only that step', () => {
    const { job } = createJob(plan(2), 'j', AT);
    const started = startStep(job, 1, LATER);
    assert.deepEqual(started.steps, [1]);
    assert.deepEqual(types(started), ['capability.started']);
    assert.equal(job.steps[1]?.status, 'running');
    assert.equal(job.steps[1]?.startedAt, LATER);
    assert.equal(job.updatedAt, LATER);
    const ended = endStep(job, 1, LATER, { status: 'completed', result: 42 });
    assert.deepEqual(ended.steps, [1]);
    assert.deepEqual(ended.events[0]?.data, { stepId: 's1', capability: 'cap1' });
    assert.equal(job.steps[1]?.result, 42);
    assert.equal(job.steps[0]?.status, 'pending');
    assert.equal(job.events.at(-1)?.id, 'j:4');
  });

  it('fails the job: the failing step and the skipped ones are in the change, the skipped ones from failJob', () => {
    const { job } = createJob(plan(3), 'j', AT);
    endStep(job, 0, AT, { status: 'completed', result: 1 });
    const denied = endStep(job, 1, LATER, { status: 'denied', reason: 'no', risk: 'write' });
    const failed = failJob(job, LATER, 'no');
    const change = joinChanges(denied, failed);
    assert.deepEqual(failed.steps, [2]);
    assert.deepEqual(change.steps, [1, 2]);
    assert.deepEqual(types(change), ['capability.denied', 'job.failed']);
    assert.deepEqual(change.events[0]?.data, {
      stepId: 's1',
      capability: 'cap1',
      risk: 'write',
      reason: 'no',
    });
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

  it('records a failed step with capability.failed and its error', () => {
    const { job } = createJob(plan(1), 'j', AT);
    const change = endStep(job, 0, LATER, { status: 'failed', error: 'boom' });
    assert.deepEqual(change.events[0]?.data, { stepId: 's0', capability: 'cap0', error: 'boom' });
    assert.equal(job.steps[0]?.status, 'failed');
    assert.equal(job.steps[0]?.error, 'boom');
  });

  it('completes the job with the one result, or the array of results, naming no step', () => {
    const one = createJob(plan(1), 'a', AT).job;
    endStep(one, 0, AT, { status: 'completed', result: { r: 1 } });
    const done = completeJob(one, LATER);
    assert.deepEqual(done.steps, []);
    assert.deepEqual(types(done), ['job.completed']);
    assert.deepEqual(done.events[0]?.data, { stepCount: 1 });
    assert.deepEqual(one.result, { r: 1 });
    assert.equal(one.outcome, 'success');
    const two = createJob(plan(2), 'b', AT).job;
    endStep(two, 0, AT, { status: 'completed', result: 1 });
    endStep(two, 1, AT, { status: 'completed', result: 2 });
    completeJob(two, LATER);
    assert.deepEqual(two.result, [1, 2]);
  });
});
