// The HTTP face of a job's life (docs/api.md, "HTTP"): `POST /api/plans` with `Prefer:
// respond-async` (202, Location, the queued job), `GET /api/jobs/:id?waitMs=` and
// `POST /api/jobs/:id/cancel` (200, 403, 404).
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { createHttpServer } from '../../src/http/server.js';
import { OperatorRuntime, type ExecutionContext } from '../../src/index.js';
import { register } from '../support/runtime-fixtures.js';

const closers: (() => Promise<unknown>)[] = [];
after(async () => {
  for (const close of closers) await close();
});

async function start() {
  const runtime = new OperatorRuntime();
  const signals: AbortSignal[] = [];
  const [wait] = register(runtime, {
    execute: ({ context }: { context: ExecutionContext }) =>
      new Promise((resolve, reject) => {
        signals.push(context.signal);
        const timer = setTimeout(() => resolve({ waited: true }), 300);
        context.signal.addEventListener('abort', () => {
          clearTimeout(timer);
          reject(context.signal.reason as Error);
        });
      }),
  }) as [string];
  const app = createHttpServer(runtime, {
    // `auditor` holds warrant:audit: it reads every job, and may cancel none but its own.
    resolveCaller: (request) => {
      const id = String(request.headers['x-test-caller'] ?? 'anonymous');
      return id === 'auditor' ? { id, scopes: ['warrant:audit'] } : { id };
    },
  });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  closers.push(async () => (await app.close(), await runtime.close()));
  return { url, wait, signals };
}

async function call(
  url: string,
  method: string,
  path: string,
  as: string,
  body?: unknown,
  headers: Record<string, string> = {},
) {
  const response = await fetch(url + path, {
    method,
    headers: {
      'x-test-caller': as,
      ...headers,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(20_000),
  });
  return {
    status: response.status,
    headers: response.headers,
    body: (await response.json()) as Record<string, unknown>,
  };
}

describe('HTTP: queued jobs and cancellation', () => {
  it('Prefer: respond-async answers 202 with Location and the queued job; waitMs waits for its end', async () => {
    const server = await start();
    const plan = { version: '1.0', steps: [{ id: 'w', capability: server.wait, input: {} }] };
    const submitted = await call(server.url, 'POST', '/api/plans', 'alice', plan, {
      prefer: 'respond-async',
    });
    assert.equal(submitted.status, 202);
    assert.equal(submitted.body.status, 'queued');
    const jobId = submitted.body.id as string;
    assert.equal(submitted.headers.get('location'), `/api/jobs/${jobId}`);
    const done = await call(server.url, 'GET', `/api/jobs/${jobId}?waitMs=10000`, 'alice');
    assert.equal(done.status, 200);
    assert.equal(done.body.status, 'completed');
    assert.equal(
      (await call(server.url, 'GET', `/api/jobs/${jobId}?waitMs=30001`, 'alice')).status,
      400,
    );
    assert.equal(
      (await call(server.url, 'GET', '/api/jobs/job_nope?waitMs=10', 'alice')).status,
      404,
    );
  });

  it('POST /api/jobs/:id/cancel: 404 for a caller who may not read it, 403 for one who may read but not cancel, 200 for the submitter, 404 unknown', async () => {
    const server = await start();
    const plan = { version: '1.0', steps: [{ id: 'w', capability: server.wait, input: {} }] };
    const submitted = await call(server.url, 'POST', '/api/plans', 'alice', plan, {
      prefer: 'respond-async',
    });
    const jobId = submitted.body.id as string;
    const path = `/api/jobs/${jobId}/cancel`;
    const hidden = await call(server.url, 'POST', path, 'mallory', {});
    assert.equal(hidden.status, 404);
    assert.deepEqual(hidden.body, { error: `Unknown job: ${jobId}` });
    const refused = await call(server.url, 'POST', path, 'auditor', {});
    assert.equal(refused.status, 403);
    assert.equal(refused.body.code, 'CANCEL_FORBIDDEN');
    const cancelled = await call(server.url, 'POST', path, 'alice', { reason: 'enough' });
    assert.equal(cancelled.status, 200);
    const end = await call(server.url, 'GET', `/api/jobs/${jobId}?waitMs=10000`, 'alice');
    assert.equal(end.body.status, 'cancelled');
    assert.equal(
      (await call(server.url, 'POST', '/api/jobs/job_nope/cancel', 'alice', {})).status,
      404,
    );
  });
});

describe('HTTP: idempotency keys', () => {
  it('a repeat answers 200 with Idempotent-Replayed: true and the first job; another plan 409', async () => {
    const server = await start();
    const plan = {
      version: '1.0',
      idempotencyKey: 'order-1',
      steps: [{ id: 'w', capability: server.wait, input: {} }],
    };
    const first = await call(server.url, 'POST', '/api/plans', 'alice', plan);
    assert.equal(first.status, 201);
    assert.equal(first.headers.get('idempotent-replayed'), null);
    const again = await call(server.url, 'POST', '/api/plans', 'alice', plan);
    assert.equal(again.status, 200);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.equal(again.body.id, first.body.id);
    const asynchronous = await call(server.url, 'POST', '/api/plans', 'alice', plan, {
      prefer: 'respond-async',
    });
    assert.equal(asynchronous.status, 200);
    assert.equal(asynchronous.body.id, first.body.id);
    const conflict = await call(server.url, 'POST', '/api/plans', 'alice', {
      ...plan,
      goal: 'another plan',
    });
    assert.equal(conflict.status, 409);
    assert.equal(conflict.body.code, 'IDEMPOTENCY_CONFLICT');
    assert.equal(server.signals.length, 1);
  });
});
