import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Job, JobStep } from '../../../src/index.js';
import {
  decodeJob,
  decodeStep,
  encode,
  jobFixed,
  jobState,
  stepDecision,
  stepFixed,
  stepState,
} from '../../../src/stores/shared/record-columns.js';

// A record as the transitions keep it: JSON data only (values encoded when they happened).
const decision = {
  outcome: 'allow' as const,
  inputDigest: `sha256:${'0'.repeat(64)}`,
  capabilityVersion: '1',
  decidedAt: '2026-11-23T00:00:00.001Z',
};

const step: JobStep = {
  id: 's',
  capability: 'c',
  status: 'completed',
  createdAt: '2026-11-23T00:00:00.000Z',
  startedAt: '2026-11-23T00:00:00.001Z',
  completedAt: '2026-11-23T00:00:00.002Z',
  input: { n: { $ref: 'steps.a.result' } },
  result: { big: '10' },
  decision,
  resolvedInput: { n: 1 },
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
  caller: { id: 'alice' },
  result: { big: '10' },
  steps: [step],
  events: [],
};

const parse = (text: string): unknown => JSON.parse(text);

describe('record columns of the durable stores', () => {
  it('splits a job into the part written once (with the caller) and the part rewritten at each change', () => {
    assert.deepEqual(parse(jobFixed(job)), { idempotencyKey: 'k', caller: { id: 'alice' } });
    assert.deepEqual(parse(jobState(job)), {
      outcome: 'success',
      startedAt: job.startedAt,
      completedAt: job.completedAt,
      result: { big: '10' },
    });
  });

  it('splits a step the same way: input once, decision and input as authorized once, the rest per change', () => {
    assert.deepEqual(parse(stepFixed(step)), {
      id: 's',
      input: { n: { $ref: 'steps.a.result' } },
      createdAt: step.createdAt,
    });
    assert.deepEqual(parse(stepState(step)), {
      startedAt: step.startedAt,
      completedAt: step.completedAt,
      result: { big: '10' },
    });
    assert.deepEqual(parse(stepDecision(step)), { decision, resolvedInput: { n: 1 } });
  });

  it('writes record data as it is, undefined as null', () => {
    assert.equal(encode({ text: 'lone \ud800', gone: undefined }), '{"text":"lone \\ud800"}');
    assert.equal(encode(undefined), 'null');
  });

  it('decodes a row into the record: columns merged, keys JSON left out stay out', () => {
    const events = [{ id: 'j:1', jobId: 'j', type: 'job.created' as const, timestamp: 't' }];
    const decoded = decodeJob(
      'j',
      'completed',
      '"g \\ud800"',
      job.createdAt,
      job.updatedAt,
      jobFixed(job),
      jobState({ ...job, error: undefined }),
      [decodeStep('"c"', 'completed', stepFixed(step), stepState(step), stepDecision(step))],
      events,
    );
    assert.deepEqual(decoded, { ...job, goal: 'g \ud800', events });
    assert.equal('error' in decoded, false);
    const undecided = decodeStep('"c"', 'pending', stepFixed(step), '{}', null);
    assert.equal('decision' in undecided, false);
  });
});
