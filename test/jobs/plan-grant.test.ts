// The plan warrant in the record (docs/api.md, "Plan warrants"): the planDigest binds the plan,
// the caller and the request's steps, never the job id or a time; the grant is found only with
// the request whose digest it names.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { OperatorRuntime, type ExecutionPlan, type Job } from '../../src/index.js';
import {
  lastPlanRequest,
  planGrantOf,
  planWarrantDigest,
  type PlanRequestStep,
} from '../../src/jobs/plan-grant.js';
import { register } from '../support/runtime-fixtures.js';

const runtime = new OperatorRuntime({
  planVersions: ['1.0', '2.0'],
  approvals: { approver: { canApprove: () => true } },
});
const [write] = register(runtime, { risk: 'write', execute: () => ({ ok: true }) }) as [string];
const plan = (amount: unknown, maximum = 10): ExecutionPlan => ({
  version: '2.0',
  goal: 'pay',
  steps: [
    { id: 'a', capability: write, input: { amount: 1 } },
    { id: 'b', capability: write, input: { amount }, bounds: { amount: { maximum } } },
  ],
});
const waiting = (submitted: ExecutionPlan, caller = { id: 'alice' }): Promise<Job> =>
  runtime.executePlan(submitted, { caller, approval: 'plan' });
const requested = (job: Job) => {
  const request = lastPlanRequest(job);
  assert.ok(request !== undefined);
  return request;
};

describe('planWarrantDigest', () => {
  it('is the same for the same plan, caller and request, whatever the job id or time', async () => {
    const first = await waiting(plan({ $ref: 'steps.a.result.ok' }));
    const second = await waiting(plan({ $ref: 'steps.a.result.ok' }));
    assert.notEqual(first.id, second.id);
    assert.equal(requested(first).planDigest, requested(second).planDigest);
    assert.equal(
      planWarrantDigest(first, requested(first).steps),
      requested(first).planDigest,
      'computed again from the record as read',
    );
  });

  it('changes with the caller, an input, a bound or the request steps', async () => {
    const base = requested(await waiting(plan(3))).planDigest;
    for (const other of [
      await waiting(plan(3), { id: 'carol' }),
      await waiting(plan(4)),
      await waiting(plan(3, 11)),
    ])
      assert.notEqual(requested(other).planDigest, base);
    const job = await waiting(plan(3));
    const steps = requested(job).steps.map((step): PlanRequestStep => ({
      ...step,
      outcome: 'allow',
    }));
    assert.notEqual(planWarrantDigest(job, steps), base);
  });
});

describe('planGrantOf', () => {
  it('finds the grant with its request, and nothing when the grant names another digest', async () => {
    const job = await waiting(plan(3));
    assert.equal(planGrantOf(job), undefined, 'not granted yet');
    const { planDigest } = requested(job);
    const granted = await runtime.decideApproval({
      kind: 'plan',
      jobId: job.id,
      planDigest,
      approver: { id: 'bob' },
      decision: 'approve',
    });
    const grant = planGrantOf(granted);
    assert.equal(grant?.planDigest, planDigest);
    assert.equal(grant?.approver, 'bob');
    assert.equal(grant?.request.stepId, 'a');
    const forged = structuredClone(granted);
    const at = forged.events.findIndex((event) => event.type === 'approval.granted');
    forged.events[at] = {
      ...(forged.events[at] as Job['events'][number]),
      data: { ...forged.events[at]?.data, planDigest: `sha256:${'0'.repeat(64)}` },
    };
    assert.equal(planGrantOf(forged), undefined);
  });
});
