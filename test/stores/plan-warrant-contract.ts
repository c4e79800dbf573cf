// Plan warrants on every store (docs/api.md, "Plan warrants"): the preview at submission (a deny
// refuses the plan, nothing invoked), one plan request approved once, the covered steps running
// under the grant, escalation outside it, an expired grant, one winner among concurrent
// decisions, and a restored copy that cannot be decided again. Run by runJobStoreContract for
// memory, SQLite and PostgreSQL.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  OperatorRuntime,
  type ApproverPolicy,
  type ExecutionAuthorizer,
  type ExecutionPlan,
  type Job,
  type PlanApprovalRequest,
  type StepApprovalRequest,
} from '../../src/index.js';
import { registerShared, suiteRuntimes } from '../support/store-fixtures.js';
import type { StoreUnderTest } from './contract.js';
import { keepJobRows } from './restored-copy.js';

const anyone: ApproverPolicy = { canApprove: () => true };
const ALICE = { id: 'alice' };
const DIGEST = /^sha256:[0-9a-f]{64}$/;

export function runPlanWarrantContract(store: StoreUnderTest): void {
  const { keep } = suiteRuntimes();
  const invoked: { tag: string; input: unknown }[] = [];
  /** What each step sees when it runs; `onPay` runs before a payment returns. */
  let onPay: (input: { tag?: string }) => void = () => {};
  const { quote, pay } = registerShared('warrant', {
    quote: {
      description: 'quotes a total',
      execute: ({ input }) => ({ total: (input as { total: unknown }).total }),
    },
    pay: {
      description: 'pays',
      risk: 'write',
      execute: ({ input }) => {
        const payment = input as { tag: string };
        invoked.push({ tag: payment.tag, input });
        onPay(payment);
        return { paid: true };
      },
    },
  });
  /** Asked about every step: previews counted apart. Mallory is never paid. */
  const asked: { preview: boolean; stepId: string }[] = [];
  const authorizer: ExecutionAuthorizer = {
    authorize: (context) => {
      asked.push({ preview: context.preview === true, stepId: context.stepId });
      if (context.capability.risk === 'read') return { decision: 'allow' };
      if ((context.input as { to?: unknown }).to === 'mallory')
        return { decision: 'deny', reason: 'never mallory' };
      return context.approval === undefined
        ? { decision: 'require_approval', reason: 'a person approves payments' }
        : { decision: 'allow' };
    },
  };
  const runtimeOn = (option: string, ttlMs?: number) =>
    keep(
      new OperatorRuntime({
        store: option,
        authorizer,
        planVersions: ['1.0', '2.0'],
        approvals: ttlMs === undefined ? { approver: anyone } : { approver: anyone, ttlMs },
      }),
    );
  /** Quote `total`, pay 10 to `to` (known input), pay the quoted total to bob (bounded). */
  const plan = (tag: string, total: unknown, to = 'ada'): ExecutionPlan => ({
    version: '2.0',
    goal: `plan warrant ${tag}`,
    steps: [
      { id: 'q', capability: quote, input: { total } },
      { id: 'p1', capability: pay, input: { tag, amount: 10, to } },
      {
        id: 'p2',
        capability: pay,
        input: { tag, amount: { $ref: 'steps.q.result.total' }, to: 'bob' },
        bounds: { amount: { type: 'number', exclusiveMinimum: 0, maximum: 100 } },
      },
    ],
  });
  const paid = (tag: string) => invoked.filter((entry) => entry.tag === tag).map((e) => e.input);
  const planRequest = async (runtime: OperatorRuntime, job: Job) => {
    const [request, ...others] = await runtime.listApprovals({ jobId: job.id });
    assert.equal(others.length, 0);
    assert.equal(request?.kind, 'plan');
    return request as PlanApprovalRequest;
  };
  const decidePlan = (
    runtime: OperatorRuntime,
    job: Job,
    planDigest: string,
    approver = 'bob',
    decision: 'approve' | 'reject' = 'approve',
  ) =>
    runtime.decideApproval({
      kind: 'plan',
      jobId: job.id,
      planDigest,
      approver: { id: approver },
      decision,
    });

  describe(`${store.name} store: plan warrants`, () => {
    it('a step previewed deny fails the plan with PLAN_DENIED before anything runs', async () => {
      const runtime = runtimeOn(await store.freshStoreOption());
      asked.length = 0;
      const job = await runtime.executePlan(plan('denied', 5, 'mallory'), {
        caller: ALICE,
        approval: 'plan',
      });
      assert.equal(job.status, 'failed');
      assert.equal(
        job.error,
        `PLAN_DENIED: step "p1" (${pay}) is denied: never mallory`,
        'the step with its reason',
      );
      // Nothing invoked: not even the read before it; one preview per step with a known input.
      assert.deepEqual(paid('denied'), []);
      assert.deepEqual(
        asked.map((call) => [call.stepId, call.preview]),
        [
          ['q', true],
          ['p1', true],
        ],
        'p2 holds a reference: it is previewed unknown, unasked; no step was decided to run',
      );
      const stored = (await runtime.getJob(job.id)) as Job;
      assert.deepEqual(
        stored.steps.map((step) => step.status),
        ['skipped', 'failed', 'skipped'],
      );
      assert.deepEqual(
        stored.events.map((event) => event.type),
        ['job.created', 'execution.started', 'capability.denied', 'job.failed'],
      );
      assert.deepEqual(await runtime.verifyJob(job.id), { ok: true, events: stored.events.length });
    });

    it('one plan request, approved once: the covered steps run under the grant, recorded so', async () => {
      const runtime = runtimeOn(await store.freshStoreOption());
      asked.length = 0;
      const job = await runtime.executePlan(plan('granted', 42), {
        caller: ALICE,
        approval: 'plan',
      });
      assert.equal(job.status, 'awaiting_approval');
      assert.deepEqual(paid('granted'), []);
      assert.equal(asked.filter((call) => !call.preview).length, 0, 'nothing decided to run');
      const request = await planRequest(runtime, job);
      assert.match(request.planDigest, DIGEST);
      assert.deepEqual(
        request.steps.map((step) => [step.id, step.outcome, step.inputDigest !== undefined]),
        [
          ['q', 'allow', true],
          ['p1', 'require_approval', true],
          ['p2', 'unknown', false],
        ],
      );
      assert.deepEqual(request.steps[2]?.bounds, {
        amount: { type: 'number', exclusiveMinimum: 0, maximum: 100 },
      });
      assert.deepEqual(request.steps[2]?.input, {
        tag: 'granted',
        amount: { $ref: 'steps.q.result.total' },
        to: 'bob',
      });
      assert.deepEqual(request.caller, ALICE);
      const requested = job.events.find((event) => event.type === 'approval.requested');
      assert.equal(requested?.data?.kind, 'plan');
      assert.equal(requested?.data?.planDigest, request.planDigest);
      assert.equal(await runtime.countApprovals(), 1);
      assert.deepEqual(await runtime.verifyJob(job.id), { ok: true, events: job.events.length });
      // The same rules as a step request.
      await assert.rejects(decidePlan(runtime, job, request.planDigest, 'alice'), {
        code: 'APPROVAL_SELF_APPROVAL',
      });
      await assert.rejects(decidePlan(runtime, job, `sha256:${'0'.repeat(64)}`), {
        code: 'APPROVAL_DIGEST_MISMATCH',
      });
      await assert.rejects(
        runtime.decideApproval({
          jobId: job.id,
          stepId: 'q',
          inputDigest: request.planDigest,
          approver: { id: 'bob' },
          decision: 'approve',
        }),
        { code: 'APPROVAL_NOT_PENDING' },
        'a plan request is not decided as a step request',
      );
      const done = await decidePlan(runtime, job, request.planDigest);
      assert.equal(done.status, 'completed', done.error);
      assert.deepEqual(paid('granted'), [
        { tag: 'granted', amount: 10, to: 'ada' },
        { tag: 'granted', amount: 42, to: 'bob' },
      ]);
      const stored = (await runtime.getJob(job.id)) as Job;
      const underGrant = { kind: 'plan', planDigest: request.planDigest, approver: 'bob' };
      assert.deepEqual(
        stored.steps.map((step) => step.decision?.approval),
        [undefined, underGrant, underGrant],
        'the read was allowed on its own; each write covered by the grant',
      );
      assert.equal(
        asked.filter((call) => !call.preview).length,
        3,
        'every step authorized again at its turn',
      );
      const granted = stored.events.find((event) => event.type === 'approval.granted');
      assert.equal(granted?.data?.kind, 'plan');
      assert.equal(granted?.data?.planDigest, request.planDigest);
      assert.deepEqual(await runtime.verifyJob(job.id), { ok: true, events: stored.events.length });
      await assert.rejects(decidePlan(runtime, job, request.planDigest, 'carol'), {
        code: 'APPROVAL_NOT_PENDING',
      });
      assert.equal(paid('granted').length, 2, 'a plan grant is consumed once');
    });

    it('a rejected plan fails; nothing runs', async () => {
      const runtime = runtimeOn(await store.freshStoreOption());
      const job = await runtime.executePlan(plan('rejected', 42), {
        caller: ALICE,
        approval: 'plan',
      });
      const request = await planRequest(runtime, job);
      const done = await decidePlan(runtime, job, request.planDigest, 'bob', 'reject');
      assert.equal(done.status, 'failed');
      assert.equal(done.error, 'Approval rejected');
      assert.deepEqual(paid('rejected'), []);
      const stored = (await runtime.getJob(job.id)) as Job;
      assert.deepEqual(await runtime.verifyJob(job.id), { ok: true, events: stored.events.length });
    });

    it('a step outside the approved plan escalates to a step request that says why', async () => {
      const runtime = runtimeOn(await store.freshStoreOption());
      // The quoted total is above the bound: the grant does not cover paying it.
      const job = await runtime.executePlan(plan('over', 250), {
        caller: ALICE,
        approval: 'plan',
      });
      const request = await planRequest(runtime, job);
      const stopped = await decidePlan(runtime, job, request.planDigest);
      assert.equal(stopped.status, 'awaiting_approval');
      assert.deepEqual(paid('over'), [{ tag: 'over', amount: 10, to: 'ada' }]);
      const [step] = (await runtime.listApprovals({ jobId: job.id })) as StepApprovalRequest[];
      assert.equal(step?.kind, 'step');
      assert.equal(step?.stepId, 'p2');
      assert.equal(step?.reason, 'outside the approved plan: amount 250 is above maximum 100');
      assert.deepEqual(step?.input, { tag: 'over', amount: 250, to: 'bob' });
      const done = await runtime.decideApproval({
        jobId: job.id,
        stepId: 'p2',
        inputDigest: step?.inputDigest ?? '',
        approver: { id: 'carol' },
        decision: 'approve',
      });
      assert.equal(done.status, 'completed', done.error);
      assert.equal(paid('over').length, 2);
      const stored = (await runtime.getJob(job.id)) as Job;
      assert.equal(stored.steps[2]?.decision?.approval, undefined, 'approved as a step');
      assert.deepEqual(await runtime.verifyJob(job.id), { ok: true, events: stored.events.length });

      // A field holding a reference without bounds is never covered.
      const unbounded = await runtime.executePlan(
        {
          version: '2.0',
          goal: 'plan warrant unbounded',
          steps: [
            { id: 'q', capability: quote, input: { total: 'ada' } },
            {
              id: 'p',
              capability: pay,
              input: { tag: 'unbounded', to: { $ref: 'steps.q.result.total' } },
            },
          ],
        },
        { caller: ALICE, approval: 'plan' },
      );
      const planned = await planRequest(runtime, unbounded);
      await decidePlan(runtime, unbounded, planned.planDigest);
      const [escalated] = (await runtime.listApprovals({
        jobId: unbounded.id,
      })) as StepApprovalRequest[];
      assert.equal(
        escalated?.reason,
        'outside the approved plan: to holds a reference and has no bounds',
      );
      assert.deepEqual(paid('unbounded'), []);
    });

    it('an expired plan grant covers nothing: the next step escalates', async (t) => {
      // The clock jumps past the grant's end while the first payment runs.
      let offset = 0;
      const realNow = Date.now.bind(Date);
      t.mock.method(Date, 'now', () => realNow() + offset);
      const runtime = runtimeOn(await store.freshStoreOption(), 60_000);
      const job = await runtime.executePlan(plan('late', 42), {
        caller: ALICE,
        approval: 'plan',
      });
      const request = await planRequest(runtime, job);
      onPay = () => {
        offset += 61_000;
      };
      try {
        const stopped = await decidePlan(runtime, job, request.planDigest);
        assert.equal(stopped.status, 'awaiting_approval');
      } finally {
        onPay = () => {};
      }
      const stored = (await runtime.getJob(job.id)) as Job;
      const granted = stored.events.find((event) => event.type === 'approval.granted');
      const [step] = (await runtime.listApprovals({ jobId: job.id })) as StepApprovalRequest[];
      assert.equal(step?.stepId, 'p2');
      assert.equal(
        step?.reason,
        `outside the approved plan: the plan grant expired at ${String(granted?.data?.expiresAt)}`,
      );
      assert.equal(paid('late').length, 1);
    });

    it('concurrent plan decisions, several runtimes on one store: exactly one winner', async () => {
      const option = await store.freshStoreOption();
      const first = runtimeOn(option);
      const many =
        store.reopen === undefined
          ? [first, first, first]
          : [first, runtimeOn(option), runtimeOn(option)];
      const job = await first.executePlan(plan('race', 42), { caller: ALICE, approval: 'plan' });
      const { planDigest } = await planRequest(first, job);
      const outcomes = await Promise.allSettled(
        many.flatMap((runtime, index) => [
          decidePlan(runtime, job, planDigest, `approver-${index}`),
          decidePlan(runtime, job, planDigest, `rejecter-${index}`, 'reject'),
        ]),
      );
      const won = outcomes.filter((outcome) => outcome.status === 'fulfilled');
      assert.equal(won.length, 1, JSON.stringify(outcomes.map((outcome) => outcome.status)));
      for (const outcome of outcomes) {
        if (outcome.status === 'rejected')
          assert.equal((outcome.reason as { code?: string }).code, 'APPROVAL_NOT_PENDING');
      }
      const winner = (won[0] as PromiseFulfilledResult<Job>).value;
      assert.equal(paid('race').length, winner.status === 'completed' ? 2 : 0);
      const stored = (await first.getJob(job.id)) as Job;
      assert.equal(
        stored.events.filter((event) => /^approval\.(granted|rejected)$/.test(event.type)).length,
        1,
      );
      assert.deepEqual(await first.verifyJob(job.id), { ok: true, events: stored.events.length });
    });

    if (store.sql !== undefined) {
      const sql = store.sql;
      const seq = '(SELECT seq FROM {jobs} WHERE id = ?)';
      it('a restored copy of a decided plan request cannot be decided again; verify reports it', async () => {
        const option = await store.freshStoreOption();
        const runtime = runtimeOn(option);
        const job = await runtime.executePlan(plan('replay', 42), {
          caller: ALICE,
          approval: 'plan',
        });
        const { planDigest } = await planRequest(runtime, job);
        // Someone with access to the database keeps the waiting job's rows...
        const restore = await keepJobRows(sql, option, job);
        const done = await decidePlan(runtime, job, planDigest);
        assert.equal(done.status, 'completed');
        // ...and puts them back once the plan ran.
        await restore();
        assert.equal((await runtime.getJob(job.id))?.status, 'awaiting_approval');
        const verification = await runtime.verifyJob(job.id);
        assert.equal(verification?.ok, false);
        assert.match(
          (verification as { reason: string }).reason,
          /^the approval request of step q was granted \(the store's ledger of consumed approvals\)/,
        );
        const again = runtimeOn(option);
        assert.deepEqual(await again.listApprovals({ jobId: job.id }), []);
        await assert.rejects(decidePlan(again, job, planDigest, 'carol'), {
          code: 'APPROVAL_NOT_PENDING',
        });
        assert.equal(paid('replay').length, 2, 'the plan ran once');
        assert.equal((await again.getJob(job.id))?.status, 'awaiting_approval', 'nothing written');
      });

      it('a stored plan grant or plan request edited is found by verifyJob', async () => {
        const option = await store.freshStoreOption();
        const runtime = runtimeOn(option);
        const job = await runtime.executePlan(plan('tamper', 42), {
          caller: ALICE,
          approval: 'plan',
        });
        const { planDigest } = await planRequest(runtime, job);
        const done = await decidePlan(runtime, job, planDigest);
        assert.equal(done.status, 'completed');
        const positions = done.events
          .map((event, position) => ({ event, position }))
          .filter(({ event }) => event.data?.kind === 'plan');
        assert.deepEqual(
          positions.map(({ event }) => event.type),
          ['approval.requested', 'approval.granted'],
        );
        for (const { event, position } of positions) {
          const [row] = await sql(
            option,
            `SELECT event FROM {job_events} WHERE job_seq = ${seq} AND position = ?`,
            [job.id, position],
          );
          const original = String(row?.event);
          const edited = original.replace(planDigest, `sha256:${'1'.repeat(64)}`);
          assert.notEqual(edited, original, `${event.type} holds the planDigest`);
          await sql(
            option,
            `UPDATE {job_events} SET event = ? WHERE job_seq = ${seq} AND position = ?`,
            [edited, job.id, position],
          );
          const verification = await runtime.verifyJob(job.id);
          assert.equal(verification?.ok, false, event.type);
          assert.equal((verification as { eventIndex?: number }).eventIndex, position);
          await sql(
            option,
            `UPDATE {job_events} SET event = ? WHERE job_seq = ${seq} AND position = ?`,
            [original, job.id, position],
          );
        }
        assert.deepEqual(await runtime.verifyJob(job.id), { ok: true, events: done.events.length });
      });
    }
  });
}
