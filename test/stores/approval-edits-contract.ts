// Approve with edits on every store (docs/api.md, "Approve with edits"): the capability receives
// the approver's input, authorized again; an input its contract refuses changes nothing; one the
// authorizer denies is a recorded denial; the record keeps the proposed and approved inputs,
// their digests and the editor, all of it covered by verifyJob and evidence bundles, and an edit
// of either input in the database is caught. Run by runJobStoreContract for memory, SQLite and
// PostgreSQL.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  OperatorRuntime,
  verifyEvidence,
  type CapabilityAuthorizationContext,
  type ExecutionAuthorizer,
  type ExecutionPlan,
  type Job,
  type StepApprovalRequest,
} from '../../src/index.js';
import { digestRecorded } from '../../src/jobs/recorded-value.js';
import { registerShared, suiteRuntimes } from '../support/store-fixtures.js';
import type { StoreUnderTest } from './contract.js';

const field = (type: 'string' | 'number') => ({ type, required: true, description: type });

export function runApprovalEditsContract(store: StoreUnderTest): void {
  const { keep } = suiteRuntimes();
  /** The inputs the pay capability received, by the `to` they name. */
  const paid: Record<string, unknown>[] = [];
  const { quote, pay } = registerShared('edits', {
    quote: { description: 'quotes', execute: () => ({ total: 7 }) },
    pay: {
      description: 'pays',
      risk: 'write',
      inputSchema: { to: field('string'), amount: field('number') },
      execute: ({ input }) => {
        paid.push(input as Record<string, unknown>);
        return { paid: (input as { amount: number }).amount };
      },
    },
  });
  /** Every context the authorizer was asked with. */
  const asked: CapabilityAuthorizationContext[] = [];
  // Writes wait for a person; nothing over 1000 is paid, approved or not.
  const authorizer: ExecutionAuthorizer = {
    name: 'edits-policy',
    authorize(context) {
      asked.push(context);
      if (context.capability.risk === 'read') return { decision: 'allow' };
      if ((context.input as { amount: number }).amount > 1000)
        return { decision: 'deny', reason: 'Nothing over 1000 is paid' };
      return context.approval === undefined
        ? { decision: 'require_approval', reason: 'A person checks every payment' }
        : { decision: 'allow' };
    },
  };
  const plan = (to: string): ExecutionPlan => ({
    version: '1.0',
    goal: `pay ${to}`,
    steps: [
      { id: 'quote', capability: quote, input: {} },
      { id: 'pay', capability: pay, input: { to, amount: { $ref: 'steps.quote.result.total' } } },
    ],
  });
  const waiting = async (to: string) => {
    const option = await store.freshStoreOption();
    const runtime = keep(
      new OperatorRuntime({
        store: option,
        authorizer,
        approvals: { approver: { canApprove: () => true } },
      }),
    );
    const job = await runtime.executePlan(plan(to), { caller: { id: 'alice' } });
    assert.equal(job.status, 'awaiting_approval');
    const [request] = (await runtime.listApprovals({ jobId: job.id })) as StepApprovalRequest[];
    assert.deepEqual(request?.input, { to, amount: 7 });
    return { runtime, job, request: request as NonNullable<typeof request>, option };
  };
  const paidTo = (to: string) => paid.filter((input) => input.to === to);

  describe(`${store.name} store: approve with edits`, () => {
    it('runs the step with the approved input, authorized again, and keeps both inputs, their digests and the editor', async () => {
      const { runtime, job, request } = await waiting('ada');
      const approved = { to: 'ada', amount: 70 };
      const done = await runtime.decideApproval({
        jobId: job.id,
        stepId: 'pay',
        inputDigest: request.inputDigest,
        approver: { id: 'bob' },
        decision: 'approve',
        input: approved,
        comment: 'ten times the quote',
      });
      assert.equal(done.status, 'completed', done.error);
      assert.deepEqual(paidTo('ada'), [approved]);
      const approvedDigest = digestRecorded(approved);
      const again = asked.filter((context) => context.jobId === job.id && context.stepId === 'pay');
      assert.equal(again.length, 2);
      assert.deepEqual(again[1]?.input, approved);
      assert.equal(again[1]?.inputDigest, approvedDigest);
      assert.deepEqual(
        { ...again[1]?.approval, approver: again[1]?.approval?.approver.id, grantedAt: 'time' },
        {
          approver: 'bob',
          grantedAt: 'time',
          inputDigest: approvedDigest,
          edited: true,
          proposedDigest: request.inputDigest,
        },
      );
      const stored = (await runtime.getJob(job.id)) as Job;
      const step = stored.steps[1];
      assert.deepEqual(step?.input, { to: 'ada', amount: { $ref: 'steps.quote.result.total' } });
      assert.deepEqual(step?.proposedInput, { to: 'ada', amount: 7 });
      assert.deepEqual(step?.approvedInput, approved);
      assert.deepEqual(
        step?.resolvedInput,
        approved,
        'the input as authorized is the approved one',
      );
      assert.equal(step?.decision?.inputDigest, approvedDigest);
      assert.deepEqual(stored.events.find((event) => event.type === 'approval.granted')?.data, {
        stepId: 'pay',
        approver: 'bob',
        edited: true,
        inputDigest: approvedDigest,
        proposedDigest: request.inputDigest,
        comment: 'ten times the quote',
      });
      assert.equal(
        stored.events.find(
          (event) => event.type === 'capability.started' && event.data?.stepId === 'pay',
        )?.data?.inputDigest,
        approvedDigest,
      );
      assert.deepEqual(await runtime.verifyJob(job.id), { ok: true, events: stored.events.length });
      // The evidence bundle covers the edit: the approved input changed in it is reported.
      const bundle = await runtime.exportJob(job.id);
      assert.equal(verifyEvidence(bundle).ok, true);
      const changed = structuredClone(bundle) as { job: Job };
      (changed.job.steps[1] as { approvedInput: unknown }).approvedInput = {
        to: 'eve',
        amount: 70,
      };
      const verdict = verifyEvidence(changed);
      assert.equal(verdict.ok, false);
      assert.ok(
        verdict.problems.some((problem) => problem.part === 'job'),
        JSON.stringify(verdict),
      );
    });

    it('refuses an input the capability contract or the value domain refuses, and a reject with an input: nothing consumed', async () => {
      const { runtime, job, request } = await waiting('bea');
      const decide = (input: unknown, decision: 'approve' | 'reject' = 'approve') =>
        runtime.decideApproval({
          jobId: job.id,
          stepId: 'pay',
          inputDigest: request.inputDigest,
          approver: { id: 'bob' },
          decision,
          input,
        });
      await assert.rejects(decide({ to: 'bea', amount: 'lots' }), {
        code: 'APPROVAL_INPUT_INVALID',
        message: /input\.amount must be a finite number/,
      });
      await assert.rejects(decide({ to: 'bea' }), { code: 'APPROVAL_INPUT_INVALID' });
      await assert.rejects(decide({ to: 'bea', amount: 1, at: new Date(0) }), {
        code: 'APPROVAL_INPUT_INVALID',
        message: /input\.at is a Date \(VALUE_NOT_PLAIN_DATA\)/,
      });
      await assert.rejects(decide({ to: 'bea', amount: 1 }, 'reject'), {
        code: 'APPROVAL_DECISION_INVALID',
      });
      assert.deepEqual(paidTo('bea'), []);
      const stored = (await runtime.getJob(job.id)) as Job;
      assert.equal(stored.status, 'awaiting_approval');
      assert.equal(stored.events.at(-1)?.type, 'approval.requested');
      assert.deepEqual(
        ((await runtime.listApprovals({ jobId: job.id })) as StepApprovalRequest[]).map(
          (pending) => pending.inputDigest,
        ),
        [request.inputDigest],
      );
      // Still pending: approved as proposed afterwards, it runs as proposed (nothing edited).
      const done = await runtime.decideApproval({
        jobId: job.id,
        stepId: 'pay',
        inputDigest: request.inputDigest,
        approver: { id: 'bob' },
        decision: 'approve',
        input: { amount: 7, to: 'bea' },
      });
      assert.equal(done.status, 'completed');
      assert.deepEqual(paidTo('bea'), [{ to: 'bea', amount: 7 }]);
      const after = (await runtime.getJob(job.id)) as Job;
      assert.equal(
        after.events.find((event) => event.type === 'approval.granted')?.data?.edited,
        undefined,
      );
      assert.equal(Object.hasOwn(after.steps[1] as object, 'approvedInput'), false);
      assert.equal((await runtime.verifyJob(job.id))?.ok, true);
    });

    it('an approved input the authorizer denies: the step is denied with it, recorded, nothing runs', async () => {
      const { runtime, job, request } = await waiting('cy');
      const approved = { to: 'cy', amount: 5000 };
      const done = await runtime.decideApproval({
        jobId: job.id,
        stepId: 'pay',
        inputDigest: request.inputDigest,
        approver: { id: 'bob' },
        decision: 'approve',
        input: approved,
      });
      assert.equal(done.status, 'failed');
      assert.equal(done.error, 'Nothing over 1000 is paid');
      assert.deepEqual(paidTo('cy'), []);
      const stored = (await runtime.getJob(job.id)) as Job;
      const denied = stored.events.find((event) => event.type === 'capability.denied');
      assert.equal(denied?.data?.inputDigest, digestRecorded(approved));
      assert.equal(stored.steps[1]?.decision?.outcome, 'deny');
      assert.deepEqual(stored.steps[1]?.resolvedInput, approved);
      assert.deepEqual(stored.steps[1]?.proposedInput, { to: 'cy', amount: 7 });
      assert.deepEqual(await runtime.verifyJob(job.id), { ok: true, events: stored.events.length });
    });

    if (store.sql !== undefined) {
      const sql = store.sql;
      const seq = '(SELECT seq FROM {jobs} WHERE id = ?)';
      it('an edit of the approved or the proposed input, or of the grant, in the database fails verifyJob', async () => {
        const { runtime, job, request, option: storeOption } = await waiting('dee');
        await runtime.decideApproval({
          jobId: job.id,
          stepId: 'pay',
          inputDigest: request.inputDigest,
          approver: { id: 'bob' },
          decision: 'approve',
          input: { to: 'dee', amount: 70 },
        });
        assert.equal((await runtime.verifyJob(job.id))?.ok, true);
        const [row] = await sql(
          storeOption,
          `SELECT decision FROM {job_steps} WHERE job_seq = ${seq} AND position = 1`,
          [job.id],
        );
        const original = String(row?.decision);
        const rewrite = async (change: (column: Record<string, unknown>) => void) => {
          const column = JSON.parse(original) as Record<string, unknown>;
          change(column);
          await sql(
            storeOption,
            `UPDATE {job_steps} SET decision = ? WHERE job_seq = ${seq} AND position = 1`,
            [JSON.stringify(column), job.id],
          );
        };
        const reasons: string[] = [];
        for (const change of [
          (column: Record<string, unknown>) => (column.approvedInput = { to: 'eve', amount: 70 }),
          (column: Record<string, unknown>) => (column.proposedInput = { to: 'dee', amount: 70 }),
          (column: Record<string, unknown>) => delete column.proposedInput,
        ]) {
          await rewrite(change);
          const verdict = await runtime.verifyJob(job.id);
          assert.equal(verdict?.ok, false);
          reasons.push((verdict as { reason: string }).reason);
        }
        assert.deepEqual(reasons, [
          'the approved input of step pay does not match its edited grant',
          'the proposed input of step pay does not match its edited grant',
          'step pay holds no proposed or approved input but its grant was edited',
        ]);
        await rewrite(() => {});
        assert.equal((await runtime.verifyJob(job.id))?.ok, true);
        // The grant's proposed digest rewritten in its event row: the chain no longer holds.
        const [granted] = await sql(
          storeOption,
          `SELECT position, event FROM {job_events} WHERE job_seq = ${seq} AND event LIKE '%approval.granted%'`,
          [job.id],
        );
        const event = JSON.parse(String(granted?.event)) as { data: Record<string, unknown> };
        event.data.proposedDigest = digestRecorded({ to: 'dee', amount: 70 });
        await sql(
          storeOption,
          `UPDATE {job_events} SET event = ? WHERE job_seq = ${seq} AND position = ?`,
          [JSON.stringify(event), job.id, Number(granted?.position)],
        );
        const verdict = await runtime.verifyJob(job.id);
        assert.equal(verdict?.ok, false);
        assert.match(
          (verdict as { reason: string }).reason,
          /approval\.granted\) does not match its hash/,
        );
      });
    }
  });
}
