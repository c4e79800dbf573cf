// Approve with edits through the runtime (docs/api.md, "Approve with edits"; docs/decisions.md,
// "Approve with edits"): the input contract's output is what is approved and run, in a 2.0 plan
// a frozen copy to the authorizer and a fresh one to the capability; the proposed input given
// back is no edit; the approver's rights are checked before its input; an input the contract
// would change again at the step's turn fails the step, bound to the approved digest.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { z } from 'zod';
import {
  OperatorRuntime,
  createCapability,
  type CapabilityAuthorizationContext,
  type ExecutionPlan,
  type Job,
} from '../../src/index.js';
import { digestRecorded } from '../../src/jobs/recorded-value.js';
import { recordedApproval } from '../../src/runtime/approval-edits.js';
import { handMade } from '../support/standard-schema-fixtures.js';
import { uniqueName } from '../support/runtime-fixtures.js';

type Schema = Parameters<typeof createCapability>[0]['inputSchema'];

/** A runtime with approvals whose one write capability takes `inputSchema` and keeps what it got. */
function setup(inputSchema: Schema) {
  const asked: CapabilityAuthorizationContext[] = [];
  const received: unknown[] = [];
  const runtime = new OperatorRuntime({
    planVersions: ['1.0', '2.0'],
    approvals: { approver: { canApprove: () => true } },
    authorizer: {
      authorize(context) {
        asked.push(context);
        return context.approval === undefined
          ? { decision: 'require_approval' }
          : { decision: 'allow' };
      },
    },
  });
  const name = uniqueName('pay');
  runtime.use({
    manifest: { name: uniqueName('module'), version: '1', capabilities: [name] },
    capabilities: [
      createCapability({
        name,
        version: '1.0.0',
        description: 'pays',
        risk: 'write',
        inputSchema,
        execute: ({ input }) => {
          received.push(input);
          // What it does to its copy reaches nothing else.
          (input as Record<string, unknown>).touched = true;
          return { ok: true };
        },
      }),
    ],
  });
  const plan = (input: unknown, version: '1.0' | '2.0' = '2.0'): ExecutionPlan =>
    ({ version, goal: 'pay', steps: [{ id: 'pay', capability: name, input }] }) as ExecutionPlan;
  return { runtime, asked, received, plan };
}

async function approveWith(runtime: OperatorRuntime, job: Job, input: unknown, approver = 'bob') {
  return runtime.decideApproval({
    jobId: job.id,
    stepId: 'pay',
    inputDigest: job.steps[0]?.decision?.inputDigest as string,
    approver: { id: approver },
    decision: 'approve',
    input,
  });
}

describe('approve with edits through the runtime', () => {
  it("runs a 2.0 step with the contract's output of the approved input: frozen to the authorizer, a fresh copy to the capability", async () => {
    const { runtime, asked, received, plan } = setup(z.object({ amount: z.coerce.number() }));
    try {
      const job = await runtime.executePlan(plan({ amount: 5 }), { caller: { id: 'alice' } });
      const done = await approveWith(runtime, job, { amount: '12' });
      assert.equal(done.status, 'completed', done.error);
      assert.deepEqual(received, [{ amount: 12, touched: true }]);
      const last = asked.at(-1) as CapabilityAuthorizationContext;
      assert.deepEqual(last.input, { amount: 12 });
      assert.ok(Object.isFrozen(last.input));
      assert.notEqual(last.input, received[0]);
      const stored = (await runtime.getJob(job.id)) as Job;
      assert.deepEqual(stored.steps[0]?.approvedInput, { amount: 12 });
      assert.deepEqual(stored.steps[0]?.resolvedInput, { amount: 12 });
      assert.equal(stored.steps[0]?.decision?.inputDigest, digestRecorded({ amount: 12 }));
      assert.equal((await runtime.verifyJob(job.id))?.ok, true);
    } finally {
      await runtime.close();
    }
  });

  it('the proposed input given back is no edit: a plain grant', async () => {
    const { runtime, received, plan } = setup({
      amount: { type: 'number', required: true, description: 'cents' },
    });
    try {
      const job = await runtime.executePlan(plan({ amount: 5 }), { caller: { id: 'alice' } });
      const done = await approveWith(runtime, job, { amount: 5 });
      assert.equal(done.status, 'completed');
      assert.deepEqual(received, [{ amount: 5, touched: true }]);
      const granted = done.events.find((event) => event.type === 'approval.granted');
      assert.deepEqual(granted?.data, { stepId: 'pay', approver: 'bob' });
      assert.equal(Object.hasOwn(done.steps[0] as object, 'proposedInput'), false);
    } finally {
      await runtime.close();
    }
  });

  it('who may decide is checked before the input, and a hostile input before anything', async () => {
    const { runtime, received, plan } = setup({
      amount: { type: 'number', required: true, description: 'cents' },
    });
    try {
      const job = await runtime.executePlan(plan({ amount: 5 }), { caller: { id: 'alice' } });
      await assert.rejects(approveWith(runtime, job, { amount: 'x' }, 'alice'), {
        code: 'APPROVAL_SELF_APPROVAL',
      });
      let trapped = 0;
      const hostile = new Proxy(
        { amount: 6 },
        {
          get: (target, key) => {
            trapped += 1;
            return Reflect.get(target, key);
          },
        },
      );
      await assert.rejects(approveWith(runtime, job, hostile), {
        code: 'APPROVAL_INPUT_INVALID',
        message: /input is a proxy/,
      });
      assert.equal(trapped, 0);
      assert.deepEqual(received, []);
      assert.equal((await runtime.getJob(job.id))?.status, 'awaiting_approval');
    } finally {
      await runtime.close();
    }
  });

  it('an input its contract changes again at the run fails the step: the grant is bound to the approved digest', async () => {
    // Not idempotent: each check appends "!".
    const shouting = handMade((value) => ({
      value: { text: `${String((value as { text?: unknown }).text)}!` },
    }));
    const { runtime, received, plan } = setup(shouting);
    try {
      const job = await runtime.executePlan(plan({ text: 'hi' }, '1.0'), {
        caller: { id: 'alice' },
      });
      const done = await approveWith(runtime, job, { text: 'hello' });
      assert.equal(done.status, 'failed');
      assert.equal(done.error, 'Input changed since approval was requested');
      assert.deepEqual(received, []);
      assert.deepEqual(done.steps[0]?.approvedInput, { text: 'hello!' });
      assert.equal((await runtime.verifyJob(job.id))?.ok, true);
    } finally {
      await runtime.close();
    }
  });

  it('a recorded grant without an edit gives the decision its digest and nothing more', async () => {
    const { runtime, plan } = setup(undefined);
    try {
      const job = await runtime.executePlan(plan({ a: 1 }), { caller: { id: 'alice' } });
      const done = await runtime.decideApproval({
        jobId: job.id,
        stepId: 'pay',
        inputDigest: job.steps[0]?.decision?.inputDigest as string,
        approver: { id: 'bob' },
        decision: 'approve',
      });
      const granted = done.events.find((event) => event.type === 'approval.granted');
      const approval = recordedApproval(job, 0, granted as NonNullable<typeof granted>);
      assert.deepEqual(
        { ...approval, grant: { ...approval.grant, approver: approval.grant.approver.id } },
        {
          grant: {
            approver: 'bob',
            grantedAt: granted?.timestamp,
            inputDigest: job.steps[0]?.decision?.inputDigest,
          },
          capabilityVersion: '1.0.0',
        },
      );
    } finally {
      await runtime.close();
    }
  });
});
