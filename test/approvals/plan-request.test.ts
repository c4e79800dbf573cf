// The plan request as listApprovals answers it (docs/api.md, "Plan warrants"): kind 'plan', the
// planDigest, every step with its preview, input as recorded (references included) and bounds,
// the caller; held by the plan's first step for paging; a step request says kind 'step'.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { OperatorRuntime, type PlanApprovalRequest } from '../../src/index.js';
import { requestDigest, requestStepId } from '../../src/approvals/approval-request.js';
import { register } from '../support/runtime-fixtures.js';

describe('plan requests as listed', () => {
  it('lists every step with its preview, input and bounds, frozen; pages with step requests', async () => {
    const runtime = new OperatorRuntime({
      planVersions: ['1.0', '2.0'],
      approvals: { approver: { canApprove: () => true } },
    });
    const [read, write] = register(
      runtime,
      { execute: () => ({ total: 3 }) },
      { risk: 'write', execute: () => ({ ok: true }) },
    ) as [string, string];
    const planned = await runtime.executePlan(
      {
        version: '2.0',
        goal: 'quote then pay',
        steps: [
          { id: 'q', capability: read, input: {} },
          {
            id: 'p',
            capability: write,
            input: { amount: { $ref: 'steps.q.result.total' } },
            bounds: { amount: { maximum: 5 } },
          },
        ],
      },
      { caller: { id: 'alice' }, approval: 'plan' },
    );
    const stepped = await runtime.executePlan(
      { version: '1.0', steps: [{ id: 'w', capability: write, input: { n: 1 } }] },
      { caller: { id: 'alice' } },
    );
    // Newest job first.
    const all = await runtime.listApprovals();
    assert.deepEqual(
      all.map((request) => [request.kind, request.jobId]),
      [
        ['step', stepped.id],
        ['plan', planned.id],
      ],
    );
    const request = all[1] as PlanApprovalRequest;
    assert.ok(Object.isFrozen(request) && Object.isFrozen(request.steps[1]?.input));
    assert.deepEqual(request.steps, [
      {
        id: 'q',
        capability: read,
        capabilityVersion: '1.0.0',
        outcome: 'allow',
        inputDigest: request.steps[0]?.inputDigest,
        input: {},
      },
      {
        id: 'p',
        capability: write,
        capabilityVersion: '1.0.0',
        outcome: 'unknown',
        bounds: { amount: { maximum: 5 } },
        input: { amount: { $ref: 'steps.q.result.total' } },
      },
    ]);
    assert.equal(request.goal, 'quote then pay');
    assert.deepEqual(request.caller, { id: 'alice' });
    assert.equal(requestStepId(request), 'q');
    assert.equal(requestDigest(request), request.planDigest);
    // Pages go oldest first, one request each: the cursor after the plan request leads on.
    const first = await runtime.approvalPage({ limit: 1 });
    assert.equal(first.requests[0]?.kind, 'plan');
    assert.ok(first.nextCursor !== undefined);
    const second = await runtime.approvalPage({ limit: 1, cursor: first.nextCursor });
    assert.deepEqual(
      second.requests.map((found) => found.kind),
      ['step'],
    );
    assert.equal(await runtime.countApprovals(), 2);
    await runtime.close();
  });
});
