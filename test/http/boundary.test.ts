// The answers of `warrant serve` at its boundary (issue 14 items 2, 8, 10 and 11): bounded job
// lists, 400 for repeated query parameters, router errors in the `{ error }` shape, one-line
// errors without stack frames (job errors included), internal errors reported to the host, and
// the legacy status route limited to read capabilities.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { createHttpServer, type HttpServerOptions } from '../../src/http/server.js';
import {
  OperatorRuntime,
  createCapability,
  type CapabilityAuthorizationContext,
  type ExecutionAuthorizer,
  type Job,
  type OperatorRuntimeOptions,
} from '../../src/index.js';

const directory = mkdtempSync(join(tmpdir(), 'warrant-http-boundary-'));
const servers: { app: FastifyInstance; runtime: OperatorRuntime }[] = [];
after(async () => {
  for (const { app, runtime } of servers) {
    await app.close();
    await runtime.close().catch(() => {});
  }
  rmSync(directory, { recursive: true, force: true });
});

// A message that carries a stack, as an authorizer or capability may put in it.
const STACKED =
  'boom\n    at secretFunction (/srv/app/secret.js:10:5)\n    at node:internal/process:1:1';
const invoked: string[] = [];
new OperatorRuntime().use({
  manifest: {
    name: 'boundary-test',
    version: '1.0.0',
    capabilities: ['bnd.echo', 'bnd.stack', 'bnd.own', 'bnd.denied', 'bnd.thrown'].concat([
      'bread.status',
      'bwrite.status',
      'bwipe.status',
    ]),
  },
  capabilities: [
    createCapability({
      name: 'bnd.echo',
      version: '1.0.0',
      description: 'echo',
      risk: 'read',
      execute: ({ input }) => input,
    }),
    createCapability({
      name: 'bnd.stack',
      version: '1.0.0',
      description: 'throws a message holding a stack',
      risk: 'read',
      execute: () => {
        throw new Error(STACKED);
      },
    }),
    createCapability({
      name: 'bnd.own',
      version: '1.0.0',
      description: 'throws an error whose message is its own stack',
      risk: 'read',
      execute: () => {
        const error = new Error('inner');
        throw new Error(String(error.stack));
      },
    }),
    createCapability({
      name: 'bnd.denied',
      version: '1.0.0',
      description: 'denied with a stacked reason',
      risk: 'read',
      execute: () => 'never',
    }),
    createCapability({
      name: 'bnd.thrown',
      version: '1.0.0',
      description: 'its authorizer throws',
      risk: 'read',
      execute: () => 'never',
    }),
    ...(['read', 'write', 'destructive'] as const).map((risk) =>
      createCapability({
        name: `b${risk === 'destructive' ? 'wipe' : risk}.status`,
        version: '1.0.0',
        description: `a ${risk} status`,
        risk,
        execute: () => (invoked.push(risk), { ready: true }),
      }),
    ),
  ],
});

const authorizer: ExecutionAuthorizer = {
  authorize: (context: CapabilityAuthorizationContext) => {
    if (context.capability.name === 'bnd.denied') return { decision: 'deny', reason: STACKED };
    if (context.capability.name === 'bnd.thrown') throw new Error(STACKED);
    return { decision: 'allow' };
  },
};

async function start(
  options: HttpServerOptions = {},
  runtimeOptions: OperatorRuntimeOptions = {},
): Promise<{ url: string; runtime: OperatorRuntime }> {
  const runtime = new OperatorRuntime({ authorizer, ...runtimeOptions });
  const app = createHttpServer(runtime, options);
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  servers.push({ app, runtime });
  return { url, runtime };
}

async function call(url: string, method = 'GET', body?: unknown) {
  const response = await fetch(url, {
    method,
    ...(body !== undefined && {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }),
  });
  const text = await response.text();
  return { status: response.status, text, json: JSON.parse(text) as Record<string, unknown> };
}

describe('GET /api/jobs is bounded (issue 14 item 2)', () => {
  it('answers 50 jobs by default, up to 1,000 on request, newest first', async () => {
    // A bound above the memory store's default (1,000 kept) so that 1,005 jobs are all there.
    const { url, runtime } = await start({}, { maxJobs: 2_000 });
    for (let index = 0; index < 1_005; index++) {
      // As `http`, the caller of every request without an authentication mode: its own jobs.
      await runtime.executePlan(
        {
          version: '1.0',
          goal: `job ${index}`,
          steps: [{ id: 's', capability: 'bnd.echo', input: {} }],
        },
        { caller: { id: 'http' } },
      );
    }
    const listed = (await call(`${url}/api/jobs`)).json as unknown as Job[];
    assert.equal(listed.length, 50);
    assert.equal(listed[0]?.goal, 'job 1004');
    const most = (await call(`${url}/api/jobs?limit=1000`)).json as unknown as Job[];
    assert.equal(most.length, 1000);
    assert.equal(((await call(`${url}/api/jobs?limit=7`)).json as unknown as Job[]).length, 7);
  });

  it('refuses a limit above 1,000, zero, negative or not an integer with 400 { error }', async () => {
    const { url } = await start();
    for (const limit of [
      '1001',
      '0',
      '-1',
      '1.5',
      'abc',
      '',
      '1e3',
      '+5',
      ' 5',
      '0x10',
      '9'.repeat(400),
    ]) {
      const answer = await call(`${url}/api/jobs?limit=${encodeURIComponent(limit)}`);
      assert.equal(answer.status, 400, `limit=${limit}`);
      assert.deepEqual(answer.json, { error: 'limit must be an integer from 1 to 1000' });
    }
  });
});

describe('query parameters and router errors (issue 14 item 10)', () => {
  it('answers 400 { error } to a repeated query parameter, never 500', async () => {
    const { url } = await start();
    for (const path of [
      '/api/jobs?status=completed&status=failed',
      '/api/jobs?capability=a&capability=b',
      '/api/jobs?goal=a&goal=a',
      '/api/jobs?limit=1&limit=2',
      '/api/jobs?status=completed&limit=5&status=completed',
      '/api/capabilities/bnd.echo?version=1.0.0&version=1.0.0',
      '/api/jobs/some-id?x=1&x=2',
    ]) {
      const answer = await call(`${url}${path}`);
      assert.equal(answer.status, 400, path);
      assert.deepEqual(Object.keys(answer.json), ['error'], path);
      assert.match(String(answer.json.error), /^Query parameter "\w+" is repeated$/, path);
    }
  });

  it('answers router errors in the { error } shape, without fastify codes or the URL', async () => {
    const { url } = await start();
    const long = 'x'.repeat(101);
    for (const [path, status] of [
      ['/api/jobs/%', 400],
      ['/api/jobs/%zz', 400],
      ['/api/capabilities/%E0%A4%A/execute', 400],
      [`/api/jobs/${long}`, 414],
      [`/api/capabilities/${long}`, 414],
      [`/api/capabilities/${long}/execute`, 414],
    ] as const) {
      const answer = await call(`${url}${path}`, path.endsWith('execute') ? 'POST' : 'GET');
      assert.equal(answer.status, status, path);
      assert.deepEqual(Object.keys(answer.json), ['error'], path);
      assert.doesNotMatch(answer.text, /FST_|%|xxxxxxxx|statusCode|api\//, path);
    }
  });
});

describe('one-line errors across the HTTP boundary (issue 14 item 10)', () => {
  // Every string of an answer is one line: no JSON-escaped line break, no stack frame, no path.
  const assertOneLine = (text: string, where: string) => {
    assert.doesNotMatch(text, /\\n|\\r|\\u2028|secret|node:internal|\.ts:\d+/, where);
  };
  const errorsOf = (job: Job) => [
    job.error,
    ...job.steps.map((step) => step.error),
    ...job.events.map((event) => event.data?.error ?? event.data?.reason),
  ];

  it('keeps the first line of capability errors, denial reasons and authorizer errors, in jobs too', async () => {
    const { url } = await start();
    for (const [capability, status, first] of [
      ['bnd.stack', 500, 'boom'],
      ['bnd.own', 500, 'Error: inner'],
      ['bnd.denied', 403, 'boom'],
      ['bnd.thrown', 500, 'boom'],
    ] as const) {
      const executed = await call(`${url}/api/capabilities/${capability}/execute`, 'POST', {});
      assert.equal(executed.status, status, capability);
      assert.equal(executed.json.error, first, capability);
      assertOneLine(executed.text, capability);
      const planned = await call(`${url}/api/plans`, 'POST', {
        version: '1.0',
        steps: [{ id: 's', capability }],
      });
      assert.equal(planned.status, status);
      assert.equal(planned.json.error, first);
      assertOneLine(planned.text, capability);
      const job = planned.json.job as Job;
      assert.deepEqual(
        errorsOf(job).filter((error) => error !== undefined),
        [first, first, first, first],
        capability,
      );
      const read = await call(`${url}/api/jobs/${job.id}`);
      assert.deepEqual(errorsOf(read.json as unknown as Job), errorsOf(job));
      assertOneLine(read.text, capability);
    }
    const listed = await call(`${url}/api/jobs?limit=1000`);
    assertOneLine(listed.text, 'job list');
  });

  it('keeps legacy answers to one line as well', async () => {
    const { url, runtime } = await start({ legacyRoutes: true, legacyAuthorizer: authorizer });
    const job = await runtime.executePlan({
      version: '1.0',
      steps: [{ id: 's', capability: 'bnd.stack' }],
    });
    const rerun = await call(`${url}/api/jobs/${job.id}/execute`, 'POST');
    assert.equal(rerun.status, 500);
    assert.equal((rerun.json.steps as { error: string }[])[0]?.error, 'boom');
    assertOneLine(rerun.text, 'legacy re-execution');
  });
});

describe('internal errors are reported to the host (issue 14 item 8)', () => {
  it('calls onInternalError with the error and the matched route, and answers 500 Internal error', async () => {
    const file = join(directory, 'corrupt.db');
    writeFileSync(file, 'this is not a SQLite database, it only has the name of one '.repeat(100));
    const told: [boolean, string][] = [];
    const { url } = await start(
      { onInternalError: (error, route) => told.push([error instanceof Error, route]) },
      { store: `sqlite:${file}` },
    );
    const listed = await call(`${url}/api/jobs?limit=3`);
    assert.equal(listed.status, 500);
    assert.deepEqual(listed.json, { error: 'Internal error' });
    const read = await call(`${url}/api/jobs/abc`);
    assert.equal(read.status, 500);
    const planned = await call(`${url}/api/plans`, 'POST', {
      version: '1.0',
      steps: [{ id: 's', capability: 'bnd.echo' }],
    });
    assert.equal(planned.status, 500);
    assert.deepEqual(told, [
      [true, 'GET /api/jobs'],
      [true, 'GET /api/jobs/:id'],
      [true, 'POST /api/plans'],
    ]);
  });

  it('does not call onInternalError for client errors, denials or failed jobs', async () => {
    const told: unknown[] = [];
    const { url } = await start({ onInternalError: (error) => told.push(error) });
    await call(`${url}/api/capabilities/bnd.stack/execute`, 'POST', {});
    await call(`${url}/api/capabilities/bnd.denied/execute`, 'POST', {});
    await call(`${url}/api/jobs?status=a&status=b`);
    await call(`${url}/api/nothing`);
    await call(`${url}/api/jobs/%`);
    assert.deepEqual(told, []);
  });
});

describe('legacy status route dispatches read capabilities only (issue 14 item 11)', () => {
  it('answers 403 for a write or destructive <provider>.status and never invokes it', async () => {
    const { url } = await start({ legacyRoutes: true });
    for (const provider of ['bwrite', 'bwipe']) {
      const answer = await call(`${url}/api/${provider}/status`);
      assert.equal(answer.status, 403, provider);
      assert.match(
        String(answer.json.error),
        /^The legacy status route calls read capabilities only: b\w+\.status is (write|destructive)$/,
      );
    }
    assert.deepEqual(invoked, []);
    const read = await call(`${url}/api/bread/status`);
    assert.deepEqual(read.json, { provider: 'bread', legacy: true, status: { ready: true } });
    assert.deepEqual(invoked, ['read']);
  });
});
