// The read policy in the library (docs/api.md, "Reading and tenants"): getJob/listJobs without a
// caller are unfiltered; with one they answer only what it may read, pages stay full, tenants
// never cross, a custom policy fails closed, and decisions never cross tenants.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { OperatorRuntime, type ExecutionCaller } from '../../src/index.js';
import { MemoryJobStore } from '../../src/stores/memory/memory-store.js';
import { runtimeOnStore } from '../../src/runtime/operator-runtime.js';
import { AUDIT_SCOPE } from '../../src/runtime/read-policy.js';
import { countingStore } from '../support/counting-store.js';
import { register } from '../support/runtime-fixtures.js';
import { stepRequests } from '../support/step-requests.js';

const plan = (capability: string) => ({
  version: '1.0' as const,
  steps: [{ id: 's', capability, input: {} }],
});

describe('readPolicy', () => {
  it('listJobs({ caller }) keeps its pages full of what the caller may read', async () => {
    const runtime = new OperatorRuntime();
    try {
      const [read] = register(runtime, { execute: () => 1 }) as [string];
      const mine: string[] = [];
      for (let index = 0; index < 30; index++) {
        const owner = index % 5 === 0 ? 'alice' : 'bob';
        const job = await runtime.executePlan(plan(read), { caller: { id: owner } });
        if (owner === 'alice') mine.unshift(job.id);
      }
      assert.equal((await runtime.listJobs()).length, 30, 'no caller: unfiltered');
      const alice = { id: 'alice' };
      assert.deepEqual(
        (await runtime.listJobs({ caller: alice, limit: 4 })).map((job) => job.id),
        mine.slice(0, 4),
      );
      assert.deepEqual(
        (await runtime.listJobs({ caller: alice })).map((job) => job.id),
        mine,
      );
      assert.equal((await runtime.listJobs({ caller: { id: 'carol' }, limit: 10 })).length, 0);
      const auditor = { id: 'carol', scopes: [AUDIT_SCOPE] };
      assert.equal((await runtime.listJobs({ caller: auditor, limit: 25 })).length, 25);
      const [other] = await runtime.listJobs({ caller: { id: 'bob' }, limit: 1 });
      assert.equal(await runtime.getJob(other?.id as string, { caller: alice }), undefined);
      assert.equal((await runtime.getJob(other?.id as string))?.id, other?.id);
      await assert.rejects(runtime.listJobs({ caller: { id: '' } }), {
        code: 'JOB_FILTER_INVALID',
      });
      // A tenant that is not a string would read as no tenant: refused, never widened.
      await assert.rejects(runtime.listJobs({ caller: { id: 'alice', tenant: 1 } as never }), {
        code: 'JOB_FILTER_INVALID',
        message: /caller\.tenant must be a string/,
      });
      await assert.rejects(runtime.listApprovals({ caller: { id: 'x', tenant: false } as never }), {
        code: 'JOB_FILTER_INVALID',
      });
    } finally {
      await runtime.close();
    }
  });

  it('tenants confine reads: a caller without a tenant sees only jobs without one', async () => {
    const runtime = new OperatorRuntime();
    try {
      const [read] = register(runtime, { execute: () => 1 }) as [string];
      const a = await runtime.executePlan(plan(read), { caller: { id: 'u', tenant: 'a' } });
      const none = await runtime.executePlan(plan(read), { caller: { id: 'u' } });
      assert.equal(a.caller?.tenant, 'a');
      const ids = async (caller: ExecutionCaller) =>
        (await runtime.listJobs({ caller })).map((job) => job.id);
      assert.deepEqual(await ids({ id: 'u', tenant: 'a' }), [a.id]);
      assert.deepEqual(await ids({ id: 'u' }), [none.id]);
      assert.deepEqual(await ids({ id: 'u', tenant: 'b' }), []);
      assert.deepEqual(await ids({ id: 'x', tenant: 'b', scopes: [AUDIT_SCOPE] }), []);
      assert.deepEqual(await ids({ id: 'x', tenant: 'a', scopes: [AUDIT_SCOPE] }), [a.id]);
    } finally {
      await runtime.close();
    }
  });

  it('a custom readPolicy decides besides the submitter, fails closed, never crosses tenants', async () => {
    const asked: string[] = [];
    const runtime = new OperatorRuntime({
      readPolicy: (caller) => {
        asked.push(caller.id as string);
        if (caller.id === 'thrower') throw new Error('no');
        if (caller.id === 'truthy') return 1 as unknown as boolean;
        return caller.id === 'ops';
      },
    });
    try {
      const [read] = register(runtime, { execute: () => 1 }) as [string];
      const job = await runtime.executePlan(plan(read), { caller: { id: 'u', tenant: 't' } });
      const may = async (caller: ExecutionCaller) =>
        (await runtime.getJob(job.id, { caller })) !== undefined;
      assert.equal(await may({ id: 'u', tenant: 't' }), true);
      assert.equal(await may({ id: 'ops', tenant: 't' }), true);
      assert.equal(await may({ id: 'ops', tenant: 'other' }), false);
      assert.equal(await may({ id: 'thrower', tenant: 't' }), false);
      assert.equal(await may({ id: 'truthy', tenant: 't' }), false);
      assert.equal(await may({ id: 'auditor', tenant: 't', scopes: [AUDIT_SCOPE] }), false);
      assert.ok(!asked.includes('u'), 'the submitter is not asked about');
    } finally {
      await runtime.close();
    }
  });

  it('approvals: an approver of another tenant neither lists nor decides (APPROVAL_FORBIDDEN)', async () => {
    const runtime = new OperatorRuntime({ approvals: { approver: { canApprove: () => true } } });
    try {
      const [write] = register(runtime, { risk: 'write', execute: () => 1 }) as [string];
      const job = await runtime.executePlan(plan(write), { caller: { id: 'u', tenant: 'a' } });
      assert.equal(job.status, 'awaiting_approval');
      assert.equal(stepRequests(await runtime.listApprovals()).length, 1, 'no caller: unfiltered');
      assert.deepEqual(
        stepRequests(await runtime.listApprovals({ caller: { id: 'v', tenant: 'b' } })),
        [],
      );
      const [request] = stepRequests(
        await runtime.listApprovals({ caller: { id: 'v', tenant: 'a' } }),
      );
      assert.equal(request?.jobId, job.id);
      const decide = (approver: ExecutionCaller) =>
        runtime.decideApproval({
          jobId: job.id,
          stepId: 's',
          inputDigest: request?.inputDigest as string,
          approver,
          decision: 'approve',
        });
      await assert.rejects(decide({ id: 'v', tenant: 'b' }), { code: 'APPROVAL_FORBIDDEN' });
      await assert.rejects(decide({ id: 'v' }), { code: 'APPROVAL_FORBIDDEN' });
      assert.equal((await decide({ id: 'v', tenant: 'a' })).status, 'completed');
      assert.deepEqual(await runtime.approvalPage({ limit: 10 }), { requests: [] });
      assert.equal(await runtime.countApprovals(), 0);
    } finally {
      await runtime.close();
    }
  });

  it('an approver keeps reading the jobs they decided (granted or rejected), within the tenant only', async () => {
    const runtime = new OperatorRuntime({
      approvals: { approver: { canApprove: () => true } },
      readPolicy: () => false,
    });
    try {
      const [write] = register(runtime, { risk: 'write', execute: () => 1 }) as [string];
      const granted = await runtime.executePlan(plan(write), { caller: { id: 'u', tenant: 'a' } });
      const rejected = await runtime.executePlan(plan(write), { caller: { id: 'u', tenant: 'a' } });
      const decide = async (jobId: string, decision: 'approve' | 'reject') => {
        const [request] = stepRequests(await runtime.listApprovals({ jobId }));
        return runtime.decideApproval({
          jobId,
          stepId: 's',
          inputDigest: request?.inputDigest as string,
          approver: { id: 'v', tenant: 'a' },
          decision,
        });
      };
      assert.equal((await decide(granted.id, 'approve')).status, 'completed');
      assert.equal((await decide(rejected.id, 'reject')).status, 'failed');
      for (const job of [granted, rejected]) {
        const read = (caller: ExecutionCaller) => runtime.getJob(job.id, { caller });
        assert.equal((await read({ id: 'v', tenant: 'a' }))?.id, job.id, 'the approver reads it');
        assert.equal(await read({ id: 'v', tenant: 'b' }), undefined, 'never in another tenant');
        assert.equal(await read({ id: 'v' }), undefined, 'nor without the tenant');
        assert.equal(await read({ id: 'w', tenant: 'a' }), undefined, 'nor another approver');
      }
      const listed = await runtime.listJobs({ caller: { id: 'v', tenant: 'a' } });
      assert.deepEqual(listed.map((job) => job.id).sort(), [granted.id, rejected.id].sort());
      assert.deepEqual(await runtime.listJobs({ caller: { id: 'v', tenant: 'b' } }), []);
    } finally {
      await runtime.close();
    }
  });

  it('approvals: 10,000 pending requests cost one page of reads per page; countApprovals counts them', async () => {
    const counted = countingStore(new MemoryJobStore(20_000));
    const runtime = runtimeOnStore(counted.store, {
      approvals: { approver: { canApprove: (approver) => approver.id === 'bob' } },
    });
    try {
      const [write] = register(runtime, { risk: 'write', execute: () => 1 }) as [string];
      const ids: string[] = [];
      for (let index = 0; index < 10_000; index++)
        ids.push((await runtime.executePlan(plan(write), { caller: { id: 'alice' } })).id);
      counted.reset();
      const first = await runtime.approvalPage({ caller: { id: 'bob' }, limit: 50 });
      assert.deepEqual(
        first.requests.map((request) => request.jobId),
        ids.slice(0, 50),
      );
      assert.ok(counted.rows() <= 51, `the first page read ${counted.rows()} jobs`);
      counted.reset();
      const second = await runtime.approvalPage({
        caller: { id: 'bob' },
        limit: 50,
        cursor: first.nextCursor as string,
      });
      assert.deepEqual(
        second.requests.map((request) => request.jobId),
        ids.slice(50, 100),
      );
      assert.ok(counted.rows() <= 52, `the second page read ${counted.rows()} jobs`);
      // An auditor of another tenant, and a caller the approver policy refuses: nothing.
      const other = { id: 'bob', tenant: 't', scopes: [AUDIT_SCOPE] };
      assert.deepEqual(await runtime.approvalPage({ caller: other, limit: 50 }), { requests: [] });
      assert.equal(await runtime.countApprovals({ caller: { id: 'carol' } }), 0);
      assert.equal(await runtime.countApprovals({ caller: { id: 'bob' } }), 10_000);
    } finally {
      await runtime.close();
    }
  });
});
