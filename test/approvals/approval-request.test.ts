// Approval requests read from the job record: the waiting step and its approval.requested event.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isExpired, requestOf, waitingSteps } from '../../src/approvals/approval-request.js';
import type { Job } from '../../src/jobs/job.js';

const DIGEST = `sha256:${'a'.repeat(64)}`;

function job(status: 'awaiting_approval' | 'failed'): Job {
  return {
    id: 'j1',
    goal: 'g',
    status,
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:00.000Z',
    caller: { id: 'alice' },
    steps: [
      {
        id: 's1',
        capability: 'fs.write',
        input: { path: 'x' },
        status,
        createdAt: '2026-01-01T00:00:00.000Z',
        decision: {
          outcome: 'approval_required',
          reason: 'why',
          inputDigest: DIGEST,
          capabilityVersion: '1.0.0',
          decidedAt: '2026-01-01T00:00:00.000Z',
        },
      },
    ],
    events: [
      {
        id: 'j1:1',
        jobId: 'j1',
        type: 'approval.requested',
        timestamp: '2026-01-01T00:00:01.000Z',
        data: {
          stepId: 's1',
          capability: 'fs.write',
          capabilityVersion: '1.0.0',
          risk: 'write',
          inputDigest: DIGEST,
          reason: 'why',
          expiresAt: '2026-01-02T00:00:01.000Z',
        },
      },
    ],
  };
}

describe('approval requests', () => {
  it('reads a waiting step as a detached, frozen request', () => {
    const waiting = job('awaiting_approval');
    assert.deepEqual(waitingSteps(waiting), [0]);
    const request = requestOf(waiting, 0);
    assert.deepEqual(request, {
      kind: 'step',
      jobId: 'j1',
      stepId: 's1',
      capability: 'fs.write',
      capabilityVersion: '1.0.0',
      risk: 'write',
      input: { path: 'x' },
      inputDigest: DIGEST,
      reason: 'why',
      caller: { id: 'alice' },
      requestedAt: '2026-01-01T00:00:01.000Z',
      expiresAt: '2026-01-02T00:00:01.000Z',
    });
    assert.ok(Object.isFrozen(request?.input));
    assert.notEqual(request?.input, waiting.steps[0]?.input);
  });

  it('has no request for a step that does not wait, or an unknown index', () => {
    const failed = job('failed');
    assert.deepEqual(waitingSteps(failed), []);
    assert.equal(requestOf(failed, 0), undefined);
    assert.equal(requestOf(job('awaiting_approval'), 3), undefined);
  });

  it('expires at expiresAt, and an unreadable expiresAt counts as expired', () => {
    const request = requestOf(job('awaiting_approval'), 0);
    assert.ok(request !== undefined);
    assert.equal(isExpired(request, Date.parse('2026-01-02T00:00:00.999Z')), false);
    assert.equal(isExpired(request, Date.parse('2026-01-02T00:00:01.000Z')), true);
    assert.equal(isExpired({ ...request, expiresAt: 'soon' }, 0), true);
  });
});
