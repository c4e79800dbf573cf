import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isFinished, matchesFilter, type Job } from '../../src/jobs/job.js';

function job(status: Job['status'], goal: string, capabilities: string[]): Job {
  const at = '2026-01-01T00:00:00.000Z';
  return {
    id: 'j',
    goal,
    status,
    createdAt: at,
    updatedAt: at,
    steps: capabilities.map((capability, index) => ({
      id: `s${index}`,
      capability,
      status: 'pending',
      createdAt: at,
    })),
    events: [],
  };
}

describe('job helpers', () => {
  it('isFinished() is true for completed and failed jobs only', () => {
    assert.deepEqual(
      (['created', 'executing', 'completed', 'failed'] as const).map((status) =>
        isFinished(job(status, 'g', [])),
      ),
      [false, false, true, true],
    );
  });

  it('matchesFilter() applies status, exact goal and any-step capability together', () => {
    const sample = job('completed', 'Send report', ['a', 'b']);
    assert.equal(matchesFilter(sample, {}), true);
    assert.equal(
      matchesFilter(sample, { status: 'completed', goal: 'Send report', capability: 'b' }),
      true,
    );
    assert.equal(matchesFilter(sample, { status: 'failed' }), false);
    assert.equal(matchesFilter(sample, { goal: 'Send' }), false);
    assert.equal(matchesFilter(sample, { capability: 'c' }), false);
  });
});
