// Approvals on every store (docs/decisions.md, "Approvals"): a request is consumed by exactly
// one decision, concurrent decisions through several runtimes on one durable store have one
// winner, a waiting job survives a restart, and a store fault during a decision leaves the
// request pending. Run by runJobStoreContract for memory, SQLite and PostgreSQL.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  OperatorRuntime,
  type ApproverPolicy,
  type ExecutionPlan,
  type Job,
} from '../../src/index.js';
import type { JobChange, JobStore } from '../../src/jobs/job-store.js';
import { runtimeOnStore } from '../../src/runtime/operator-runtime.js';
import { MemoryJobStore } from '../../src/stores/memory/memory-store.js';
import { countingStore } from '../support/counting-store.js';
import { registerShared, suiteRuntimes } from '../support/store-fixtures.js';
import type { StoreUnderTest } from './contract.js';
import { keepJobRows } from './restored-copy.js';
import { stepRequests } from '../support/step-requests.js';

const anyone: ApproverPolicy = { canApprove: () => true };

export function runApprovalContract(store: StoreUnderTest): void {
  const { keep } = suiteRuntimes();
  const invoked: unknown[] = [];
  const { read, write } = registerShared('approve', {
    read: { description: 'reads', execute: () => ({ value: 7 }) },
    write: {
      description: 'writes',
      risk: 'write',
      execute: ({ input }) => {
        invoked.push(input);
        return { ok: true };
      },
    },
  });
  const plan = (tag: string): ExecutionPlan => ({
    version: '1.0',
    goal: `approvals ${tag}`,
    steps: [
      { id: 'a', capability: read, input: {} },
      { id: 'b', capability: write, input: { tag, n: { $ref: 'steps.a.result.value' } } },
      { id: 'c', capability: read, input: {} },
    ],
  });
  const runtimeOn = (option: string) =>
    keep(new OperatorRuntime({ store: option, approvals: { approver: anyone } }));
  const approve = (runtime: OperatorRuntime, job: Job, approver = 'bob') =>
    runtime.decideApproval({
      jobId: job.id,
      stepId: 'b',
      inputDigest: job.steps[1]?.decision?.inputDigest ?? '',
      approver: { id: approver },
      decision: 'approve',
    });
  const timesInvoked = (tag: string) =>
    invoked.filter((input) => (input as { tag?: string }).tag === tag).length;

  describe(`${store.name} store: approvals`, () => {
    it('keeps a waiting job as recorded and consumes its request once', async () => {
      const runtime = runtimeOn(await store.freshStoreOption());
      const job = await runtime.executePlan(plan('once'), { caller: { id: 'alice' } });
      assert.equal(job.status, 'awaiting_approval');
      const stored = await runtime.getJob(job.id);
      assert.equal(stored?.status, 'awaiting_approval');
      assert.equal(stored?.steps[1]?.status, 'awaiting_approval');
      assert.equal(stored?.steps[2]?.status, 'pending');
      assert.deepEqual(
        (await runtime.listJobs({ status: 'awaiting_approval' })).map((found) => found.id),
        [job.id],
      );
      const done = await approve(runtime, job);
      assert.equal(done.status, 'completed');
      assert.deepEqual(
        (await runtime.getJob(job.id))?.steps.map((step) => step.status),
        ['completed', 'completed', 'completed'],
      );
      await assert.rejects(approve(runtime, job), { code: 'APPROVAL_NOT_PENDING' });
      assert.equal(timesInvoked('once'), 1);
      assert.deepEqual(await runtime.verifyJob(job.id), { ok: true, events: done.events.length });
    });

    it('concurrent decisions, several runtimes on one store: exactly one winner', async () => {
      const option = await store.freshStoreOption();
      const first = runtimeOn(option);
      // The memory store is one runtime's own: there, the runtimes are one.
      const many =
        store.reopen === undefined
          ? [first, first, first]
          : [first, runtimeOn(option), runtimeOn(option)];
      const job = await first.executePlan(plan('race'), { caller: { id: 'alice' } });
      const outcomes = await Promise.allSettled(
        many.flatMap((runtime, index) => [
          approve(runtime, job, `approver-${index}`),
          runtime.decideApproval({
            jobId: job.id,
            stepId: 'b',
            inputDigest: job.steps[1]?.decision?.inputDigest ?? '',
            approver: { id: `rejecter-${index}` },
            decision: 'reject',
          }),
        ]),
      );
      const won = outcomes.filter((outcome) => outcome.status === 'fulfilled');
      assert.equal(won.length, 1, JSON.stringify(outcomes.map((outcome) => outcome.status)));
      for (const outcome of outcomes) {
        if (outcome.status === 'rejected')
          assert.equal((outcome.reason as { code?: string }).code, 'APPROVAL_NOT_PENDING');
      }
      const winner = (won[0] as PromiseFulfilledResult<Job>).value;
      assert.equal(timesInvoked('race'), winner.status === 'completed' ? 1 : 0);
      const stored = (await first.getJob(job.id)) as Job;
      assert.equal(stored.status, winner.status);
      const decisions = stored.events.filter((event) => event.type.startsWith('approval.'));
      assert.deepEqual(decisions.map((event) => event.type).slice(0, 1), ['approval.requested']);
      assert.equal(decisions.length, 2);
      assert.deepEqual(await first.verifyJob(job.id), { ok: true, events: stored.events.length });
    });

    it('a job awaiting approval verifies intact; a grant keeps its comment, shown in the record', async () => {
      const runtime = runtimeOn(await store.freshStoreOption());
      const job = await runtime.executePlan(plan('pending'), { caller: { id: 'alice' } });
      assert.equal(job.status, 'awaiting_approval');
      assert.deepEqual(await runtime.verifyJob(job.id), { ok: true, events: job.events.length });
      const done = await runtime.decideApproval({
        jobId: job.id,
        stepId: 'b',
        inputDigest: job.steps[1]?.decision?.inputDigest ?? '',
        approver: { id: 'bob' },
        decision: 'approve',
        comment: 'checked the amount',
      });
      assert.equal(done.status, 'completed');
      const stored = (await runtime.getJob(job.id)) as Job;
      assert.deepEqual(stored.events.find((event) => event.type === 'approval.granted')?.data, {
        stepId: 'b',
        approver: 'bob',
        comment: 'checked the amount',
      });
      assert.deepEqual(await runtime.verifyJob(job.id), { ok: true, events: stored.events.length });
    });

    it('a grant that lands after expiresAt (a slow approver policy) is refused; nothing runs', async () => {
      const slow: ApproverPolicy = {
        canApprove: () => new Promise((resolve) => setTimeout(() => resolve(true), 400)),
      };
      const runtime = new OperatorRuntime({
        store: await store.freshStoreOption(),
        approvals: { approver: slow, ttlMs: 200 },
      });
      keep(runtime);
      const job = await runtime.executePlan(plan('slow'), { caller: { id: 'alice' } });
      await assert.rejects(approve(runtime, job), { code: 'APPROVAL_EXPIRED' });
      assert.equal(timesInvoked('slow'), 0);
      const stored = (await runtime.getJob(job.id)) as Job;
      assert.equal(stored.status, 'failed');
      assert.equal(stored.error, 'Approval expired');
      assert.equal(
        stored.events.some((event) => event.type === 'approval.granted'),
        false,
      );
      assert.deepEqual(await runtime.verifyJob(job.id), { ok: true, events: stored.events.length });
    });

    if (store.sql !== undefined) {
      const sql = store.sql;
      it('a restored copy of a decided request cannot be approved again, and verify reports it', async () => {
        const option = await store.freshStoreOption();
        const runtime = runtimeOn(option);
        const job = await runtime.executePlan(plan('replay'), { caller: { id: 'alice' } });
        // Someone with access to the database keeps the waiting job's rows...
        const restore = await keepJobRows(sql, option, job);
        const done = await approve(runtime, job);
        assert.equal(done.status, 'completed');
        assert.equal(timesInvoked('replay'), 1);
        // ...and puts them back once the write ran.
        await restore();
        assert.equal((await runtime.getJob(job.id))?.status, 'awaiting_approval');
        const verification = await runtime.verifyJob(job.id);
        assert.equal(verification?.ok, false);
        assert.match(
          (verification as { reason: string }).reason,
          /^the approval request of step b was granted \(the store's ledger of consumed approvals\) but the record does not show it: the job was restored from an older copy/,
        );
        const again = runtimeOn(option);
        assert.deepEqual(
          stepRequests(await again.listApprovals()).filter((request) => request.jobId === job.id),
          [],
          'a request the ledger holds as decided is not listed',
        );
        assert.deepEqual(stepRequests(await again.listApprovals({ jobId: job.id })), []);
        await assert.rejects(approve(again, job, 'carol'), { code: 'APPROVAL_NOT_PENDING' });
        assert.equal(timesInvoked('replay'), 1, 'the write ran once');
        assert.equal((await again.getJob(job.id))?.status, 'awaiting_approval', 'nothing written');
        // The whole-store check reports it too, sealed or not.
        const whole = await again.verifyStore();
        assert.ok(
          whole.problems.some(
            (problem) =>
              problem.jobId === job.id &&
              /the job was restored from an older copy/.test(problem.reason),
          ),
          JSON.stringify(whole.problems),
        );
      });

      it('a ledger entry deleted or changed after a checkpoint sealed it is named by verifyStore', async () => {
        const option = await store.freshStoreOption();
        const runtime = runtimeOn(option);
        const kept = await runtime.executePlan(plan('ledger-kept'), { caller: { id: 'alice' } });
        const edited = await runtime.executePlan(plan('ledger-edit'), { caller: { id: 'alice' } });
        const gone = await runtime.executePlan(plan('ledger-gone'), { caller: { id: 'alice' } });
        for (const job of [kept, edited, gone])
          assert.equal((await approve(runtime, job)).status, 'completed');
        await runtime.close();
        const reader = runtimeOn(option);
        const untouched = await reader.verifyStore();
        assert.deepEqual(untouched.problems, []);
        const [entry] = await sql(
          option,
          'SELECT request_position FROM {approval_ledger} WHERE job_id = ?',
          [gone.id],
        );
        const position = Number(entry?.request_position);
        await sql(option, 'DELETE FROM {approval_ledger} WHERE job_id = ?', [gone.id]);
        await sql(option, "UPDATE {approval_ledger} SET decision = 'rejected' WHERE job_id = ?", [
          edited.id,
        ]);
        const verification = await reader.verifyStore();
        assert.equal(verification.ok, false);
        const ledger = verification.problems.filter((problem) => problem.kind === 'ledger');
        assert.deepEqual(
          ledger.map((problem) => problem.jobId).sort(),
          [edited.id, gone.id].sort(),
          JSON.stringify(verification.problems),
        );
        assert.match(
          ledger.find((problem) => problem.jobId === gone.id)?.reason ?? '',
          new RegExp(
            `^the ledger entry of the approval request at event ${position} of job ${gone.id}, sealed by checkpoint \\d+, is gone`,
          ),
        );
        assert.match(
          ledger.find((problem) => problem.jobId === edited.id)?.reason ?? '',
          /, was changed: it is not as sealed$/,
        );
      });
    }

    if (store.reopen !== undefined) {
      const reopen = store.reopen;
      it('a waiting job survives a restart: listed and resumed by a new runtime', async () => {
        const option = await store.freshStoreOption();
        const before = runtimeOn(option);
        const job = await before.executePlan(plan('restart'), { caller: { id: 'alice' } });
        await before.close();
        const afterRestart = runtimeOn(option);
        const [request] = stepRequests(await afterRestart.listApprovals());
        assert.equal(request?.jobId, job.id);
        assert.deepEqual(request?.input, { tag: 'restart', n: 7 });
        assert.deepEqual(request?.caller, { id: 'alice' });
        const done = await approve(afterRestart, job);
        assert.equal(done.status, 'completed');
        assert.equal(timesInvoked('restart'), 1);
        assert.deepEqual(await afterRestart.verifyJob(job.id), {
          ok: true,
          events: done.events.length,
        });
      });

      it('a store fault during a decision leaves the request pending; nothing runs', async () => {
        const option = await store.freshStoreOption();
        const submitter = runtimeOn(option);
        const job = await submitter.executePlan(plan('fault'), { caller: { id: 'alice' } });
        const real = reopen(option);
        let faults = 1;
        const faulty: JobStore = {
          create: (created) => real.create(created),
          update: (updated: Job, change: JobChange) => {
            if (change.claims !== undefined && faults-- > 0)
              return Promise.reject(new Error('disk on fire'));
            return real.update(updated, change);
          },
          get: (id) => real.get(id),
          list: (filter) => real.list(filter),
          close: () => real.close(),
        };
        const deciding = runtimeOnStore(faulty, { approvals: { approver: anyone } });
        keep(deciding);
        await assert.rejects(approve(deciding, job), { code: 'JOB_STORE_FAILED' });
        assert.equal(timesInvoked('fault'), 0);
        const [request] = stepRequests(await submitter.listApprovals());
        assert.equal(request?.jobId, job.id);
        assert.equal((await submitter.getJob(job.id))?.status, 'awaiting_approval');
        const done = await approve(deciding, job);
        assert.equal(done.status, 'completed');
        assert.equal(timesInvoked('fault'), 1);
        assert.deepEqual(await submitter.verifyJob(job.id), {
          ok: true,
          events: done.events.length,
        });
      });
    }

    it('pages approvals from the store: one page of rows per page, in creation order, across tenants never', async () => {
      const option = await store.freshStoreOption();
      const counted = countingStore(store.reopen?.(option) ?? new MemoryJobStore(10_000));
      const runtime = runtimeOnStore(counted.store, { approvals: { approver: anyone } });
      keep(runtime);
      const ids: string[] = [];
      for (let index = 0; index < 130; index++)
        ids.push(
          (await runtime.executePlan(plan(`page-${index}`), { caller: { id: 'alice' } })).id,
        );
      const bob = { id: 'bob' };
      const seen: string[] = [];
      let cursor: string | undefined;
      const reads: number[] = [];
      do {
        counted.reset();
        const page = await runtime.approvalPage({
          caller: bob,
          limit: 50,
          ...(cursor === undefined ? {} : { cursor }),
        });
        reads.push(counted.rows());
        seen.push(...page.requests.map((request) => request.jobId));
        cursor = page.nextCursor;
      } while (cursor !== undefined && reads.length < 10);
      assert.deepEqual(seen, ids, 'every request once, oldest job first');
      // A page of 50 reads its 51 jobs (one more tells whether a page follows), and the job the
      // cursor ended in: never the 130 pending ones.
      assert.deepEqual(reads.length, 3);
      for (const rows of reads) assert.ok(rows <= 52, `read ${rows} rows for a page of 50`);
      assert.equal(await runtime.countApprovals({ caller: bob }), 130);
      assert.equal(await runtime.countApprovals({ caller: { id: 'bob', tenant: 'b' } }), 0);
      assert.deepEqual(
        await runtime.approvalPage({ caller: { id: 'bob', tenant: 'b' }, limit: 50 }),
        { requests: [] },
      );
      const foreign = Buffer.from(JSON.stringify(['not a position', 'x', 'y'])).toString(
        'base64url',
      );
      await assert.rejects(runtime.approvalPage({ cursor: foreign }), {
        code: 'JOB_FILTER_INVALID',
      });
    });
  });
}
