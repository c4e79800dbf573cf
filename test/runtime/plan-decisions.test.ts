// Deciding a plan request (docs/api.md, "Plan warrants", "runtime.decideApproval"): the rules of
// every decision (approver policy within the tenant, self-approval, digest, expiry) and what a
// grant records. Store by store: test/stores/plan-warrant-contract.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  OperatorRuntime,
  type ApprovalRequest,
  type ExecutionCaller,
  type Job,
  type PlanApprovalRequest,
} from '../../src/index.js';
import { register } from '../support/runtime-fixtures.js';

function setup(
  canApprove: (approver: ExecutionCaller, request: ApprovalRequest) => boolean,
  ttlMs?: number,
) {
  const seen: ApprovalRequest[] = [];
  const runtime = new OperatorRuntime({
    approvals: {
      approver: {
        canApprove: (approver, request) => {
          seen.push(request);
          return canApprove(approver, request);
        },
      },
      ...(ttlMs !== undefined && { ttlMs }),
    },
  });
  const [write] = register(runtime, { risk: 'write', execute: () => ({ ok: true }) }) as [string];
  const submit = (caller: ExecutionCaller = { id: 'alice', tenant: 'a' }) =>
    runtime.executePlan(
      {
        version: '1.0',
        goal: 'one write',
        steps: [{ id: 'w', capability: write, input: { n: 1 } }],
      },
      { caller, approval: 'plan' },
    );
  return { runtime, write, seen, submit };
}

async function digestOf(runtime: OperatorRuntime, job: Job): Promise<string> {
  const [request] = (await runtime.listApprovals({ jobId: job.id })) as PlanApprovalRequest[];
  assert.equal(request?.kind, 'plan');
  return request?.planDigest ?? '';
}

describe('decideApproval on a plan request', () => {
  it('asks the approver policy about the plan request, within the tenant only', async () => {
    const { runtime, seen, submit } = setup((approver) => approver.id === 'lead');
    const job = await submit();
    const planDigest = await digestOf(runtime, job);
    const decide = (approver: ExecutionCaller) =>
      runtime.decideApproval({
        kind: 'plan',
        jobId: job.id,
        planDigest,
        approver,
        decision: 'approve',
      });
    await assert.rejects(decide({ id: 'bob', tenant: 'a' }), { code: 'APPROVAL_FORBIDDEN' });
    await assert.rejects(decide({ id: 'lead', tenant: 'b' }), { code: 'APPROVAL_FORBIDDEN' });
    await assert.rejects(decide({ id: 'alice', tenant: 'a' }), { code: 'APPROVAL_SELF_APPROVAL' });
    const request = seen.at(-1) as PlanApprovalRequest;
    assert.equal(request.kind, 'plan');
    assert.equal(request.planDigest, planDigest);
    assert.deepEqual(
      request.steps.map((step) => [step.id, step.outcome]),
      [['w', 'require_approval']],
    );
    assert.equal((await decide({ id: 'lead', tenant: 'a' })).status, 'completed');
    await runtime.close();
  });

  it('refuses what is not a pending plan request, and malformed arguments', async () => {
    const { runtime, write, submit } = setup(() => true);
    const bob = { id: 'bob' };
    await assert.rejects(
      runtime.decideApproval({
        kind: 'plan',
        jobId: 'nope',
        planDigest: 'x',
        approver: bob,
        decision: 'approve',
      }),
      { code: 'APPROVAL_NOT_FOUND' },
    );
    // A job waiting for a step request has no plan request.
    const stepJob = await runtime.executePlan(
      { version: '1.0', steps: [{ id: 'w', capability: write, input: { n: 2 } }] },
      { caller: { id: 'alice' } },
    );
    await assert.rejects(
      runtime.decideApproval({
        kind: 'plan',
        jobId: stepJob.id,
        planDigest: 'x',
        approver: bob,
        decision: 'approve',
      }),
      { code: 'APPROVAL_NOT_FOUND' },
    );
    const job = await submit();
    for (const value of [
      {
        kind: 'job',
        jobId: job.id,
        stepId: 'w',
        inputDigest: 'x',
        approver: bob,
        decision: 'approve',
      },
      { kind: 'plan', jobId: job.id, approver: bob, decision: 'approve' },
      { kind: 'plan', jobId: job.id, planDigest: 'x', approver: bob, decision: 'maybe' },
      { kind: 'plan', jobId: job.id, planDigest: 'x', approver: {}, decision: 'approve' },
      // An edit is of a step's input, never of a plan.
      {
        kind: 'plan',
        jobId: job.id,
        planDigest: 'x',
        approver: bob,
        decision: 'approve',
        input: {},
      },
    ])
      await assert.rejects(runtime.decideApproval(value as never), {
        code: 'APPROVAL_DECISION_INVALID',
      });
    await runtime.close();
  });

  it('records the grant with its comment and its end: the request TTL from the decision', async () => {
    const { runtime, submit } = setup(() => true, 60_000);
    const job = await submit();
    const planDigest = await digestOf(runtime, job);
    const done = await runtime.decideApproval({
      kind: 'plan',
      jobId: job.id,
      planDigest,
      approver: { id: 'bob', tenant: 'a' },
      decision: 'approve',
      comment: 'one write, fine',
    });
    const granted = done.events.find((event) => event.type === 'approval.granted');
    assert.deepEqual(granted?.data, {
      kind: 'plan',
      stepId: 'w',
      approver: 'bob',
      planDigest,
      expiresAt: new Date(Date.parse(granted?.timestamp ?? '') + 60_000).toISOString(),
      comment: 'one write, fine',
    });
    await runtime.close();
  });

  it('an expired plan request is refused and fails its job; nothing runs', async (t) => {
    let offset = 0;
    const realNow = Date.now.bind(Date);
    t.mock.method(Date, 'now', () => realNow() + offset);
    const { runtime, submit } = setup(() => true, 60_000);
    const job = await submit();
    const planDigest = await digestOf(runtime, job);
    offset = 60_001;
    await assert.rejects(
      runtime.decideApproval({
        kind: 'plan',
        jobId: job.id,
        planDigest,
        approver: { id: 'bob', tenant: 'a' },
        decision: 'approve',
      }),
      { code: 'APPROVAL_EXPIRED' },
    );
    const stored = (await runtime.getJob(job.id)) as Job;
    assert.equal(stored.status, 'failed');
    assert.equal(stored.error, 'Approval expired');
    assert.equal(stored.steps[0]?.startedAt, undefined, 'never started');
    assert.deepEqual(await runtime.listApprovals(), []);
    assert.deepEqual(await runtime.verifyJob(job.id), { ok: true, events: stored.events.length });
    await runtime.close();
  });
});
