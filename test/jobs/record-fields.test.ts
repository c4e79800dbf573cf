// The fields a reader sees, proven by the events (docs/api.md, "runtime.verifyJob"): a record
// as transitions.ts writes it passes, every field edited on its own is named.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Job, JobStep } from '../../src/jobs/job.js';
import { checkFields, provesFields } from '../../src/jobs/record-fields.js';
import { recordValue } from '../../src/jobs/recorded-value.js';
import {
  awaitApproval,
  createJob,
  endStep,
  failJob,
  grantApproval,
  interruptStep,
  joinChanges,
  recoverJob,
  rejectApproval,
  startStep,
  type Decided,
  type NewJob,
} from '../../src/jobs/transitions.js';

const AT = '2026-11-23T00:00:00.000Z';
const LATER = '2026-11-23T00:00:01.000Z';

function decided(outcome: Decided['outcome'], reason?: string): Decided {
  return {
    outcome,
    reason,
    authorizer: 'house rules',
    capabilityVersion: '2',
    at: AT,
    input: { n: 1 },
    recorded: recordValue({ n: 1 }, 'input'),
    resolved: false,
  };
}

const plan: NewJob = {
  id: 'plan-1',
  goal: 'pay',
  metadata: { team: 'ops' },
  idempotencyKey: 'once',
  steps: ['a', 'b', 'c'].map((id) => ({
    id,
    capability: { name: `cap.${id}` },
    capabilityVersion: '2',
    input: { n: 1 },
    reason: `why ${id}`,
    idempotencyKey: undefined,
  })),
};

const stored = (job: Job): Job => JSON.parse(JSON.stringify(job)) as Job;

/** a ran, b was requested, granted, requested again and rejected; c skipped. */
function decidedJob(): Job {
  const { running } = createJob(plan, { id: 'alice' }, 'j', AT);
  startStep(running, 0, AT, decided('allow'));
  endStep(running, 0, LATER, { status: 'completed', result: 1 });
  awaitApproval(running, 1, {
    status: 'awaiting_approval',
    risk: 'write',
    decided: decided('approval_required', 'a person decides'),
    expiresAt: LATER,
  });
  grantApproval(running, 1, LATER, 'bob', 'looks right');
  awaitApproval(running, 1, {
    status: 'awaiting_approval',
    risk: 'write',
    decided: decided('approval_required'),
    expiresAt: LATER,
  });
  rejectApproval(running, 1, LATER, 'carol', 'not today');
  return stored(running.record);
}

const step = (job: Job, index: number) => job.steps[index] as JobStep;

/** a ran; b started, its process died; recovered: b interrupted, the job failed. */
function interruptedJob(): Job {
  const { running } = createJob(plan, { id: 'alice' }, 'r', AT);
  startStep(running, 0, AT, decided('allow'));
  endStep(running, 0, LATER, { status: 'completed', result: 1 });
  startStep(running, 1, AT, decided('allow'));
  recoverJob(running, LATER, 'owner-000000000000000000000001');
  joinChanges(interruptStep(running, 1, LATER), failJob(running, LATER, 'STEP_INTERRUPTED: b'));
  return stored(running.record);
}

describe('checkFields() of a recovered job', () => {
  it('replays job.recovered and step.interrupted: an honest record checks out', () => {
    const job = interruptedJob();
    assert.deepEqual(job.events.map((event) => event.type).slice(-3), [
      'job.recovered',
      'step.interrupted',
      'job.failed',
    ]);
    assert.deepEqual(
      job.steps.map((entry) => entry.status),
      ['completed', 'interrupted', 'skipped'],
    );
    assert.equal(checkFields(job), undefined);
  });

  it('catches an interrupted step shown as completed, failed or still running', () => {
    for (const status of ['completed', 'failed', 'running'] as const) {
      const job = interruptedJob();
      step(job, 1).status = status;
      assert.match(checkFields(job)?.reason ?? '', /step b is .* but its events say interrupted/);
    }
  });
});

describe('checkFields()', () => {
  it('accepts records of every kind written by the transitions', () => {
    const job = decidedJob();
    assert.equal(provesFields(job), true);
    assert.equal(checkFields(job), undefined);
    const { running } = createJob(plan, undefined, 'k', AT);
    const denied = endStep(running, 0, LATER, {
      status: 'denied',
      reason: 'no',
      risk: 'write',
      decided: decided('deny', 'no'),
    });
    joinChanges(denied, failJob(running, LATER, 'no'));
    assert.equal(checkFields(stored(running.record)), undefined);
    const waiting = createJob(plan, undefined, 'w', AT).running;
    awaitApproval(waiting, 0, {
      status: 'awaiting_approval',
      risk: 'write',
      decided: decided('approval_required'),
      expiresAt: LATER,
    });
    assert.equal(checkFields(stored(waiting.record)), undefined);
  });

  it('names each edited field', () => {
    const edits: [(job: Job) => void, RegExp][] = [
      [(job) => ((job as { goal: string }).goal = 'other'), /goal/],
      [(job) => ((job as { caller: unknown }).caller = { id: 'mallory' }), /caller/],
      [(job) => ((job as { metadata: unknown }).metadata = { team: 'x' }), /metadata or steps/],
      [(job) => ((job as { planId: unknown }).planId = 'p2'), /plan id/],
      [(job) => ((step(job, 2) as { reason: string }).reason = 'r'), /steps/],
      [(job) => ((step(job, 2) as { capabilityVersion: string }).capabilityVersion = '3'), /steps/],
      [(job) => job.steps.reverse(), /steps/],
      [(job) => (job.status = 'completed'), /the job is completed but its events say failed/],
      [(job) => (job.error = 'other'), /job's error/],
      [(job) => (job.outcome = 'success'), /job's outcome/],
      [(job) => (step(job, 2).status = 'pending'), /step c is pending but its events say skipped/],
      [(job) => (step(job, 1).error = 'Approval rejected'), /error of step b/],
      [
        (job) =>
          ((step(job, 1) as { decision: unknown }).decision = {
            ...step(job, 1).decision,
            reason: 'forged',
          }),
        /decision of step b/,
      ],
      [
        (job) =>
          ((step(job, 0) as { decision: unknown }).decision = {
            ...step(job, 0).decision,
            capabilityVersion: '1',
          }),
        /decision of step a/,
      ],
    ];
    for (const [edit, named] of edits) {
      const job = decidedJob();
      edit(job);
      assert.match(checkFields(job)?.reason ?? 'intact', named);
    }
  });

  it('knows a record written before its events carried the fields', () => {
    const job = decidedJob();
    (job.events[0] as { data: unknown }).data = { goal: 'pay' };
    assert.equal(provesFields(job), false);
  });
});
