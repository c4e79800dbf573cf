import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Job, JobStep } from '../../src/index.js';
import {
  decodeJob,
  decodeStep,
  encode,
  jobFixed,
  jobState,
  stepFixed,
  stepState,
} from '../../src/jobs/stores/record-columns.js';

const step: JobStep = {
  id: 's',
  capability: 'c',
  status: 'completed',
  createdAt: '2026-11-23T00:00:00.000Z',
  startedAt: '2026-11-23T00:00:00.001Z',
  completedAt: '2026-11-23T00:00:00.002Z',
  input: { n: 1 },
  result: { big: 10n },
};

const job: Job = {
  id: 'j',
  goal: 'g',
  status: 'completed',
  outcome: 'success',
  createdAt: '2026-11-23T00:00:00.000Z',
  updatedAt: '2026-11-23T00:00:00.002Z',
  startedAt: '2026-11-23T00:00:00.000Z',
  completedAt: '2026-11-23T00:00:00.002Z',
  idempotencyKey: 'k',
  result: { big: 10n },
  steps: [step],
  events: [],
};

function decode(text: string): Record<string, unknown> {
  const { capability, status, ...rest } = decodeStep(
    '"c"',
    'pending',
    '{}',
    text,
    null,
  ) as unknown as Record<string, unknown>;
  assert.deepEqual([capability, status], ['c', 'pending']);
  return rest;
}

describe('record columns of the durable stores', () => {
  it('splits a job into the part written once and the part rewritten at each transition', () => {
    assert.deepEqual(decode(jobFixed(job)), { idempotencyKey: 'k' });
    assert.deepEqual(decode(jobState(job)), {
      outcome: 'success',
      startedAt: job.startedAt,
      completedAt: job.completedAt,
      result: { big: '10' },
    });
  });

  it('splits a step the same way, inputs with the fixed part', () => {
    assert.deepEqual(decode(stepFixed(step)), {
      id: 's',
      input: { n: 1 },
      createdAt: step.createdAt,
    });
    assert.deepEqual(decode(stepState(step)), {
      startedAt: step.startedAt,
      completedAt: step.completedAt,
      result: { big: '10' },
    });
  });

  it('encodes what JSON cannot hold without throwing, and undefined as null', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    assert.equal(encode(cyclic), '{"self":"[Circular]"}');
    assert.equal(encode(undefined), 'null');
  });

  it('decodes a row into the record: columns merged, keys JSON dropped left out', () => {
    const events = [{ id: 'j:1', jobId: 'j', type: 'job.created' as const, timestamp: 't' }];
    const decoded = decodeJob(
      'j',
      'completed',
      '"g \\ud800"',
      job.createdAt,
      job.updatedAt,
      jobFixed(job),
      jobState({ ...job, error: undefined }),
      [decodeStep('"c"', 'completed', stepFixed(step), stepState(step), null)],
      events,
    );
    assert.deepEqual(decoded, {
      id: 'j',
      goal: 'g \ud800',
      status: 'completed',
      outcome: 'success',
      createdAt: job.createdAt,
      updatedAt: job.updatedAt,
      startedAt: job.startedAt,
      completedAt: job.completedAt,
      idempotencyKey: 'k',
      result: { big: '10' },
      steps: [{ ...step, result: { big: '10' } }],
      events,
    });
    assert.equal('error' in decoded, false);
  });
});
