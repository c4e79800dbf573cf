import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  defaultApprovalAuthorizer,
  defaultAuthorizer,
} from '../../src/authorization/default-policy.js';

const ask = (risk: 'read' | 'write' | 'destructive') =>
  defaultAuthorizer.authorize({
    jobId: 'j',
    stepId: 's',
    capability: { name: 'c', version: '1', risk },
    input: {},
  });

describe('default policy', () => {
  it('allows reads and denies writes and destructive work with the messages of docs/api.md, "new OperatorRuntime"', () => {
    assert.deepEqual(ask('read'), { decision: 'allow' });
    assert.deepEqual(ask('write'), {
      decision: 'deny',
      reason: 'Write capability requires explicit approval.',
    });
    assert.deepEqual(ask('destructive'), {
      decision: 'deny',
      reason: 'Destructive capability requires explicit approval.',
    });
  });
});

describe('the default policy with approvals on', () => {
  const askApproval = (risk: 'read' | 'write' | 'destructive', approved: boolean) =>
    defaultApprovalAuthorizer.authorize({
      jobId: 'j',
      stepId: 's',
      capability: { name: 'c', version: '1', risk },
      input: {},
      ...(approved
        ? { approval: { approver: { id: 'b' }, grantedAt: 'now', inputDigest: 'sha256:0' } }
        : {}),
    });

  it('allows reads, asks approval for writes and destructive work, allows them once approved', () => {
    assert.deepEqual(askApproval('read', false), { decision: 'allow' });
    assert.deepEqual(askApproval('write', false), {
      decision: 'require_approval',
      reason: 'Write capability requires explicit approval.',
    });
    assert.deepEqual(askApproval('destructive', false), {
      decision: 'require_approval',
      reason: 'Destructive capability requires explicit approval.',
    });
    assert.deepEqual(askApproval('write', true), { decision: 'allow' });
    assert.deepEqual(askApproval('destructive', true), { decision: 'allow' });
  });
});
