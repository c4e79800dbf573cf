import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Job, JobStep } from '../../src/index.js';
import {
  assignDefined,
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
  const target: Record<string, unknown> = {};
  assignDefined(target, JSON.parse(text) as Record<string, unknown>);
  return target;
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

  it('copies only the keys that are present', () => {
    const target: Record<string, unknown> = { kept: 1 };
    assignDefined(target, { kept: undefined, added: 2 });
    assert.deepEqual(target, { kept: 1, added: 2 });
  });
});
