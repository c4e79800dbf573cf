// What a notification says (docs/api.md, "Notifications"): ids and digests only; the Slack
// message names the job, step, capability and reason, and the approve command or console link.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Job, JobEvent } from '../../src/jobs/job.js';
import { notificationBody, slackMessage } from '../../src/notifications/notification-body.js';

const job = {
  id: 'job-1',
  goal: 'g',
  status: 'awaiting_approval',
  caller: { id: 'alice', scopes: ['admin'] },
  createdAt: 't',
  updatedAt: 't',
  steps: [
    {
      id: 'w',
      capability: 'fs.write',
      input: { secret: 'x' },
      status: 'awaiting_approval',
      createdAt: 't',
    },
  ],
  events: [],
} as unknown as Job;

const requested: JobEvent = {
  id: 'e1',
  jobId: 'job-1',
  type: 'approval.requested',
  timestamp: '2025-01-01T00:00:00.000Z',
  data: {
    stepId: 'w',
    capability: 'fs.write',
    capabilityVersion: '1.0.0',
    risk: 'write',
    inputDigest: `sha256:${'a'.repeat(64)}`,
    reason: 'writes need approval',
    expiresAt: '2025-01-02T00:00:00.000Z',
  },
};

describe('notificationBody', () => {
  it('carries ids and digests, not the input or the caller beyond its id', () => {
    assert.deepEqual(notificationBody(job, requested), {
      type: 'approval.requested',
      jobId: 'job-1',
      stepId: 'w',
      at: '2025-01-01T00:00:00.000Z',
      data: {
        capability: 'fs.write',
        capabilityVersion: '1.0.0',
        risk: 'write',
        inputDigest: `sha256:${'a'.repeat(64)}`,
        expiresAt: '2025-01-02T00:00:00.000Z',
        callerId: 'alice',
        status: 'awaiting_approval',
        eventId: 'e1',
      },
    });
  });

  it('leaves out the error text of job.failed, naming the failed step instead', () => {
    const failedJob = {
      ...job,
      status: 'failed',
      steps: [{ ...job.steps[0], status: 'failed' }],
    } as Job;
    const body = notificationBody(failedJob, {
      ...requested,
      type: 'job.failed',
      data: { error: 'token=abc leaked' },
    });
    assert.equal(body.stepId, 'w');
    assert.doesNotMatch(JSON.stringify(body), /token=abc/);
  });
});

describe('slackMessage', () => {
  it('names the job, step, capability, reason and the exact approve command', () => {
    const { text } = slackMessage(job, requested, undefined);
    assert.match(text, /approval\.requested for job job-1/);
    assert.match(text, /Step w \(fs\.write\)/);
    assert.match(text, /Reason: writes need approval/);
    assert.match(
      text,
      new RegExp(`Approve: warrant approvals approve job-1 w --digest sha256:${'a'.repeat(64)}$`),
    );
  });

  it('links the job in the console at the public URL when there is one', () => {
    const { text } = slackMessage(job, requested, 'https://warrant.example/');
    assert.match(text, /Open: https:\/\/warrant\.example\/#\/jobs\/job-1$/);
    assert.doesNotMatch(text, /Approve:/);
  });
});
