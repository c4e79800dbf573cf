// HTTP approvals (docs/api.md, "Approvals"; docs/guide/http.md, "HTTP routes"): plans that stop
// answer 202, GET /api/approvals lists, POST /api/jobs/:id/steps/:stepId/approval decides as the
// request's caller, with 200 / 400 / 403 / 404 / 409 / 410.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { createHttpServer } from '../../src/http/server.js';
import {
  OperatorRuntime,
  type StepApprovalRequest,
  type OperatorRuntimeOptions,
} from '../../src/index.js';
import { register } from '../support/runtime-fixtures.js';

const closers: (() => Promise<void>)[] = [];
after(async () => {
  for (const close of closers) await close();
});

async function start(options: OperatorRuntimeOptions) {
  const runtime = new OperatorRuntime(options);
  let wrote = 0;
  const [write] = register(runtime, {
    risk: 'write',
    execute: () => {
      wrote += 1;
      return { ok: true };
    },
  }) as [string];
  // The caller is named by a test header: the server's own modes are tested elsewhere.
  const app = createHttpServer(runtime, {
    resolveCaller: (request) => ({ id: String(request.headers['x-test-caller'] ?? 'anonymous') }),
  });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  closers.push(async () => (await app.close(), await runtime.close()));
  return { url, write, wrote: () => wrote };
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

describe('HTTP approvals', () => {
  it('202 for a plan that stops, then list, refusals and approval', async () => {
    const server = await start({
      approvals: { approver: { canApprove: (approver) => approver.id !== 'mallory' } },
    });
    const plan = {
      version: '1.0',
      steps: [{ id: 'w', capability: server.write, input: { a: 1 } }],
    };
    const submitted = await call(server.url, 'POST', '/api/plans', 'alice', plan);
    assert.equal(submitted.status, 202);
    assert.equal(submitted.body.status, 'awaiting_approval');
    const jobId = submitted.body.id as string;
    const listed = await call(server.url, 'GET', '/api/approvals', 'bob');
    assert.equal(listed.status, 200);
    const [request] = listed.body as unknown as StepApprovalRequest[];
    assert.equal(request?.jobId, jobId);
    const path = `/api/jobs/${jobId}/steps/w/approval`;
    const inputDigest = request?.inputDigest;
    const decide = (as: string, body: unknown) => call(server.url, 'POST', path, as, body);
    assert.equal(
      (await decide('bob', { decision: 'approve', inputDigest: 'sha256:0' })).status,
      409,
    );
    assert.equal((await decide('alice', { decision: 'approve', inputDigest })).status, 403);
    assert.equal((await decide('mallory', { decision: 'approve', inputDigest })).status, 403);
    assert.equal((await decide('bob', { decision: 'maybe', inputDigest })).status, 400);
    assert.equal((await decide('bob', [])).status, 400);
    assert.equal(
      (
        await call(server.url, 'POST', `/api/jobs/nope/steps/w/approval`, 'bob', {
          decision: 'approve',
          inputDigest,
        })
      ).status,
      404,
    );
    // The body cannot name the approver.
    assert.equal(
      (await decide('alice', { decision: 'approve', inputDigest, approver: { id: 'bob' } })).status,
      403,
    );
    assert.equal(server.wrote(), 0);
    const approved = await decide('bob', { decision: 'approve', inputDigest, comment: 'ok' });
    assert.equal(approved.status, 200);
    assert.equal(approved.body.status, 'completed');
    assert.equal(server.wrote(), 1);
    assert.equal((await decide('bob', { decision: 'approve', inputDigest })).status, 409);
  });

  it('410 for an expired request; 202 from the execute route', async () => {
    const server = await start({ approvals: { approver: { canApprove: () => true }, ttlMs: 1 } });
    const executed = await call(
      server.url,
      'POST',
      `/api/capabilities/${server.write}/execute`,
      'alice',
      {
        input: {},
      },
    );
    assert.equal(executed.status, 202);
    const jobId = executed.body.jobId as string;
    const job = executed.body.job as { steps: { decision: { inputDigest: string } }[] };
    await new Promise((resolve) => setTimeout(resolve, 5));
    const expired = await call(
      server.url,
      'POST',
      `/api/jobs/${jobId}/steps/execute/approval`,
      'bob',
      {
        decision: 'approve',
        inputDigest: job.steps[0]?.decision.inputDigest,
      },
    );
    assert.equal(expired.status, 410);
    assert.equal(server.wrote(), 0);
  });
});

describe('HTTP approve with edits (docs/api.md, "Approve with edits")', () => {
  it('runs the approved input; refuses a bad one with 400, leaving the request pending; the body limits hold', async () => {
    const runtime = new OperatorRuntime({ approvals: { approver: { canApprove: () => true } } });
    const received: unknown[] = [];
    const [pay] = register(runtime, {
      risk: 'write',
      inputSchema: { amount: { type: 'number', required: true, description: 'cents' } },
      execute: ({ input }: { input: unknown }) => {
        received.push(input);
        return { ok: true };
      },
    }) as [string];
    const app = createHttpServer(runtime, {
      resolveCaller: (request) => ({ id: String(request.headers['x-test-caller'] ?? 'anonymous') }),
    });
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    closers.push(async () => (await app.close(), await runtime.close()));
    const plan = { version: '1.0', steps: [{ id: 'pay', capability: pay, input: { amount: 5 } }] };
    const submitted = await call(url, 'POST', '/api/plans', 'alice', plan);
    assert.equal(submitted.status, 202);
    const jobId = submitted.body.id as string;
    const [request] = (await call(url, 'GET', '/api/approvals', 'bob'))
      .body as unknown as StepApprovalRequest[];
    const inputDigest = request?.inputDigest;
    const path = `/api/jobs/${jobId}/steps/pay/approval`;
    const decide = (body: unknown) => call(url, 'POST', path, 'bob', body);
    const refused = await decide({ decision: 'approve', inputDigest, input: { amount: 'ten' } });
    assert.equal(refused.status, 400);
    assert.match(String(refused.body.error), /input\.amount must be a finite number/);
    let deep: unknown = 1;
    for (let level = 0; level < 200; level++) deep = { a: deep };
    const tooDeep = await decide({ decision: 'approve', inputDigest, input: deep });
    assert.equal(tooDeep.status, 400);
    assert.match(String(tooDeep.body.error), /VALUE_TOO_DEEP/);
    let deeper: unknown = 1;
    for (let level = 0; level < 1001; level++) deeper = [deeper];
    const body = await decide({ decision: 'approve', inputDigest, input: deeper });
    assert.equal(body.status, 400);
    assert.match(String(body.body.error), /nested deeper than 1000 levels/);
    const large = await decide({ decision: 'approve', inputDigest, input: 'x'.repeat(1_100_000) });
    assert.equal(large.status, 413);
    const rejecting = await decide({ decision: 'reject', inputDigest, input: { amount: 1 } });
    assert.equal(rejecting.status, 400);
    assert.deepEqual(received, []);
    assert.equal(
      (await call(url, 'GET', `/api/jobs/${jobId}`, 'alice')).body.status,
      'awaiting_approval',
    );
    const approved = await decide({ decision: 'approve', inputDigest, input: { amount: 50 } });
    assert.equal(approved.status, 200);
    assert.equal(approved.body.status, 'completed');
    assert.deepEqual(received, [{ amount: 50 }]);
    const steps = approved.body.steps as { approvedInput?: unknown; proposedInput?: unknown }[];
    assert.deepEqual(steps[0]?.approvedInput, { amount: 50 });
    assert.deepEqual(steps[0]?.proposedInput, { amount: 5 });
    const events = approved.body.events as { type: string; data?: Record<string, unknown> }[];
    assert.equal(events.find((event) => event.type === 'approval.granted')?.data?.edited, true);
  });
});

describe('approval refusals as HTTP statuses (docs/api.md, "runtime.decideApproval")', () => {
  it('answers APPROVAL_CANNOT_RUN with 409: the request stays pending, another process may decide', async () => {
    const { approvalRefusalStatus } = await import('../../src/http/status-codes.js');
    const { ErrorCode } = await import('../../src/errors/error-codes.js');
    assert.equal(approvalRefusalStatus(ErrorCode.APPROVAL_CANNOT_RUN), 409);
    assert.equal(approvalRefusalStatus(ErrorCode.APPROVAL_NOT_PENDING), 409);
    assert.equal(approvalRefusalStatus(ErrorCode.APPROVAL_EXPIRED), 410);
    assert.equal(approvalRefusalStatus(ErrorCode.APPROVAL_INPUT_INVALID), 400);
  });
});
