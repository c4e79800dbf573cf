import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { defaultAuthorizer } from '../../src/authorization/default-policy.js';

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
