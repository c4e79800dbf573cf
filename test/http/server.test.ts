import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createSystemModule } from '../../src/builtins/system-module.js';
import { createHttpServer, KEEP_ALIVE_TIMEOUT_MS } from '../../src/http/server.js';
import { OperatorRuntime, createCapability } from '../../src/index.js';

// One process-global inventory: the built-ins plus a few test capabilities, registered once.
const seen: { authorizer: number; destructive: number } = { authorizer: 0, destructive: 0 };
const setup = new OperatorRuntime();
setup.use(createSystemModule());
setup.use({
  manifest: {
    name: 'http-test',
    version: '1.0.0',
    capabilities: ['test.write', 'test.boom', 'test.wipe', 'test.big', 'tprov.status'],
  },
  capabilities: [
    createCapability({
      name: 'test.write',
      version: '2.0.0',
      description: 'a write',
      risk: 'write',
      execute: () => ({ written: true }),
    }),
    createCapability({
      name: 'test.boom',
      version: '1.0.0',
      description: 'fails',
      risk: 'read',
      execute: () => {
        throw new Error('database password=hunter2 rejected');
      },
    }),
    createCapability({
      name: 'test.wipe',
      version: '1.0.0',
      description: 'destructive',
      risk: 'destructive',
      execute: () => (seen.destructive += 1),
    }),
    createCapability({
      name: 'test.big',
      version: '1.0.0',
      description: 'odd values',
      risk: 'read',
      execute: () => ({ n: 10n, when: new Date(0) }),
    }),
    createCapability({
      name: 'tprov.status',
      version: '1.0.0',
      description: 'status',
      risk: 'read',
      execute: () => ({ ready: true }),
    }),
  ],
});

interface Started {
  url: string;
  close: () => Promise<void>;
  runtime: OperatorRuntime;
}

async function start(
  options: Parameters<typeof createHttpServer>[1] = {},
  runtimeOptions = {},
): Promise<Started> {
  const runtime = new OperatorRuntime(runtimeOptions);
  const app = createHttpServer(runtime, options);
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  return { url, runtime, close: async () => (await app.close(), await runtime.close()) };
}

async function call(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
) {
  const init: RequestInit = { method, headers: { ...headers } };
  if (body !== undefined) {
    init.body = typeof body === 'string' ? body : JSON.stringify(body);
    (init.headers as Record<string, string>)['content-type'] ??= 'application/json';
  }
  const response = await fetch(base + path, init);
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, json: json as Record<string, unknown>, text };
}

function assertNoStack(text: string): void {
  assert.doesNotMatch(text, /\n\s+at |node:internal|\.ts:\d+|hunter2/);
}

describe('warrant serve HTTP routes', () => {
  let server: Started;
  before(async () => {
    server = await start();
  });
  after(async () => server.close());

  it("keeps an idle keep-alive connection open for fastify's 72 s, not Node's 5 s", async () => {
    // A client reusing a socket the server closes at the same moment gets ECONNRESET for a
    // request it already sent; Node's 5 s default made that likely under load.
    const app = createHttpServer(new OperatorRuntime());
    try {
      assert.equal(app.server.keepAliveTimeout, KEEP_ALIVE_TIMEOUT_MS);
      assert.equal(KEEP_ALIVE_TIMEOUT_MS, 72_000);
    } finally {
      await app.close();
    }
  });

  it('GET /health answers ok', async () => {
    assert.deepEqual((await call(server.url, 'GET', '/health')).json, { status: 'ok' });
  });

  it('POST /api/capabilities/:name/execute runs a read through the runtime: 200 { capability, risk, jobId, result }', async () => {
    const response = await call(server.url, 'POST', '/api/capabilities/system.echo/execute', {
      input: { message: 'hi' },
    });
    assert.equal(response.status, 200);
    assert.equal(response.json.capability, 'system.echo');
    assert.equal(response.json.risk, 'read');
    assert.equal((response.json.result as { message: string }).message, 'hi');
    const job = await server.runtime.getJob(response.json.jobId as string);
    assert.equal(job?.status, 'completed');
  });

  it('execute answers 404 for a name not yet registered, then runs it once registered (with its risk)', async () => {
    const path = '/api/capabilities/test.later/execute';
    assert.equal((await call(server.url, 'POST', path, {})).status, 404);
    setup.use({
      manifest: { name: 'http-later', version: '1.0.0', capabilities: ['test.later'] },
      capabilities: [
        createCapability({
          name: 'test.later',
          version: '1.0.0',
          description: 'registered after the server started',
          risk: 'read',
          execute: () => ({ later: true }),
        }),
      ],
    });
    for (let round = 0; round < 2; round++) {
      const response = await call(server.url, 'POST', path, {});
      assert.equal(response.status, 200);
      assert.equal(response.json.risk, 'read');
      assert.deepEqual(response.json.result, { later: true });
    }
  });

  it('answers 404 for an unknown capability, 400 for an admission failure, 403 for a denial, 500 for a failure', async () => {
    assert.equal(
      (await call(server.url, 'POST', '/api/capabilities/nope/execute', {})).status,
      404,
    );
    const invalid = await call(server.url, 'POST', '/api/capabilities/system.echo/execute', {
      input: { message: 5 },
    });
    assert.equal(invalid.status, 400);
    assert.match(String(invalid.json.error), /^Execution plan failed validation: /);
    assert.equal((invalid.json.issues as { code: string }[])[0]?.code, 'INPUT_TYPE_MISMATCH');
    const mismatch = await call(server.url, 'POST', '/api/capabilities/test.write/execute', {
      capabilityVersion: '',
    });
    assert.equal(mismatch.status, 400);
    assert.equal(
      (mismatch.json.issues as { code: string }[])[0]?.code,
      'CAPABILITY_VERSION_MISMATCH',
    );
    const denied = await call(server.url, 'POST', '/api/capabilities/test.write/execute', {});
    assert.equal(denied.status, 403);
    assert.equal(denied.json.error, 'Write capability requires explicit approval.');
    const failed = await call(server.url, 'POST', '/api/capabilities/test.boom/execute', {});
    assert.equal(failed.status, 500);
    assert.equal(typeof failed.json.jobId, 'string');
    // docs/guide/http.md, "HTTP routes": a denied or failed job is { error, jobId } on this route.
    assert.deepEqual(Object.keys(denied.json).sort(), ['error', 'jobId']);
    assert.deepEqual(Object.keys(failed.json).sort(), ['error', 'jobId']);
  });

  it('ignores approved: true in the body: the host authorizer alone decides', async () => {
    const response = await call(server.url, 'POST', '/api/capabilities/test.wipe/execute', {
      approved: true,
      input: {},
    });
    assert.equal(response.status, 403);
    assert.equal(response.json.error, 'Destructive capability requires explicit approval.');
    assert.equal(seen.destructive, 0);
  });

  it('POST /api/plans answers 201 with the job, and 404 / 400 / 403 / 500 with { error, issues?, job? }', async () => {
    const ok = await call(server.url, 'POST', '/api/plans', {
      version: '1.0',
      steps: [
        { id: 'a', capability: 'system.echo', input: { message: 'one' } },
        {
          id: 'b',
          capability: 'system.echo',
          input: { message: { $ref: 'steps.a.result.message' } },
        },
      ],
    });
    assert.equal(ok.status, 201);
    assert.equal(ok.json.status, 'completed');
    assert.equal((ok.json.result as { message: string }[])[1]?.message, 'one');
    const unknown = await call(server.url, 'POST', '/api/plans', {
      version: '1.0',
      steps: [{ id: 'a', capability: 'nope' }],
    });
    assert.equal(unknown.status, 404);
    assert.equal((unknown.json.issues as { code: string }[])[0]?.code, 'UNKNOWN_CAPABILITY');
    const duplicate = await call(server.url, 'POST', '/api/plans', {
      version: '1.0',
      steps: [
        { id: 'a', capability: 'system.echo', input: { message: 'x' } },
        { id: 'a', capability: 'system.echo', input: { message: 'y' } },
      ],
    });
    assert.equal(duplicate.status, 400);
    const denied = await call(server.url, 'POST', '/api/plans', {
      version: '1.0',
      steps: [{ id: 'w', capability: 'test.write' }],
    });
    assert.equal(denied.status, 403);
    assert.equal((denied.json.job as { status: string }).status, 'failed');
    const failed = await call(server.url, 'POST', '/api/plans', {
      version: '1.0',
      steps: [{ id: 'b', capability: 'test.boom' }],
    });
    assert.equal(failed.status, 500);
    // docs/guide/http.md, "HTTP routes": a denied or failed job is { error, job } on this route.
    assert.deepEqual(Object.keys(denied.json).sort(), ['error', 'job']);
    assert.deepEqual(Object.keys(failed.json).sort(), ['error', 'job']);
    const notAPlan = await call(server.url, 'POST', '/api/plans', [1, 2]);
    assert.equal(notAPlan.status, 400);
  });

  it('serves introspection and job history', async () => {
    const list = await call(server.url, 'GET', '/api/capabilities');
    assert.ok(
      (list.json as unknown as { name: string }[]).some(
        (capability) => capability.name === 'system.echo',
      ),
    );
    assert.equal(
      (await call(server.url, 'GET', '/api/capabilities/system.echo')).json.risk,
      'read',
    );
    assert.equal(
      (await call(server.url, 'GET', '/api/capabilities/system.echo?version=9')).status,
      404,
    );
    assert.equal((await call(server.url, 'GET', '/api/capabilities/unknown')).status, 404);
    const created = await call(server.url, 'POST', '/api/capabilities/system.echo/execute', {
      input: { message: 'm' },
    });
    const job = await call(server.url, 'GET', `/api/jobs/${String(created.json.jobId)}`);
    assert.equal(job.json.id, created.json.jobId);
    assert.equal((await call(server.url, 'GET', '/api/jobs/does-not-exist')).status, 404);
    const jobs = await call(server.url, 'GET', '/api/jobs?limit=1&status=completed');
    assert.equal((jobs.json as unknown as unknown[]).length, 1);
    assert.equal((await call(server.url, 'GET', '/api/jobs?limit=-1')).status, 400);
  });

  it('records values JSON cannot hold without crashing the response', async () => {
    const response = await call(server.url, 'POST', '/api/capabilities/test.big/execute', {});
    assert.equal(response.status, 200);
    assert.deepEqual(response.json.result, { n: '10', when: '1970-01-01T00:00:00.000Z' });
  });

  it('answers hostile bodies with clear 4xx errors and no stack trace', async () => {
    const malformed = await call(server.url, 'POST', '/api/plans', '{"version": "1.0", steps: [');
    assert.equal(malformed.status, 400);
    assert.deepEqual(malformed.json, { error: 'Malformed JSON body' });
    const proto = await call(
      server.url,
      'POST',
      '/api/plans',
      '{"version":"1.0","__proto__":{"polluted":true},"steps":[]}',
    );
    assert.equal(proto.status, 400);
    assert.match(String(proto.json.error), /forbidden "__proto__"/);
    assert.equal(({} as { polluted?: unknown }).polluted, undefined);
    const constructorKey = await call(
      server.url,
      'POST',
      '/api/plans',
      '{"constructor":{"prototype":{"polluted":true}}}',
    );
    assert.equal(constructorKey.status, 400);
    const huge = await call(
      server.url,
      'POST',
      '/api/plans',
      `{"pad":"${'x'.repeat(10 * 1024 * 1024)}"}`,
    );
    assert.equal(huge.status, 413);
    const wrongType = await call(server.url, 'POST', '/api/plans', 'version=1.0', {
      'content-type': 'text/plain',
    });
    assert.equal(wrongType.status, 415);
    const deep = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
    const nested = await call(
      server.url,
      'POST',
      '/api/capabilities/system.echo/execute',
      `{"input":{"message":"deep","extra":${deep(998)}}}`,
    );
    assert.equal(nested.status, 200);
    const tooDeep = await call(
      server.url,
      'POST',
      '/api/capabilities/system.echo/execute',
      `{"input":{"message":"deep","extra":${deep(5000)}}}`,
    );
    assert.equal(tooDeep.status, 400);
    assert.deepEqual(tooDeep.json, { error: 'JSON body is nested deeper than 1000 levels' });
    for (const response of [malformed, proto, constructorKey, huge, wrongType, tooDeep])
      assertNoStack(response.text);
  });

  it('never leaks a failing capability message detail beyond the recorded job error', async () => {
    const failed = await call(server.url, 'POST', '/api/plans', {
      version: '1.0',
      steps: [{ id: 'b', capability: 'test.boom' }],
    });
    assert.doesNotMatch(failed.text, /\n\s+at /);
  });

  it('answers 410 on the legacy routes while they are disabled', async () => {
    assert.equal((await call(server.url, 'POST', '/api/jobs/whatever/execute')).status, 410);
    const status = await call(server.url, 'GET', '/api/tprov/status');
    assert.equal(status.status, 410);
    assert.match(String(status.json.error), /POST \/api\/plans/);
  });
});

describe('warrant serve authentication', () => {
  it("answers 401 CALLER_INVALID, admitting nothing, when a host's resolveCaller answers a chain the checker refuses", async () => {
    let authorized = 0;
    const authorizer = {
      authorize: () => {
        authorized += 1;
        return { decision: 'allow' as const };
      },
    };
    const deep = {
      id: 'a1',
      actor: { id: 'a2', actor: { id: 'a3', actor: { id: 'a4', actor: { id: 'a5' } } } },
    };
    const server = await start(
      {
        resolveCaller: (request) =>
          request.headers['x-chain'] === 'cycle'
            ? { id: 'ada', actor: { id: 'bot', actor: { id: 'ada' } } }
            : { id: 'ada', actor: deep },
      },
      { authorizer },
    );
    try {
      for (const chain of ['cycle', 'deep']) {
        const refused = await call(
          server.url,
          'POST',
          '/api/capabilities/system.echo/execute',
          { message: 'hi' },
          { 'x-chain': chain },
        );
        assert.equal(refused.status, 401, chain);
        assert.match(String(refused.json.error), /^CALLER_INVALID: /, chain);
      }
      assert.equal(authorized, 0);
      const jobs = await call(server.url, 'GET', '/api/jobs');
      assert.equal(jobs.status, 401);
    } finally {
      await server.close();
    }
  });

  it('rejects every /api route without the bearer token (401) and resolves the caller otherwise', async () => {
    const callers: unknown[] = [];
    const authorizer = {
      authorize: (context: { caller?: unknown }) => {
        seen.authorizer += 1;
        callers.push(context.caller);
        return { decision: 'allow' as const };
      },
    };
    const server = await start(
      {
        token: 'sekret',
        resolveCaller: (request) => ({
          id: `agent:${String(request.headers['x-agent'] ?? 'none')}`,
        }),
      },
      { authorizer },
    );
    try {
      for (const [method, path] of [
        ['GET', '/api/capabilities'],
        ['GET', '/api/jobs'],
        ['POST', '/api/plans'],
        ['POST', '/api/capabilities/system.echo/execute'],
        ['GET', '/api/tprov/status'],
      ] as const) {
        assert.equal(
          (await call(server.url, method, path, method === 'POST' ? {} : undefined)).status,
          401,
          path,
        );
        assert.equal(
          (
            await call(server.url, method, path, method === 'POST' ? {} : undefined, {
              authorization: 'Bearer wrong',
            })
          ).status,
          401,
        );
      }
      assert.equal((await call(server.url, 'GET', '/health')).status, 200);
      const ok = await call(
        server.url,
        'POST',
        '/api/capabilities/test.write/execute',
        {},
        { authorization: 'Bearer sekret', 'x-agent': 'a7' },
      );
      assert.equal(ok.status, 200, 'the configured authorizer approves the write');
      assert.deepEqual(callers, [{ id: 'agent:a7' }]);
    } finally {
      await server.close();
    }
  });
});

describe('warrant serve legacy routes (enabled)', () => {
  it('re-executes a stored job through the authorizer, and calls a provider status capability directly', async () => {
    const server = await start({ legacyRoutes: true });
    try {
      const created = await call(server.url, 'POST', '/api/plans', {
        version: '1.0',
        steps: [
          { id: 'a', capability: 'system.echo', input: { message: 'again' } },
          {
            id: 'b',
            capability: 'system.echo',
            input: { message: { $ref: 'steps.a.result.message' } },
          },
        ],
      });
      const rerun = await call(server.url, 'POST', `/api/jobs/${String(created.json.id)}/execute`);
      assert.equal(rerun.status, 200);
      assert.equal(rerun.json.legacy, true);
      assert.deepEqual(
        (rerun.json.steps as { status: string; result: { message: string } }[]).map((step) => [
          step.status,
          step.result.message,
        ]),
        [
          ['completed', 'again'],
          ['completed', 'again'],
        ],
      );
      const deniedJob = await call(server.url, 'POST', '/api/plans', {
        version: '1.0',
        steps: [{ id: 'w', capability: 'test.write' }],
      });
      const deniedRerun = await call(
        server.url,
        'POST',
        `/api/jobs/${String((deniedJob.json.job as { id: string }).id)}/execute`,
      );
      assert.equal(deniedRerun.status, 403, 'the legacy route still authorizes each step');
      assert.equal((await call(server.url, 'POST', '/api/jobs/missing/execute')).status, 404);
      const status = await call(server.url, 'GET', '/api/tprov/status');
      assert.deepEqual(status.json, { provider: 'tprov', legacy: true, status: { ready: true } });
      assert.equal((await call(server.url, 'GET', '/api/nothing/status')).status, 404);
    } finally {
      await server.close();
    }
  });
});
