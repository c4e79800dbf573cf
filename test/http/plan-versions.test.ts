// docs/api.md, "Plan version 2.0", over HTTP: POST /api/plans admits a 2.0 plan only when the
// runtime lists it (else 400 UNSUPPORTED_PLAN_VERSION), a value-domain breach is a 400 naming
// its issue code, and the generic capability route submits 2.0 when the runtime admits it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createHttpServer } from '../../src/http/server.js';
import { OperatorRuntime, type OperatorRuntimeOptions } from '../../src/index.js';
import { recordingAuthorizer, register } from '../support/runtime-fixtures.js';

async function withServer(
  options: OperatorRuntimeOptions,
  use: (url: string, runtime: OperatorRuntime, echo: string) => Promise<void>,
): Promise<void> {
  const runtime = new OperatorRuntime(options);
  const [echo] = register(runtime, { execute: ({ input }) => input });
  const app = createHttpServer(runtime);
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  try {
    await use(url, runtime, echo as string);
  } finally {
    await app.close();
    await runtime.close();
  }
}

async function post(url: string, body: unknown) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

function nested(levels: number): unknown {
  let value: unknown = 0;
  for (let level = 0; level < levels; level++) value = [value];
  return value;
}

describe('plan version 2.0 over HTTP', () => {
  it('refuses a 2.0 plan with 400 UNSUPPORTED_PLAN_VERSION by default', async () => {
    await withServer({}, async (url, runtime, echo) => {
      const answer = await post(`${url}/api/plans`, {
        version: '2.0',
        steps: [{ id: 'a', capability: echo, input: { x: 1 } }],
      });
      assert.equal(answer.status, 400);
      assert.deepEqual(
        (answer.json.issues as { code: string }[]).map((issue) => issue.code),
        ['UNSUPPORTED_PLAN_VERSION'],
      );
      assert.deepEqual(await runtime.listJobs(), []);
    });
  });

  it('runs a 2.0 plan when listed, and answers a breach with 400 and its issue code', async () => {
    await withServer({ planVersions: ['1.0', '2.0'] }, async (url, runtime, echo) => {
      const ok = await post(`${url}/api/plans`, {
        version: '2.0',
        steps: [{ id: 'a', capability: echo, input: { x: 1 } }],
      });
      assert.equal(ok.status, 201);
      assert.equal((ok.json as { planVersion?: string }).planVersion, '2.0');
      const deep = await post(`${url}/api/plans`, {
        version: '2.0',
        steps: [{ id: 'a', capability: echo, input: nested(129) }],
      });
      assert.equal(deep.status, 400);
      assert.deepEqual(
        (deep.json.issues as { code: string; field: string }[]).map((issue) => issue.code),
        ['VALUE_TOO_DEEP'],
      );
      assert.equal((await runtime.listJobs()).length, 1);
    });
  });

  it('submits the generic capability route as 2.0 when the runtime admits only 2.0', async () => {
    const authorizer = recordingAuthorizer();
    await withServer({ planVersions: ['2.0'], authorizer }, async (url, runtime, echo) => {
      const answer = await post(`${url}/api/capabilities/${echo}/execute`, {
        input: { nested: { n: 1 } },
      });
      assert.equal(answer.status, 200);
      const job = await runtime.getJob(answer.json.jobId as string);
      assert.equal(job?.planVersion, '2.0');
      assert.ok(Object.isFrozen(authorizer.calls[0]?.input));
    });
  });
});
