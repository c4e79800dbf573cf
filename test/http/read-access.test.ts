// Who may read what over HTTP (docs/api.md, "Reading and tenants"): every read route answers a
// caller only what the read policy allows (404 for the rest, never 403), tenants never cross,
// approval routes are 403 without an authentication mode, GET /api/approvals is paged and
// counted, and a resolver's caller the runtime would refuse is 401.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { createHttpServer } from '../../src/http/server.js';
import { createResolverAuthenticator } from '../../src/http/auth/index.js';
import {
  OperatorRuntime,
  type StepApprovalRequest,
  type ExecutionCaller,
  type Job,
} from '../../src/index.js';
import { register } from '../support/runtime-fixtures.js';

const closers: (() => Promise<unknown>)[] = [];
after(async () => {
  for (const close of closers) await close();
});

/** Callers named by a test header: `<id>` or `<id>@<tenant>`; `auditor` holds warrant:audit. */
function callerOf(name: string): ExecutionCaller {
  const [id = '', tenant] = name.split('@');
  const scopes = id.startsWith('auditor') ? ['warrant:audit'] : [];
  return tenant === undefined ? { id, scopes } : { id, scopes, tenant };
}

async function start(options: { auth?: boolean } = {}) {
  // Only `bob` (in any tenant) may decide requests.
  const runtime = new OperatorRuntime({
    approvals: { approver: { canApprove: (approver) => approver.id === 'bob' } },
  });
  const [read, write] = register(
    runtime,
    { execute: () => ({ secret: 'r' }) },
    { risk: 'write', execute: () => ({ ok: true }) },
  ) as [string, string];
  const app = createHttpServer(
    runtime,
    options.auth === false
      ? {}
      : { resolveCaller: (request) => callerOf(String(request.headers['x-test-caller'])) },
  );
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  closers.push(async () => (await app.close(), await runtime.close()));
  return { url, runtime, read, write };
}

async function call(url: string, method: string, path: string, as?: string, body?: unknown) {
  const response = await fetch(url + path, {
    method,
    headers: {
      ...(as === undefined ? {} : { 'x-test-caller': as }),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(20_000),
  });
  return {
    status: response.status,
    headers: response.headers,
    body: (await response.json()) as unknown,
  };
}

describe('HTTP reads follow the read policy', () => {
  it('an unprivileged caller reads nothing that is not its own, on every route', async () => {
    const server = await start();
    const plan = { version: '1.0', steps: [{ id: 'r', capability: server.read, input: {} }] };
    const alices = (await call(server.url, 'POST', '/api/plans', 'alice', plan)).body as Job;
    const waiting = (
      await call(server.url, 'POST', '/api/plans', 'alice', {
        version: '1.0',
        steps: [{ id: 'w', capability: server.write, input: { a: 1 } }],
      })
    ).body as Job;
    assert.equal(waiting.status, 'awaiting_approval');
    const interns = (await call(server.url, 'POST', '/api/plans', 'intern', plan)).body as Job;

    const listed = (await call(server.url, 'GET', '/api/jobs', 'intern')).body as Job[];
    assert.deepEqual(
      listed.map((job) => job.id),
      [interns.id],
    );
    for (const id of [alices.id, waiting.id]) {
      for (const path of [
        `/api/jobs/${id}`,
        `/api/jobs/${id}?waitMs=10`,
        `/api/jobs/${id}/verify`,
        `/api/jobs/${id}/evidence`,
      ]) {
        const answer = await call(server.url, 'GET', path, 'intern');
        assert.equal(answer.status, 404, path);
        assert.deepEqual(answer.body, { error: `Unknown job: ${id}` });
      }
      assert.equal(
        (await call(server.url, 'POST', `/api/jobs/${id}/cancel`, 'intern', {})).status,
        404,
      );
    }
    assert.deepEqual((await call(server.url, 'GET', '/api/approvals', 'intern')).body, []);
    assert.deepEqual(
      (await call(server.url, 'GET', `/api/approvals?jobId=${waiting.id}`, 'intern')).body,
      [],
    );
    assert.deepEqual((await call(server.url, 'GET', '/api/approvals/count', 'intern')).body, {
      count: 0,
    });

    // The submitter reads its own; the auditor reads all; bob, who may decide, reads the waiting
    // job and its request, not the other one.
    assert.equal(
      (await call(server.url, 'GET', `/api/jobs/${alices.id}/verify`, 'alice')).status,
      200,
    );
    const audited = (await call(server.url, 'GET', '/api/jobs', 'auditor')).body as Job[];
    assert.equal(audited.length, 3);
    assert.equal((await call(server.url, 'GET', `/api/jobs/${waiting.id}`, 'bob')).status, 200);
    assert.equal((await call(server.url, 'GET', `/api/jobs/${alices.id}`, 'bob')).status, 404);
    const requests = (await call(server.url, 'GET', '/api/approvals', 'bob'))
      .body as StepApprovalRequest[];
    assert.deepEqual(
      requests.map((request) => request.jobId),
      [waiting.id],
    );
    assert.deepEqual((await call(server.url, 'GET', '/api/approvals/count', 'bob')).body, {
      count: 1,
    });
  });

  it('a tenant-B approver neither sees nor decides a tenant-A request; tenants never mix', async () => {
    const server = await start();
    const waiting = (
      await call(server.url, 'POST', '/api/plans', 'alice@a', {
        version: '1.0',
        steps: [{ id: 'w', capability: server.write, input: { a: 1 } }],
      })
    ).body as Job;
    assert.equal(waiting.caller?.tenant, 'a', 'the tenant is recorded with the caller');
    for (const as of ['bob@b', 'bob', 'auditor@b', 'auditor', 'alice', 'alice@b']) {
      assert.deepEqual((await call(server.url, 'GET', '/api/approvals', as)).body, [], as);
      assert.deepEqual((await call(server.url, 'GET', '/api/jobs', as)).body, [], as);
      assert.equal((await call(server.url, 'GET', `/api/jobs/${waiting.id}`, as)).status, 404, as);
    }
    const [request] = (await call(server.url, 'GET', '/api/approvals', 'bob@a'))
      .body as StepApprovalRequest[];
    assert.equal(request?.jobId, waiting.id);
    const path = `/api/jobs/${waiting.id}/steps/w/approval`;
    const body = { decision: 'approve', inputDigest: request?.inputDigest };
    const refused = await call(server.url, 'POST', path, 'bob@b', body);
    assert.equal(refused.status, 403);
    assert.equal((await call(server.url, 'POST', path, 'bob', body)).status, 403);
    assert.equal((await server.runtime.getJob(waiting.id))?.status, 'awaiting_approval');
    const approved = await call(server.url, 'POST', path, 'bob@a', body);
    assert.equal(approved.status, 200);
    assert.equal((approved.body as Job).status, 'completed');
    assert.equal(
      (await call(server.url, 'GET', `/api/jobs/${waiting.id}`, 'auditor@a')).status,
      200,
    );
  });

  it('the approver still reads the job right after deciding it, in its tenant only', async () => {
    const server = await start();
    const submit = async (input: number) =>
      (
        await call(server.url, 'POST', '/api/plans', 'alice@a', {
          version: '1.0',
          steps: [{ id: 'w', capability: server.write, input: { a: input } }],
        })
      ).body as Job;
    const granted = await submit(1);
    const rejected = await submit(2);
    for (const [job, decision, status] of [
      [granted, 'approve', 'completed'],
      [rejected, 'reject', 'failed'],
    ] as const) {
      const [request] = (await call(server.url, 'GET', `/api/approvals?jobId=${job.id}`, 'bob@a'))
        .body as StepApprovalRequest[];
      const decided = await call(
        server.url,
        'POST',
        `/api/jobs/${job.id}/steps/w/approval`,
        'bob@a',
        {
          decision,
          inputDigest: request?.inputDigest,
        },
      );
      assert.equal((decided.body as Job).status, status);
      const read = await call(server.url, 'GET', `/api/jobs/${job.id}`, 'bob@a');
      assert.equal(read.status, 200, `${decision}: the approver reads the job it decided`);
      assert.equal((read.body as Job).status, status);
      assert.equal(
        (await call(server.url, 'GET', `/api/jobs/${job.id}/verify`, 'bob@a')).status,
        200,
      );
      for (const as of ['bob@b', 'bob', 'carol@a'])
        assert.equal((await call(server.url, 'GET', `/api/jobs/${job.id}`, as)).status, 404, as);
    }
    const listed = (await call(server.url, 'GET', '/api/jobs', 'bob@a')).body as Job[];
    assert.deepEqual(listed.map((job) => job.id).sort(), [granted.id, rejected.id].sort());
    assert.deepEqual((await call(server.url, 'GET', '/api/jobs', 'bob@b')).body, []);
  });

  it('without an authentication mode the approval routes answer 403 and `http` reads only its own jobs', async () => {
    const server = await start({ auth: false });
    const other = await server.runtime.executePlan(
      { version: '1.0', steps: [{ id: 'w', capability: server.write, input: {} }] },
      { caller: { id: 'cli:someone' } },
    );
    assert.equal(other.status, 'awaiting_approval');
    for (const [method, path, body] of [
      ['GET', '/api/approvals', undefined],
      ['GET', '/api/approvals/count', undefined],
      ['POST', `/api/jobs/${other.id}/steps/w/approval`, { decision: 'approve', inputDigest: 'x' }],
    ] as const) {
      const answer = await call(server.url, method, path, undefined, body);
      assert.equal(answer.status, 403, path);
    }
    assert.equal((await server.runtime.getJob(other.id))?.status, 'awaiting_approval');
    assert.deepEqual((await call(server.url, 'GET', '/api/jobs')).body, []);
    assert.equal((await call(server.url, 'GET', `/api/jobs/${other.id}`)).status, 404);
  });

  it('without a mode, the operator token makes a request the operator, who reads and approves; the rest stay `http`', async () => {
    const runtime = new OperatorRuntime({ approvals: { approver: { canApprove: () => true } } });
    const [write] = register(runtime, { risk: 'write', execute: () => ({ ok: true }) }) as [string];
    const app = createHttpServer(runtime, { operatorToken: 'op-7c1f' });
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    closers.push(async () => (await app.close(), await runtime.close()));
    const job = await runtime.executePlan(
      { version: '1.0', steps: [{ id: 'w', capability: write, input: {} }] },
      { caller: { id: 'cli:someone' } },
    );
    const as = async (
      authorization: string | undefined,
      method: string,
      path: string,
      body?: unknown,
    ) => {
      const response = await fetch(url + path, {
        method,
        headers: {
          ...(authorization === undefined ? {} : { authorization }),
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(20_000),
      });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    };
    const operator = 'Bearer op-7c1f';
    assert.deepEqual((await as(undefined, 'GET', '/api/caller')).body, {
      id: 'http',
      tenant: null,
      actor: null,
      scopes: 0,
      authenticated: false,
    });
    assert.deepEqual((await as(operator, 'GET', '/api/caller')).body, {
      id: 'operator',
      tenant: null,
      actor: null,
      scopes: 1,
      authenticated: true,
    });
    const refused = await as(undefined, 'GET', '/api/approvals');
    assert.equal(refused.status, 403);
    assert.match(String(refused.body.error), /operator token/);
    assert.equal((await as(undefined, 'GET', '/api/notifications')).status, 403);
    assert.equal((await as(operator, 'GET', '/api/notifications')).status, 200);
    for (const wrong of ['Bearer op-7c1', 'Basic b3A6N2MxZg=='])
      assert.equal((await as(wrong, 'GET', '/api/jobs')).status, 401, wrong);
    const [request] = (await as(operator, 'GET', '/api/approvals'))
      .body as unknown as StepApprovalRequest[];
    assert.equal(request?.jobId, job.id);
    const path = `/api/jobs/${job.id}/steps/w/approval`;
    const body = { decision: 'approve', inputDigest: request?.inputDigest };
    assert.equal((await as(undefined, 'POST', path, body)).status, 403, 'never as `http`');
    const approved = await as(operator, 'POST', path, body);
    assert.equal(approved.status, 200);
    assert.equal(approved.body.status, 'completed');
    const read = await as(operator, 'GET', `/api/jobs/${job.id}`);
    assert.equal(read.status, 200);
    const events = read.body.events as { type: string; data?: { approver?: string } }[];
    assert.equal(
      events.find((event) => event.type === 'approval.granted')?.data?.approver,
      'operator',
    );
    assert.equal((await as(undefined, 'GET', `/api/jobs/${job.id}`)).status, 404);
  });

  it('GET /api/caller answers who the server takes the sender for: id, tenant, a scope count, never more', async () => {
    const server = await start();
    const auditor = await call(server.url, 'GET', '/api/caller', 'auditor@acme');
    assert.equal(auditor.status, 200);
    assert.deepEqual(auditor.body, {
      id: 'auditor',
      tenant: 'acme',
      actor: null,
      scopes: 1,
      authenticated: true,
    });
    assert.deepEqual((await call(server.url, 'GET', '/api/caller', 'alice')).body, {
      id: 'alice',
      tenant: null,
      actor: null,
      scopes: 0,
      authenticated: true,
    });
    const open = await start({ auth: false });
    assert.deepEqual((await call(open.url, 'GET', '/api/caller')).body, {
      id: 'http',
      tenant: null,
      actor: null,
      scopes: 0,
      authenticated: false,
    });
  });

  it('GET /api/approvals is paged (50 by default, at most 1,000, a cursor) and counted', async () => {
    const server = await start();
    const ids: string[] = [];
    for (let index = 0; index < 60; index++) {
      const job = await server.runtime.executePlan(
        { version: '1.0', steps: [{ id: 'w', capability: server.write, input: { index } }] },
        { caller: { id: 'alice' } },
      );
      ids.push(job.id);
    }
    const first = await call(server.url, 'GET', '/api/approvals', 'bob');
    assert.equal((first.body as StepApprovalRequest[]).length, 50);
    const cursor = first.headers.get('warrant-next-cursor');
    assert.ok(cursor !== null);
    const second = await call(server.url, 'GET', `/api/approvals?cursor=${cursor}`, 'bob');
    assert.equal((second.body as StepApprovalRequest[]).length, 10);
    assert.equal(second.headers.get('warrant-next-cursor'), null, 'the last page');
    const seen = [
      ...(first.body as StepApprovalRequest[]),
      ...(second.body as StepApprovalRequest[]),
    ];
    assert.deepEqual(new Set(seen.map((request) => request.jobId)), new Set(ids));
    const seven = await call(server.url, 'GET', '/api/approvals?limit=7', 'bob');
    assert.equal((seven.body as StepApprovalRequest[]).length, 7);
    for (const limit of ['0', '1001', 'x', '-1'])
      assert.equal(
        (await call(server.url, 'GET', `/api/approvals?limit=${limit}`, 'bob')).status,
        400,
      );
    assert.equal(
      (await call(server.url, 'GET', '/api/approvals?cursor=nonsense', 'bob')).status,
      400,
    );
    assert.deepEqual((await call(server.url, 'GET', '/api/approvals/count', 'bob')).body, {
      count: 60,
    });
  });
});

describe('authentication modes apply the runtime caller limits', () => {
  it('a resolver caller with 2,000,000 scopes is 401, not 500', async () => {
    const runtime = new OperatorRuntime();
    const scopes = Array.from({ length: 2_000_000 }, (_, index) => `s${index % 10}`);
    const logged: string[] = [];
    const app = createHttpServer(runtime, {
      authenticator: createResolverAuthenticator(() => ({ id: 'wide', scopes })),
      onAuthLog: (line) => logged.push(line),
    });
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    closers.push(async () => (await app.close(), await runtime.close()));
    for (const path of ['/api/jobs', '/api/approvals', '/api/capabilities']) {
      const answer = await call(url, 'GET', path);
      assert.equal(answer.status, 401, path);
    }
    assert.match(logged[0] ?? '', /more than 10000 values/);
  });
});
