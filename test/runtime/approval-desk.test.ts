// Approvals bound to the exact action (docs/api.md, "Approvals"): requests, every refusal, the
// second ask with context.approval, and resuming through the executor's one step path.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import {
  OperatorRuntime,
  type ApproverPolicy,
  type CapabilityAuthorizationContext,
  type ExecutionPlan,
  type Job,
  type OperatorRuntimeOptions,
} from '../../src/index.js';
import type { JobStore } from '../../src/jobs/job-store.js';
import { MemoryJobStore } from '../../src/stores/memory/memory-store.js';
import { runtimeOnStore } from '../../src/runtime/operator-runtime.js';
import { register } from '../support/runtime-fixtures.js';
import { stepRequests } from '../support/step-requests.js';

const anyone: ApproverPolicy = { canApprove: () => true };
const ALICE = { id: 'alice' };
const BOB = { id: 'bob' };

const directory = mkdtempSync(join(tmpdir(), 'warrant-approvals-'));
after(() => rmSync(directory, { recursive: true, force: true }));
let files = 0;
const sqliteFile = () => `sqlite:${join(directory, `jobs-${++files}.db`)}`;

interface Setup {
  readonly runtime: OperatorRuntime;
  readonly read: string;
  readonly write: string;
  readonly invoked: unknown[];
}

function setup(
  options: OperatorRuntimeOptions = { approvals: { approver: anyone } },
  store?: JobStore,
): Setup {
  const runtime =
    store === undefined ? new OperatorRuntime(options) : runtimeOnStore(store, options);
  const invoked: unknown[] = [];
  const [read, write] = register(
    runtime,
    { execute: () => ({ value: 41 }) },
    {
      risk: 'write',
      execute: ({ input }: { input: unknown }) => {
        invoked.push(input);
        return { wrote: input };
      },
    },
  ) as [string, string];
  return { runtime, read, write, invoked };
}

function plan(read: string, write: string): ExecutionPlan {
  return {
    version: '1.0',
    goal: 'approve a write',
    steps: [
      { id: 'look', capability: read, input: {} },
      { id: 'save', capability: write, input: { n: { $ref: 'steps.look.result.value' } } },
    ],
  };
}

async function waiting(s: Setup): Promise<Job> {
  const job = await s.runtime.executePlan(plan(s.read, s.write), { caller: ALICE });
  assert.equal(job.status, 'awaiting_approval');
  return job;
}

async function refusedWith(promise: Promise<unknown>, code: string): Promise<void> {
  await assert.rejects(promise, (error: Error & { code?: string }) => {
    assert.equal(error.code, code, error.message);
    return true;
  });
}

describe('approvals: the request', () => {
  it('stops a write for approval: nothing invoked, the request listed and in the events', async () => {
    const s = setup();
    const job = await waiting(s);
    assert.deepEqual(s.invoked, []);
    const step = job.steps[1];
    assert.equal(step?.status, 'awaiting_approval');
    assert.equal(step?.decision?.outcome, 'approval_required');
    assert.equal(step?.decision?.reason, 'Write capability requires explicit approval.');
    const requested = job.events.find((event) => event.type === 'approval.requested');
    assert.deepEqual(Object.keys(requested?.data ?? {}), [
      'stepId',
      'capability',
      'capabilityVersion',
      'risk',
      'inputDigest',
      'reason',
      'expiresAt',
    ]);
    assert.equal(requested?.data?.inputDigest, step?.decision?.inputDigest);
    const [request, ...others] = stepRequests(await s.runtime.listApprovals());
    assert.equal(others.length, 0);
    assert.equal(request?.jobId, job.id);
    assert.equal(request?.stepId, 'save');
    assert.equal(request?.risk, 'write');
    assert.deepEqual(request?.input, { n: 41 });
    assert.deepEqual(request?.caller, ALICE);
    assert.equal(request?.inputDigest, step?.decision?.inputDigest);
    const expires = Date.parse(request?.expiresAt ?? '') - Date.parse(request?.requestedAt ?? '');
    assert.equal(expires, 24 * 60 * 60 * 1000);
    assert.deepEqual(stepRequests(await s.runtime.listApprovals({ jobId: 'nope' })), []);
    assert.equal(stepRequests(await s.runtime.listApprovals({ jobId: job.id })).length, 1);
    await s.runtime.close();
  });

  it('expires exactly one TTL after it was requested, however the clock moves meanwhile', async (t) => {
    // Every clock read a millisecond later: the decision and its record never share a tick.
    let clock = Date.parse('2026-01-01T00:00:00.000Z');
    t.mock.method(Date, 'now', () => (clock += 1));
    const s = setup({ approvals: { approver: anyone, ttlMs: 5_000 } });
    const job = await waiting(s);
    const [request] = stepRequests(await s.runtime.listApprovals());
    assert.equal(
      Date.parse(request?.expiresAt ?? '') - Date.parse(request?.requestedAt ?? ''),
      5_000,
    );
    assert.equal(request?.requestedAt, job.steps[1]?.decision?.decidedAt);
    await s.runtime.close();
  });

  it('without approvals, require_approval is a malformed decision and the default denies', async () => {
    const s = setup({
      authorizer: { authorize: () => ({ decision: 'require_approval' }) as never },
    });
    const job = await s.runtime.executePlan(plan(s.read, s.write));
    assert.equal(job.status, 'failed');
    assert.equal(job.steps[0]?.error, 'Invalid authorization decision');
    assert.deepEqual(stepRequests(await s.runtime.listApprovals()), []);
    await refusedWith(
      s.runtime.decideApproval({
        jobId: job.id,
        stepId: 'look',
        inputDigest: 'x',
        approver: BOB,
        decision: 'approve',
      }),
      'APPROVAL_NOT_FOUND',
    );
    const plain = setup({});
    const denied = await plain.runtime.executePlan(plan(plain.read, plain.write));
    assert.equal(denied.steps[1]?.error, 'Write capability requires explicit approval.');
    await s.runtime.close();
    await plain.runtime.close();
  });

  it('refuses a malformed approvals option', () => {
    for (const approvals of [null, 1, {}, { approver: {} }, { approver: anyone, ttlMs: 0 }]) {
      assert.throws(
        () => new OperatorRuntime({ approvals } as never),
        (error: Error & { code?: string }) => error.code === 'RUNTIME_OPTIONS_INVALID',
      );
    }
  });
});

describe('approvals: deciding', () => {
  it('approve: granted, asked again with context.approval, invoked once, job completed', async () => {
    const seen: CapabilityAuthorizationContext[] = [];
    const s = setup({
      approvals: { approver: anyone },
      authorizer: {
        authorize(context) {
          seen.push(context);
          if (context.capability.risk === 'read' || context.approval !== undefined)
            return { decision: 'allow' };
          return { decision: 'require_approval', reason: 'a human must look' };
        },
      },
    });
    const job = await waiting(s);
    const [request] = stepRequests(await s.runtime.listApprovals());
    assert.equal(request?.reason, 'a human must look');
    const done = await s.runtime.decideApproval({
      jobId: job.id,
      stepId: 'save',
      inputDigest: request?.inputDigest ?? '',
      approver: BOB,
      decision: 'approve',
    });
    assert.equal(done.status, 'completed');
    assert.deepEqual(s.invoked, [{ n: 41 }]);
    const again = seen[seen.length - 1];
    assert.deepEqual(again?.approval?.approver, BOB);
    assert.equal(again?.approval?.inputDigest, request?.inputDigest);
    assert.deepEqual(again?.caller, ALICE);
    assert.deepEqual(
      done.events.map((event) => event.type),
      [
        'job.created',
        'execution.started',
        'capability.started',
        'capability.completed',
        'approval.requested',
        'approval.granted',
        'capability.started',
        'capability.completed',
        'job.completed',
      ],
    );
    assert.deepEqual(done.events.find((event) => event.type === 'approval.granted')?.data, {
      stepId: 'save',
      approver: 'bob',
    });
    const stored = await s.runtime.getJob(job.id);
    assert.equal(stored?.status, 'completed');
    assert.deepEqual(stepRequests(await s.runtime.listApprovals()), []);
    await refusedWith(
      s.runtime.decideApproval({
        jobId: job.id,
        stepId: 'save',
        inputDigest: request?.inputDigest ?? '',
        approver: BOB,
        decision: 'approve',
      }),
      'APPROVAL_NOT_PENDING',
    );
    assert.equal(s.invoked.length, 1);
    await s.runtime.close();
  });

  it('reject: the step fails with the comment, later steps skipped, job failed', async () => {
    const s = setup();
    const job = await waiting(s);
    const digest = job.steps[1]?.decision?.inputDigest ?? '';
    const done = await s.runtime.decideApproval({
      jobId: job.id,
      stepId: 'save',
      inputDigest: digest,
      approver: BOB,
      decision: 'reject',
      comment: 'not today',
    });
    assert.equal(done.status, 'failed');
    assert.equal(done.steps[1]?.status, 'failed');
    assert.equal(done.steps[1]?.error, 'Approval rejected: not today');
    assert.deepEqual(done.events.find((event) => event.type === 'approval.rejected')?.data, {
      stepId: 'save',
      approver: 'bob',
      comment: 'not today',
    });
    assert.deepEqual(s.invoked, []);
    await s.runtime.close();
  });

  it('refuses with every code and changes nothing', async () => {
    let policy: ApproverPolicy['canApprove'] = () => true;
    const s = setup({ approvals: { approver: { canApprove: (a, r) => policy(a, r) } } });
    const job = await waiting(s);
    const digest = job.steps[1]?.decision?.inputDigest ?? '';
    const decide = (over: Record<string, unknown>) =>
      s.runtime.decideApproval({
        jobId: job.id,
        stepId: 'save',
        inputDigest: digest,
        approver: BOB,
        decision: 'approve',
        ...over,
      });
    await refusedWith(decide({ jobId: 'missing' }), 'APPROVAL_NOT_FOUND');
    await refusedWith(decide({ stepId: 'missing' }), 'APPROVAL_NOT_FOUND');
    await refusedWith(decide({ stepId: 'look' }), 'APPROVAL_NOT_PENDING');
    await refusedWith(decide({ inputDigest: 'sha256:00' }), 'APPROVAL_DIGEST_MISMATCH');
    await refusedWith(decide({ approver: ALICE }), 'APPROVAL_SELF_APPROVAL');
    await refusedWith(decide({ approver: { scopes: [] } }), 'APPROVAL_DECISION_INVALID');
    await refusedWith(decide({ decision: 'maybe' }), 'APPROVAL_DECISION_INVALID');
    const answers: ApproverPolicy['canApprove'][] = [
      () => false,
      () => 'true' as never,
      () => 1 as never,
      () => ({ then: 1 }) as never,
      () => Promise.resolve(false),
      () => Promise.resolve('yes' as never),
      () => Promise.reject(new Error('no')),
      () => {
        throw new Error('boom');
      },
    ];
    for (const answer of answers) {
      policy = answer;
      await refusedWith(decide({}), 'APPROVAL_FORBIDDEN');
    }
    assert.deepEqual(s.invoked, []);
    const [request] = stepRequests(await s.runtime.listApprovals());
    assert.equal(request?.inputDigest, digest);
    assert.equal((await s.runtime.getJob(job.id))?.status, 'awaiting_approval');
    policy = () => Promise.resolve(true);
    assert.equal((await decide({})).status, 'completed');
    await s.runtime.close();
  });

  it('an approver policy that hangs is a refusal after 5 s', { timeout: 15_000 }, async () => {
    const s = setup({ approvals: { approver: { canApprove: () => new Promise(() => {}) } } });
    const job = await waiting(s);
    await refusedWith(
      s.runtime.decideApproval({
        jobId: job.id,
        stepId: 'save',
        inputDigest: job.steps[1]?.decision?.inputDigest ?? '',
        approver: BOB,
        decision: 'approve',
      }),
      'APPROVAL_FORBIDDEN',
    );
    await s.runtime.close();
  });

  it('an expired request fails its step and job, found on list and on decide', async () => {
    for (const via of ['list', 'decide'] as const) {
      const s = setup({ approvals: { approver: anyone, ttlMs: 1 } });
      const job = await waiting(s);
      await new Promise((resolve) => setTimeout(resolve, 5));
      if (via === 'list') {
        assert.deepEqual(stepRequests(await s.runtime.listApprovals()), []);
      } else {
        await refusedWith(
          s.runtime.decideApproval({
            jobId: job.id,
            stepId: 'save',
            inputDigest: job.steps[1]?.decision?.inputDigest ?? '',
            approver: BOB,
            decision: 'approve',
          }),
          'APPROVAL_EXPIRED',
        );
      }
      const stored = await s.runtime.getJob(job.id);
      assert.equal(stored?.status, 'failed');
      assert.equal(stored?.steps[1]?.error, 'Approval expired');
      assert.deepEqual(s.invoked, []);
      await s.runtime.close();
    }
  });

  it('a second require_approval after the grant is a denial', async () => {
    const s = setup({
      approvals: { approver: anyone },
      authorizer: {
        authorize: ({ capability }) =>
          capability.risk === 'read' ? { decision: 'allow' } : { decision: 'require_approval' },
      },
    });
    const job = await waiting(s);
    const done = await s.runtime.decideApproval({
      jobId: job.id,
      stepId: 'save',
      inputDigest: job.steps[1]?.decision?.inputDigest ?? '',
      approver: BOB,
      decision: 'approve',
    });
    assert.equal(done.status, 'failed');
    assert.equal(done.steps[1]?.decision?.outcome, 'deny');
    assert.deepEqual(s.invoked, []);
    await s.runtime.close();
  });

  it('concurrent decisions in one process: exactly one wins', async () => {
    const s = setup();
    const job = await waiting(s);
    const digest = job.steps[1]?.decision?.inputDigest ?? '';
    const outcomes = await Promise.allSettled(
      ['bob', 'carol', 'dave', 'erin'].map((id, index) =>
        s.runtime.decideApproval({
          jobId: job.id,
          stepId: 'save',
          inputDigest: digest,
          approver: { id },
          decision: index % 2 === 0 ? 'approve' : 'reject',
        }),
      ),
    );
    const won = outcomes.filter((outcome) => outcome.status === 'fulfilled');
    assert.equal(won.length, 1);
    for (const outcome of outcomes) {
      if (outcome.status === 'rejected')
        assert.equal((outcome.reason as { code?: string }).code, 'APPROVAL_NOT_PENDING');
    }
    assert.ok(s.invoked.length <= 1);
    await s.runtime.close();
  });
});

describe('approvals: durable', () => {
  it('a waiting job survives a restart on SQLite and resumes in the new runtime', async () => {
    const store = sqliteFile();
    const first = setup({ store, approvals: { approver: anyone } });
    const job = await waiting(first);
    await first.runtime.close();
    const second = new OperatorRuntime({ store, approvals: { approver: anyone } });
    const [request] = stepRequests(await second.listApprovals());
    assert.equal(request?.jobId, job.id);
    assert.deepEqual(request?.input, { n: 41 });
    const done = await second.decideApproval({
      jobId: job.id,
      stepId: 'save',
      inputDigest: request?.inputDigest ?? '',
      approver: BOB,
      decision: 'approve',
    });
    assert.equal(done.status, 'completed');
    assert.deepEqual(first.invoked, [{ n: 41 }]);
    const verified = await second.verifyJob(job.id);
    assert.deepEqual(verified, { ok: true, events: done.events.length });
    await second.close();
  });

  it('a capability whose version changed is APPROVAL_CANNOT_RUN: nothing consumed, the request stays pending', async () => {
    // getJob hands out frozen snapshots: tamper with the record the memory store holds.
    const memory = new MemoryJobStore(10_000);
    const s = setup(undefined, memory);
    const job = await waiting(s);
    // Tamper with the request as stored: the runtime must check the registered version again.
    const stored = memory.held(job.id) as Job;
    const step = stored.steps[1] as { decision: { capabilityVersion: string } };
    step.decision = { ...step.decision, capabilityVersion: '0.9.0' };
    await assert.rejects(
      s.runtime.decideApproval({
        jobId: job.id,
        stepId: 'save',
        inputDigest: job.steps[1]?.decision?.inputDigest ?? '',
        approver: BOB,
        decision: 'approve',
      }),
      (error: Error & { code?: string }) =>
        error.code === 'APPROVAL_CANNOT_RUN' && /@0\.9\.0/.test(error.message),
    );
    const after = await s.runtime.getJob(job.id);
    assert.equal(after?.status, 'awaiting_approval');
    assert.ok(!after?.events.some((event) => event.type === 'approval.granted'));
    assert.equal(stepRequests(await s.runtime.listApprovals()).length, 1);
    assert.deepEqual(s.invoked, []);
    await s.runtime.close();
  });

  it('a recorded result that changed fails the approved step: Input changed since approval', async () => {
    const memory = new MemoryJobStore(10_000);
    const s = setup(undefined, memory);
    const job = await waiting(s);
    const stored = memory.held(job.id) as Job;
    (stored.steps[0] as { result: unknown }).result = { value: 666 };
    const done = await s.runtime.decideApproval({
      jobId: job.id,
      stepId: 'save',
      inputDigest: job.steps[1]?.decision?.inputDigest ?? '',
      approver: BOB,
      decision: 'approve',
    });
    assert.equal(done.status, 'failed');
    assert.equal(done.steps[1]?.error, 'Input changed since approval was requested');
    assert.deepEqual(s.invoked, []);
    await s.runtime.close();
  });
});
