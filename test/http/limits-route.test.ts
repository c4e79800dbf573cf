// GET /api/limits (docs/api.md, "runtime.listLimits"): the limits and the counters the caller
// may see; a denial over HTTP carries the limit's reason.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { createHttpServer } from '../../src/http/server.js';
import { OperatorRuntime, type ExecutionCaller, type Job } from '../../src/index.js';
import { register } from '../support/runtime-fixtures.js';

const closers: (() => Promise<unknown>)[] = [];
after(async () => {
  for (const close of closers) await close();
});

function callerOf(name: string): ExecutionCaller {
  const scopes = name.startsWith('auditor') ? ['warrant:audit'] : [];
  return { id: name, scopes, tenant: 't1' };
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
  return { status: response.status, body: (await response.json()) as unknown };
}

describe('GET /api/limits', () => {
  it('shows each caller its own counters, an auditor every counter of its tenant', async () => {
    const runtime = new OperatorRuntime({
      limits: [{ name: 'mine', per: 'caller', max: 1, windowMs: 60_000 }],
    });
    const [read] = register(runtime, { execute: () => 1 }) as [string];
    const app = createHttpServer(runtime, {
      resolveCaller: (request) => callerOf(String(request.headers['x-test-caller'])),
    });
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    closers.push(async () => (await app.close(), await runtime.close()));
    const plan = { version: '1.0', steps: [{ id: 'r', capability: read, input: {} }] };
    for (const who of ['alice', 'bob'])
      assert.equal(
        ((await call(url, 'POST', '/api/plans', who, plan)).body as Job).status,
        'completed',
      );
    const refused = await call(url, 'POST', '/api/plans', 'alice', plan);
    assert.equal(refused.status, 403);
    const { error, job: denied } = refused.body as { error: string; job: Job };
    assert.equal(error, 'limit mine: 2/1 in 1m');
    assert.equal(denied.steps[0]?.error, 'limit mine: 2/1 in 1m');
    assert.equal(denied.steps[0]?.decision?.limit, 'mine');

    const alices = await call(url, 'GET', '/api/limits', 'alice');
    assert.equal(alices.status, 200);
    assert.deepEqual(alices.body, {
      limits: [{ name: 'mine', per: 'caller', match: {}, max: 1, windowMs: 60_000, cost: false }],
      counters: [
        {
          limit: 'mine',
          per: 'caller',
          tenant: 't1',
          caller: 'alice',
          used: 1,
          max: 1,
          windowMs: 60_000,
        },
      ],
    });
    const audited = (await call(url, 'GET', '/api/limits', 'auditor')).body as {
      counters: { caller: string }[];
    };
    assert.deepEqual(
      audited.counters.map((counter) => counter.caller),
      ['alice', 'bob'],
    );
  });

  it('POST /api/capabilities/:name/execute over a limit: 429 with Retry-After, the window in seconds', async () => {
    const runtime = new OperatorRuntime({
      limits: [{ name: 'once', per: 'caller', max: 1, windowMs: 90_000 }],
    });
    const [read] = register(runtime, { execute: () => 1 }) as [string];
    const app = createHttpServer(runtime, {
      resolveCaller: (request) => callerOf(String(request.headers['x-test-caller'])),
    });
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    closers.push(async () => (await app.close(), await runtime.close()));
    const execute = () =>
      fetch(`${url}/api/capabilities/${read}/execute`, {
        method: 'POST',
        headers: { 'x-test-caller': 'carol', 'content-type': 'application/json' },
        body: JSON.stringify({ input: {} }),
        signal: AbortSignal.timeout(20_000),
      });
    assert.equal((await execute()).status, 200);
    const refused = await execute();
    assert.equal(refused.status, 429);
    assert.equal(refused.headers.get('retry-after'), '90');
    const body = (await refused.json()) as { error: string; jobId: string };
    assert.equal(body.error, 'limit once: 2/1 in 90s');
    assert.equal(typeof body.jobId, 'string');
  });
});
