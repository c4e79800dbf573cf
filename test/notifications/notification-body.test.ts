// What a notification says (docs/api.md, "Notifications"): ids and digests only; the Slack
// message names the job, step, capability and reason, and the approve command or console link.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
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
    effectDigest: `sha256:${'e'.repeat(64)}`,
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
        // The digest of the effect the request is for (docs/api.md, "Prepared effects").
        effectDigest: `sha256:${'e'.repeat(64)}`,
        expiresAt: '2025-01-02T00:00:00.000Z',
        callerId: 'alice',
        status: 'awaiting_approval',
        eventId: 'e1',
        approveCommand: `warrant approvals approve job-1 w --digest sha256:${'a'.repeat(64)}`,
      },
    });
  });

  it('names the actor and the subject (onBehalfOf) of a request made by an agent for someone', () => {
    const acting = {
      ...job,
      caller: { id: 'alice', scopes: ['admin'], actor: { id: 'assistant', scopes: [] } },
    } as unknown as Job;
    const made = {
      ...requested,
      data: { ...requested.data, actor: 'assistant', onBehalfOf: 'alice' },
    };
    const body = notificationBody(acting, made);
    assert.equal(body.data.actor, 'assistant');
    assert.equal(body.data.onBehalfOf, 'alice');
    assert.equal(body.data.callerId, 'alice');
    assert.match(slackMessage(acting, made, undefined).text, /^By: assistant for alice$/m);
    assert.doesNotMatch(slackMessage(job, requested, undefined).text, /^By: /m);
  });

  it('tells how to decide a request: the approve command with the flags it needs, or the console link (issue 47 item 2)', () => {
    const flags = ['--module', './my ledger.mjs', '--store', 'sqlite:./jobs.db'];
    const body = notificationBody(job, requested, { approveFlags: flags });
    assert.equal(
      body.data.approveCommand,
      `warrant approvals approve job-1 w --digest sha256:${'a'.repeat(64)} --module './my ledger.mjs' --store sqlite:./jobs.db`,
    );
    assert.equal(body.data.consoleUrl, undefined);
    const linked = notificationBody(job, requested, {
      publicUrl: 'https://warrant.example/console',
      approveFlags: flags,
    });
    assert.equal(linked.data.consoleUrl, 'https://warrant.example/console/#/jobs/job-1');
    assert.equal(linked.data.approveCommand, undefined);
    // Only a request says how to decide it.
    const granted = notificationBody(job, { ...requested, type: 'approval.granted' }, {});
    assert.equal(granted.data.approveCommand, undefined);
  });

  it('an approval with edits says so: edited, with both digests, never the inputs (docs/api.md, "Approve with edits")', () => {
    const approved = `sha256:${'b'.repeat(64)}`;
    const body = notificationBody(job, {
      ...requested,
      type: 'approval.granted',
      data: {
        stepId: 'w',
        approver: 'bob',
        edited: true,
        inputDigest: approved,
        proposedDigest: `sha256:${'a'.repeat(64)}`,
        comment: 'halved it',
      },
    });
    assert.deepEqual(body.data, {
      approver: 'bob',
      edited: true,
      inputDigest: approved,
      proposedDigest: `sha256:${'a'.repeat(64)}`,
      callerId: 'alice',
      status: 'awaiting_approval',
      eventId: 'e1',
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

/** A plan request (docs/api.md, "Plan warrants"): held by the plan's first step. */
const planRequested: JobEvent = {
  id: 'e2',
  jobId: 'job-1',
  type: 'approval.requested',
  timestamp: '2025-01-01T00:00:00.000Z',
  data: {
    kind: 'plan',
    stepId: 'w',
    planDigest: `sha256:${'b'.repeat(64)}`,
    steps: [
      {
        id: 'w',
        capability: 'fs.write',
        capabilityVersion: '1.0.0',
        outcome: 'require_approval',
        reason: 'a secret reason',
        inputDigest: `sha256:${'a'.repeat(64)}`,
      },
      {
        id: 'x\n<@U1>',
        capability: 'fs.write',
        capabilityVersion: '1.0.0',
        outcome: 'unknown',
        bounds: { path: { pattern: '^/tmp/secret' } },
      },
    ],
    expiresAt: '2025-01-02T00:00:00.000Z',
  },
};

describe('plan requests', () => {
  it('carry the plan summary: digest, and each step by id, capability and outcome, no text', () => {
    const body = notificationBody(job, planRequested, { approveFlags: ['--store', 'sqlite:j.db'] });
    assert.deepEqual(body, {
      type: 'approval.requested',
      jobId: 'job-1',
      at: '2025-01-01T00:00:00.000Z',
      data: {
        expiresAt: '2025-01-02T00:00:00.000Z',
        kind: 'plan',
        planDigest: `sha256:${'b'.repeat(64)}`,
        stepCount: 2,
        steps: [
          {
            id: 'w',
            capability: 'fs.write',
            capabilityVersion: '1.0.0',
            outcome: 'require_approval',
            inputDigest: `sha256:${'a'.repeat(64)}`,
          },
          {
            id: 'x\n<@U1>',
            capability: 'fs.write',
            capabilityVersion: '1.0.0',
            outcome: 'unknown',
          },
        ],
        callerId: 'alice',
        status: 'awaiting_approval',
        eventId: 'e2',
        approveCommand: `warrant approvals approve job-1 --plan --digest sha256:${'b'.repeat(64)} --store sqlite:j.db`,
      },
    });
    assert.doesNotMatch(JSON.stringify(body), /secret/);
  });

  it('show every step in Slack, escaped, and the command that approves the plan', () => {
    const { text } = slackMessage(job, planRequested, undefined);
    assert.equal(
      text,
      [
        'Warrant: approval.requested for job job-1',
        'Plan of 2 steps:',
        '- w (fs.write): require_approval',
        '- x\\n&lt;@U1&gt; (fs.write): unknown',
        `Approve: warrant approvals approve job-1 --plan --digest sha256:${'b'.repeat(64)}`,
      ].join('\n'),
    );
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

  it('carries the flags the decision needs, quoted, after the digest (issue 47 item 2)', () => {
    const { text } = slackMessage(job, requested, undefined, [
      '--module',
      './my ledger.mjs',
      '--fs-root',
      'examples/data',
    ]);
    assert.match(
      text,
      new RegExp(
        `Approve: warrant approvals approve job-1 w --digest sha256:${'a'.repeat(64)} --module './my ledger.mjs' --fs-root examples/data$`,
      ),
    );
  });

  it('links the job in the console at the public URL when there is one', () => {
    const { text } = slackMessage(job, requested, 'https://warrant.example/');
    assert.match(text, /Open: https:\/\/warrant\.example\/#\/jobs\/job-1$/);
    assert.doesNotMatch(text, /Approve:/);
  });

  it('shows every control, separator and bidi character as an escape; the shell reads the step back', () => {
    const stepId = "it's \\ \t\r\u0001\u001b[31m\u0085\u2028\u202e\u2066 end";
    const { text } = slackMessage(
      job,
      { ...requested, data: { ...requested.data, stepId, reason: 'x\u2029y' } },
      undefined,
    );
    // Nothing but the line feeds between lines is a control, separator or bidi character.
    assert.doesNotMatch(
      text.replaceAll('\n', ''),
      /[\p{Cc}\u2028\u2029\u202a-\u202e\u2066-\u2069]/u,
    );
    assert.equal(text.split('\n').length, 4);
    assert.match(text, /\nReason: x\\u2029y\n/);
    const command = (text.split('\n').at(-1) ?? '').slice(
      'Approve: warrant approvals approve '.length,
    );
    const words = execFileSync('bash', ['-c', `printf '%s\\0' ${command}`], {
      encoding: 'utf8',
      timeout: 10_000,
    }).split('\0');
    assert.deepEqual(words.slice(0, 2), ['job-1', stepId]);
  });
});
