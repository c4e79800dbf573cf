// Plan warrants (docs/api.md, "Plan warrants"): the `approval` option, the preview at
// submission (`executePlan` and `submitPlan`), and when a plan grant covers a step that asks for
// approval. The store-by-store path (memory, SQLite, PostgreSQL) is
// test/stores/plan-warrant-contract.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  OperatorRuntime,
  type ExecutionAuthorizer,
  type ExecutionPlan,
  type Job,
  type PlanApprovalRequest,
} from '../../src/index.js';
import { capabilityInventory } from '../../src/capabilities/inventory.js';
import { isoNow } from '../../src/jobs/clock.js';
import { coverByPlanGrant } from '../../src/runtime/plan-warrant.js';
import { admitRecorded } from '../../src/runtime/stored-job.js';
import { recordValue } from '../../src/jobs/recorded-value.js';
import { register } from '../support/runtime-fixtures.js';

const anyone = { canApprove: () => true };
const ALICE = { id: 'alice' };

/** Reads allowed; writes need an approval (the default with approvals, counted). */
function counting(): ExecutionAuthorizer & { previews: number; decisions: number } {
  const counted = {
    previews: 0,
    decisions: 0,
    authorize(context: Parameters<ExecutionAuthorizer['authorize']>[0]) {
      if (context.preview === true) counted.previews++;
      else counted.decisions++;
      if (context.capability.risk === 'read' || context.approval !== undefined)
        return { decision: 'allow' as const };
      return { decision: 'require_approval' as const, reason: 'writes need a person' };
    },
  };
  return counted;
}

function setup(authorizer: ExecutionAuthorizer = counting()) {
  const runtime = new OperatorRuntime({
    authorizer,
    planVersions: ['1.0', '2.0'],
    approvals: { approver: anyone },
  });
  const invoked: unknown[] = [];
  const [read, write] = register(
    runtime,
    { execute: ({ input }: { input: unknown }) => input },
    {
      risk: 'write',
      execute: ({ input }: { input: unknown }) => {
        invoked.push(input);
        return { ok: true };
      },
    },
  ) as [string, string];
  return { runtime, read, write, invoked };
}

async function planRequestOf(runtime: OperatorRuntime, job: Job): Promise<PlanApprovalRequest> {
  const [request] = await runtime.listApprovals({ jobId: job.id });
  assert.equal(request?.kind, 'plan');
  return request as PlanApprovalRequest;
}

describe('the approval option', () => {
  it("'plan' needs the approvals option: EXECUTE_OPTIONS_INVALID, nothing recorded", async () => {
    const runtime = new OperatorRuntime();
    const [read] = register(runtime, { execute: () => 1 }) as [string];
    const plan: ExecutionPlan = {
      version: '1.0',
      steps: [{ id: 'a', capability: read, input: {} }],
    };
    await assert.rejects(runtime.executePlan(plan, { approval: 'plan' }), {
      code: 'EXECUTE_OPTIONS_INVALID',
      message: "executePlan() options.approval 'plan' needs the runtime's approvals option",
    });
    await assert.rejects(runtime.submitPlan(plan, { approval: 'plan' }), {
      code: 'EXECUTE_OPTIONS_INVALID',
      message: "submitPlan() options.approval 'plan' needs the runtime's approvals option",
    });
    assert.deepEqual(await runtime.listJobs(), []);
    // 'steps' is the default, as without the option.
    assert.equal((await runtime.executePlan(plan, { approval: 'steps' })).status, 'completed');
    await runtime.close();
  });

  it('any other value is refused as a malformed option', async () => {
    const { runtime, read } = setup();
    const plan: ExecutionPlan = {
      version: '1.0',
      steps: [{ id: 'a', capability: read, input: {} }],
    };
    await assert.rejects(runtime.executePlan(plan, { approval: 'all' as never }), {
      code: 'EXECUTE_OPTIONS_INVALID',
    });
    await assert.rejects(runtime.submitPlan(plan, { approval: 'PLAN' as never }), {
      code: 'JOB_OPTIONS_INVALID',
    });
    assert.deepEqual(await runtime.listJobs(), []);
    await runtime.close();
  });
});

describe('the preview at submission', () => {
  it('a plan with nothing to approve runs as usual: no request, one preview per step', async () => {
    const authorizer = counting();
    const { runtime, read } = setup(authorizer);
    const job = await runtime.executePlan(
      {
        version: '1.0',
        steps: [
          { id: 'a', capability: read, input: { n: 1 } },
          { id: 'b', capability: read, input: { n: 2 } },
        ],
      },
      { caller: ALICE, approval: 'plan' },
    );
    assert.equal(job.status, 'completed');
    assert.equal(authorizer.previews, 2);
    assert.equal(authorizer.decisions, 2);
    assert.equal(
      job.events.some((event) => event.type.startsWith('approval.')),
      false,
    );
    await runtime.close();
  });

  it('submitPlan: previewed at submission, the job waits for its plan request, then runs', async () => {
    const { runtime, read, write, invoked } = setup();
    const { jobId } = await runtime.submitPlan(
      {
        version: '1.0',
        steps: [
          { id: 'a', capability: read, input: { n: 1 } },
          { id: 'b', capability: write, input: { n: { $ref: 'steps.a.result.n' } } },
        ],
      },
      { caller: ALICE, approval: 'plan' },
    );
    const waiting = (await runtime.waitForJob(jobId)) as Job;
    assert.equal(waiting.status, 'awaiting_approval');
    assert.deepEqual(
      waiting.events.map((event) => event.type),
      ['job.created', 'approval.requested'],
      'never started: queued, then waiting for the plan',
    );
    const request = await planRequestOf(runtime, waiting);
    // A referenced field without bounds: the grant covers the read, the write escalates.
    const stopped = await runtime.decideApproval({
      kind: 'plan',
      jobId,
      planDigest: request.planDigest,
      approver: { id: 'bob' },
      decision: 'approve',
    });
    assert.equal(stopped.status, 'awaiting_approval');
    assert.ok(stopped.startedAt !== undefined, 'started when granted');
    const [step] = await runtime.listApprovals({ jobId });
    assert.equal(
      step?.kind === 'step' && step.reason,
      'outside the approved plan: n holds a reference and has no bounds',
    );
    assert.deepEqual(invoked, []);
    assert.deepEqual(await runtime.verifyJob(jobId), { ok: true, events: stopped.events.length });
    await runtime.close();
  });

  it('an idempotency key holds the approval mode: the same plan in the other mode is IDEMPOTENCY_CONFLICT', async () => {
    const { runtime, write } = setup();
    const plan = { version: '1.0' as const, steps: [{ id: 'w', capability: write, input: {} }] };
    const first = await runtime.submitPlan(plan, {
      caller: ALICE,
      approval: 'plan',
      idempotencyKey: 'k1',
    });
    const again = await runtime.submitPlan(plan, {
      caller: ALICE,
      approval: 'plan',
      idempotencyKey: 'k1',
    });
    assert.deepEqual(again, { jobId: first.jobId, replayed: true });
    await assert.rejects(runtime.submitPlan(plan, { caller: ALICE, idempotencyKey: 'k1' }), {
      code: 'IDEMPOTENCY_CONFLICT',
    });
    await assert.rejects(
      runtime.executePlan({ ...plan, idempotencyKey: 'k1' }, { caller: ALICE }),
      { code: 'IDEMPOTENCY_CONFLICT' },
    );
    await runtime.close();
  });

  it('a job waiting for its plan request is cancelled like any waiting job; nothing is decided', async () => {
    const { runtime, write, invoked } = setup();
    const job = await runtime.executePlan(
      { version: '1.0', steps: [{ id: 'w', capability: write, input: { n: 1 } }] },
      { caller: ALICE, approval: 'plan' },
    );
    const request = await planRequestOf(runtime, job);
    const cancelled = await runtime.cancelJob(job.id, { caller: ALICE, reason: 'not today' });
    assert.equal(cancelled?.status, 'cancelled');
    await assert.rejects(
      runtime.decideApproval({
        kind: 'plan',
        jobId: job.id,
        planDigest: request.planDigest,
        approver: { id: 'bob' },
        decision: 'approve',
      }),
      { code: 'APPROVAL_NOT_PENDING' },
    );
    assert.deepEqual(invoked, []);
    const stored = (await runtime.getJob(job.id)) as Job;
    assert.deepEqual(await runtime.verifyJob(job.id), { ok: true, events: stored.events.length });
    await runtime.close();
  });
});

describe('coverByPlanGrant', () => {
  /** A job granted under a plan: its record and its admitted plan, as the executor has them. */
  async function granted(plan: ExecutionPlan) {
    const { runtime } = setup();
    const job = await runtime.executePlan(plan, { caller: ALICE, approval: 'plan' });
    const request = await planRequestOf(runtime, job);
    // Rejected, so nothing runs; the record then gets a grant of the same request by hand.
    const ended = await runtime.decideApproval({
      kind: 'plan',
      jobId: job.id,
      planDigest: request.planDigest,
      approver: { id: 'bob' },
      decision: 'reject',
    });
    await runtime.close();
    const at = isoNow();
    const record = structuredClone(ended) as Job;
    const position = record.events.findIndex((event) => event.type === 'approval.rejected');
    record.events[position] = {
      ...(record.events[position] as Job['events'][number]),
      type: 'approval.granted',
      data: {
        kind: 'plan',
        stepId: request.steps[0]?.id,
        approver: 'bob',
        planDigest: request.planDigest,
        expiresAt: new Date(Date.parse(at) + 60_000).toISOString(),
      },
    };
    const inventory = capabilityInventory();
    const admitted = admitRecorded(record, (name) => inventory.get(name));
    return { record, admitted, request, grantEnds: Date.parse(at) + 60_000 };
  }

  it('is undefined without a plan grant, and covers only the approved input of a step without references', async () => {
    const { write } = setup();
    const { record, admitted, request, grantEnds } = await granted({
      version: '1.0',
      steps: [{ id: 'w', capability: write, input: { n: 1 } }],
    });
    const step = admitted.steps[0] as (typeof admitted.steps)[number];
    const cover = (input: unknown, now = grantEnds - 1) =>
      coverByPlanGrant(record, step, input, recordValue(input, 'input').digest, now);
    assert.deepEqual(cover({ n: 1 }), {
      covered: true,
      approval: { kind: 'plan', planDigest: request.planDigest, approver: 'bob' },
    });
    const other = recordValue({ n: 2 }, 'input').digest;
    assert.deepEqual(cover({ n: 2 }), {
      covered: false,
      reason: `outside the approved plan: input ${other} is not the approved ${request.steps[0]?.inputDigest}`,
    });
    assert.deepEqual(cover({ n: 1 }, grantEnds), {
      covered: false,
      reason: `outside the approved plan: the plan grant expired at ${new Date(grantEnds).toISOString()}`,
    });
    const withoutGrant = {
      ...record,
      events: record.events.filter((event) => event.type !== 'approval.granted'),
    };
    assert.equal(coverByPlanGrant(withoutGrant, step, { n: 1 }, '', grantEnds - 1), undefined);
    // The record read at the step's turn must still be the plan approved.
    const edited = structuredClone(record);
    (edited.steps[0] as { input: unknown }).input = { n: 1, extra: true };
    assert.deepEqual(
      coverByPlanGrant(
        edited,
        step,
        { n: 1 },
        recordValue({ n: 1 }, 'input').digest,
        grantEnds - 1,
      ),
      {
        covered: false,
        reason:
          'outside the approved plan: the recorded plan does not match the approved planDigest',
      },
    );
  });

  it('covers a referenced field only when bounded and within its bounds; never a whole-input reference', async () => {
    const { read, write } = setup();
    const { record, admitted, grantEnds } = await granted({
      version: '2.0',
      steps: [
        { id: 'q', capability: read, input: { total: 5 } },
        {
          id: 'p',
          capability: write,
          input: { amount: { $ref: 'steps.q.result.total' }, memo: 'fixed' },
          bounds: { amount: { type: 'integer', minimum: 1, maximum: 9 } },
        },
        { id: 'all', capability: write, input: { $ref: 'steps.q.result' } },
      ],
    });
    const [, pay, all] = admitted.steps as [
      unknown,
      (typeof admitted.steps)[number],
      (typeof admitted.steps)[number],
    ];
    const cover = (step: typeof pay, input: unknown) =>
      coverByPlanGrant(record, step, input, recordValue(input, 'input').digest, grantEnds - 1);
    assert.equal(cover(pay, { amount: 9, memo: 'fixed' })?.covered, true);
    assert.deepEqual(cover(pay, { amount: 9.5, memo: 'fixed' }), {
      covered: false,
      reason: 'outside the approved plan: amount is a number, not of type integer',
    });
    assert.deepEqual(cover(all, { total: 5 }), {
      covered: false,
      reason: 'outside the approved plan: input is a reference and bounds name fields only',
    });
  });
});
