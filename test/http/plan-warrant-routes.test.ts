// Plan warrants over HTTP (docs/api.md, "Plan warrants"; docs/guide/http.md, "HTTP routes"):
// `POST /api/plans` with `"approval": "plan"` answers 202 with one plan request, 403 with
// PLAN_DENIED when a step is previewed deny, 400 without approvals or for another value;
// `GET /api/approvals` lists the plan request; `POST /api/jobs/:id/plan-approval` decides it as
// the request's caller.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { createHttpServer } from '../../src/http/server.js';
import {
  OperatorRuntime,
  type OperatorRuntimeOptions,
  type PlanApprovalRequest,
} from '../../src/index.js';
import { register } from '../support/runtime-fixtures.js';

const closers: (() => Promise<void>)[] = [];
after(async () => {
  for (const close of closers) await close();
});

async function start(options: OperatorRuntimeOptions) {
  const runtime = new OperatorRuntime({
    authorizer: {
      authorize: ({ capability, input, approval }) => {
        if (capability.risk === 'read') return { decision: 'allow' };
        if ((input as { to?: unknown }).to === 'mallory')
          return { decision: 'deny', reason: 'never mallory' };
        return approval === undefined ? { decision: 'require_approval' } : { decision: 'allow' };
      },
    },
    ...options,
  });
  const paid: unknown[] = [];
  const [pay] = register(runtime, {
    risk: 'write',
    execute: ({ input }: { input: unknown }) => {
      paid.push(input);
      return { ok: true };
    },
  }) as [string];
  const app = createHttpServer(runtime, {
    resolveCaller: (request) => ({ id: String(request.headers['x-test-caller'] ?? 'anonymous') }),
  });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  closers.push(async () => (await app.close(), await runtime.close()));
  return { url, pay, paid };
}

async function call(url: string, method: string, path: string, as: string, body?: unknown) {
  const response = await fetch(url + path, {
    method,
    headers: {
      'x-test-caller': as,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(20_000),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const approvals = { approver: { canApprove: () => true } };

describe('HTTP plan warrants', () => {
  it('202 with one plan request, listed, then decided by POST /api/jobs/:id/plan-approval', async () => {
    const server = await start({ approvals });
    const plan = {
      version: '1.0',
      approval: 'plan',
      steps: [
        { id: 'a', capability: server.pay, input: { to: 'ada' } },
        { id: 'b', capability: server.pay, input: { to: 'bob' } },
      ],
    };
    const submitted = await call(server.url, 'POST', '/api/plans', 'alice', plan);
    assert.equal(submitted.status, 202);
    assert.equal(submitted.body.status, 'awaiting_approval');
    assert.deepEqual(server.paid, []);
    const jobId = submitted.body.id as string;
    const listed = await call(server.url, 'GET', '/api/approvals', 'bob');
    const [request] = listed.body as unknown as PlanApprovalRequest[];
    assert.equal(request?.kind, 'plan');
    assert.equal(request?.jobId, jobId);
    assert.deepEqual(
      request?.steps.map((step) => [step.id, step.outcome]),
      [
        ['a', 'require_approval'],
        ['b', 'require_approval'],
      ],
    );
    const path = `/api/jobs/${jobId}/plan-approval`;
    const planDigest = request?.planDigest;
    const decide = (as: string, body: unknown) => call(server.url, 'POST', path, as, body);
    assert.equal((await decide('bob', [])).status, 400);
    assert.equal(
      (await decide('bob', { decision: 'approve', planDigest: 'sha256:x' })).status,
      409,
    );
    assert.equal((await decide('alice', { decision: 'approve', planDigest })).status, 403);
    assert.equal(
      (
        await call(server.url, 'POST', '/api/jobs/nope/plan-approval', 'bob', {
          decision: 'approve',
          planDigest,
        })
      ).status,
      404,
    );
    const approved = await decide('bob', { decision: 'approve', planDigest, comment: 'both fine' });
    assert.equal(approved.status, 200);
    assert.equal(approved.body.status, 'completed');
    assert.deepEqual(server.paid, [{ to: 'ada' }, { to: 'bob' }]);
    assert.equal((await decide('carol', { decision: 'approve', planDigest })).status, 409);
  });

  it('403 with PLAN_DENIED when a step is previewed deny: nothing runs', async () => {
    const server = await start({ approvals });
    const denied = await call(server.url, 'POST', '/api/plans', 'alice', {
      version: '1.0',
      approval: 'plan',
      steps: [
        { id: 'a', capability: server.pay, input: { to: 'ada' } },
        { id: 'b', capability: server.pay, input: { to: 'mallory' } },
      ],
    });
    assert.equal(denied.status, 403);
    assert.equal(denied.body.code, 'PLAN_DENIED');
    assert.match(
      String(denied.body.error),
      /^PLAN_DENIED: step "b" \(.+\) is denied: never mallory$/,
    );
    assert.deepEqual(server.paid, []);
  });

  it('400 for approval "plan" without approvals, or another value; nothing recorded', async () => {
    const plain = await start({});
    const plan = (approval: unknown) => ({
      version: '1.0',
      approval,
      steps: [{ id: 'a', capability: plain.pay, input: { to: 'ada' } }],
    });
    const refused = await call(plain.url, 'POST', '/api/plans', 'alice', plan('plan'));
    assert.equal(refused.status, 400);
    assert.equal(refused.body.code, 'EXECUTE_OPTIONS_INVALID');
    const other = await call(plain.url, 'POST', '/api/plans', 'alice', plan('all'));
    assert.equal(other.status, 400);
    assert.equal(other.body.error, "approval must be 'steps' or 'plan'");
    const queued = await fetch(`${plain.url}/api/plans`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        prefer: 'respond-async',
        'x-test-caller': 'a',
      },
      body: JSON.stringify(plan('plan')),
      signal: AbortSignal.timeout(20_000),
    });
    assert.equal(queued.status, 400);
    assert.deepEqual(plain.paid, []);
  });
});
