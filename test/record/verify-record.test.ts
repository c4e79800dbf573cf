import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { chainHashes } from '../../src/record/event-chain.js';
import type { Job, JobStep } from '../../src/jobs/job.js';
import { recordValue } from '../../src/jobs/recorded-value.js';
import {
  completeJob,
  createJob,
  endStep,
  failJob,
  joinChanges,
  startStep,
  type Decided,
  type NewJob,
} from '../../src/jobs/transitions.js';
import { NO_CHAIN, verifyRecord } from '../../src/record/verify-record.js';

const AT = '2026-11-23T00:00:00.000Z';

function decided(outcome: Decided['outcome'], input: unknown, resolved = false): Decided {
  return {
    outcome,
    reason: outcome === 'deny' ? 'no' : undefined,
    authorizer: undefined,
    capabilityVersion: '1',
    at: AT,
    input,
    recorded: recordValue(input, 'input'),
    resolved,
  };
}

const plan: NewJob = {
  id: undefined,
  goal: 'g',
  metadata: undefined,
  idempotencyKey: undefined,
  steps: [
    {
      id: 'a',
      capability: { name: 'make' },
      capabilityVersion: undefined,
      input: { n: 1 },
      reason: undefined,
      idempotencyKey: undefined,
    },
    {
      id: 'b',
      capability: { name: 'use' },
      capabilityVersion: undefined,
      input: { x: { $ref: 'steps.a.result' } },
      reason: undefined,
      idempotencyKey: undefined,
    },
  ],
};

/** A completed two-step record, as a store would return it (a JSON round trip). */
function completed(): Job {
  const { running } = createJob(plan, { id: 'alice' }, 'j', AT);
  startStep(running, 0, AT, decided('allow', { n: 1 }));
  endStep(running, 0, AT, { status: 'completed', result: { made: true } });
  startStep(running, 1, AT, decided('allow', { x: { made: true } }, true));
  endStep(running, 1, AT, { status: 'completed', result: 'used' });
  completeJob(running, AT);
  return JSON.parse(JSON.stringify(running.record)) as Job;
}

const step = (job: Job, index: number) => job.steps[index] as JobStep;

describe('verifyRecord()', () => {
  it('accepts an intact record, with or without its chain, and a failed one', () => {
    const job = completed();
    assert.deepEqual(verifyRecord(job, undefined, undefined), { ok: true, events: 7 });
    const hashes = chainHashes('', job.events, undefined);
    assert.deepEqual(verifyRecord(job, hashes, undefined), { ok: true, events: 7 });
    const keyed = chainHashes('', job.events, 'k');
    assert.deepEqual(verifyRecord(job, keyed, 'k'), { ok: true, events: 7 });

    const { running } = createJob(plan, undefined, 'f', AT);
    const denied = endStep(running, 0, AT, {
      status: 'denied',
      reason: 'no',
      risk: 'write',
      decided: decided('deny', { n: 1 }),
    });
    joinChanges(denied, failJob(running, AT, 'no'));
    assert.deepEqual(verifyRecord(running.record, undefined, undefined), { ok: true, events: 4 });
  });

  it('reports a result, an input and an input as authorized that do not match their digests', () => {
    const result = completed();
    step(result, 0).result = { made: false };
    assert.deepEqual(verifyRecord(result, undefined, undefined), {
      ok: false,
      reason: 'the result of step a does not match its digest',
      eventIndex: 3,
      stepId: 'a',
    });
    const input = completed();
    (step(input, 0).input as { n: number }).n = 2;
    assert.equal(verifyRecord(input, undefined, undefined).ok, false);
    assert.match(JSON.stringify(verifyRecord(input, undefined, undefined)), /the input of step a/);
    const resolved = completed();
    step(resolved, 1).resolvedInput = { x: 'other' };
    assert.match(
      JSON.stringify(verifyRecord(resolved, undefined, undefined)),
      /the resolved input of step b/,
    );
    const removed = completed();
    delete step(removed, 1).resolvedInput;
    assert.match(
      JSON.stringify(verifyRecord(removed, undefined, undefined)),
      /the input of step b/,
    );
  });

  it("reports a decision that disagrees with its events, a status its events deny, and a job result that is not its steps'", () => {
    const decision = completed();
    step(decision, 0).decision = {
      ...(step(decision, 0).decision as NonNullable<JobStep['decision']>),
      inputDigest: `sha256:${'0'.repeat(64)}`,
    };
    assert.match(
      JSON.stringify(verifyRecord(decision, undefined, undefined)),
      /the decision of step a does not match its events/,
    );
    const dropped = completed();
    delete step(dropped, 0).decision;
    assert.match(
      JSON.stringify(verifyRecord(dropped, undefined, undefined)),
      /the decision of step a/,
    );
    const status = completed();
    step(status, 1).status = 'failed';
    assert.match(
      JSON.stringify(verifyRecord(status, undefined, undefined)),
      /step b is failed but its events say otherwise/,
    );
    const jobResult = completed();
    jobResult.result = ['forged'];
    assert.match(
      JSON.stringify(verifyRecord(jobResult, undefined, undefined)),
      /job's result does not match/,
    );
    const truncated = completed();
    truncated.events.pop();
    assert.match(
      JSON.stringify(verifyRecord(truncated, undefined, undefined)),
      /the job is completed but its last event is capability.completed/,
    );
  });

  it('reports the first event whose chain does not hold, events out of place, and a chain of another kind', () => {
    const job = completed();
    const hashes = chainHashes('', job.events, undefined);
    const edited = completed();
    (edited.events[2]?.data as Record<string, unknown>).stepId = 'b';
    const failure = verifyRecord(edited, hashes, undefined);
    assert.equal(failure.ok, false);
    assert.equal((failure as { eventIndex: number }).eventIndex, 2);
    const swapped = completed();
    const [third, fourth] = [swapped.events[2], swapped.events[3]];
    swapped.events[2] = fourth as Job['events'][number];
    swapped.events[3] = third as Job['events'][number];
    assert.match(
      JSON.stringify(verifyRecord(swapped, undefined, undefined)),
      /event 2 is out of place/,
    );
    assert.equal(verifyRecord(job, hashes.slice(0, 6), undefined).ok, false);
    assert.deepEqual(
      verifyRecord(
        job,
        hashes.map(() => null),
        undefined,
      ),
      { ok: false, reason: NO_CHAIN },
    );
    assert.match(
      JSON.stringify(verifyRecord(job, [null, ...hashes.slice(1)], undefined)),
      /event 0 has no hash/,
    );
    assert.match(
      JSON.stringify(verifyRecord(job, chainHashes('', job.events, 'k'), undefined)),
      /the chain is keyed/,
    );
    assert.match(JSON.stringify(verifyRecord(job, hashes, 'k')), /event 0 is not keyed/);
  });

  it('never throws on a record edited into nonsense', () => {
    const job = completed();
    (job as unknown as { steps: unknown }).steps = 'nonsense';
    const failure = verifyRecord(job, undefined, undefined);
    assert.equal(failure.ok, false);
    assert.match((failure as { reason: string }).reason, /^the record cannot be read/);
  });
});
