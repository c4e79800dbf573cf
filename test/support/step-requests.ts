// Step approval requests out of a list that may also hold plan requests (docs/api.md, "Plan
// warrants"): tests written for step requests narrow the list's type here, checking each.
import assert from 'node:assert/strict';
import type { ApprovalRequest, StepApprovalRequest } from '../../src/index.js';

/** The requests, each checked to be a step request. */
export function stepRequests(requests: readonly ApprovalRequest[]): StepApprovalRequest[] {
  return requests.map((request) => {
    assert.equal(request.kind, 'step');
    return request as StepApprovalRequest;
  });
}
