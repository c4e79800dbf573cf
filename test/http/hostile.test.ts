// Hostile HTTP input (issue 9), the cases test/http/server.test.ts and load.test.ts leave out:
// invalid UTF-8, nesting up to the 1,000-level limit and beyond it (refused; issue 14), slow-loris
// clients that drip their headers, and 1,000 concurrent plans on the SQLite store. Every
// request gets the right status, no stack trace, every admitted job is recorded exactly once,
// and the server keeps serving.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { createHttpServer, type HttpServerOptions } from '../../src/http/server.js';
import {
  OperatorRuntime,
  createCapability,
  isPlanAdmissionError,
  type ExecutionPlan,
  type Job,
} from '../../src/index.js';
import { hostileDepth } from '../mcp/fixtures/hostile-capabilities.js';
import { BURST_BACKLOG } from '../support/burst.js';

const directory = mkdtempSync(join(tmpdir(), 'warrant-http-hostile-'));
const servers: { app: FastifyInstance; runtime: OperatorRuntime }[] = [];
const sockets: Socket[] = [];
after(async () => {
  for (const socket of sockets) socket.destroy();
  for (const { app, runtime } of servers) {
    await app.close();
    await runtime.close();
  }
  rmSync(directory, { recursive: true, force: true });
});

// The inventory is process-global; this file registers its capabilities once.
new OperatorRuntime().use({
  manifest: {
    name: 'hostile-http',
    version: '1.0.0',
    capabilities: ['hostile.echo', 'hostile.depth', 'hostile.write', 'hostile.fail'],
  },
  capabilities: [
    createCapability({
      name: 'hostile.echo',
      version: '1.0.0',
      description: 'returns its text',
      risk: 'read',
      inputSchema: { text: { type: 'string', required: true, description: 'text' } },
      execute: ({ input }) => ({ text: (input as { text: string }).text }),
    }),
    hostileDepth,
    createCapability({
      name: 'hostile.write',
      version: '1.0.0',
      description: 'a write the default policy denies',
      risk: 'write',
      execute: () => 'written',
    }),
    createCapability({
      name: 'hostile.fail',
      version: '1.0.0',
      description: 'always fails',
      risk: 'read',
      execute: async () => {
        throw new Error('failing on purpose');
      },
    }),
  ],
});

async function start(
  options: HttpServerOptions = {},
  store = 'memory',
): Promise<{ url: string; port: number; runtime: OperatorRuntime }> {
  const runtime = new OperatorRuntime({ store, maxJobs: 5000 });
  const app = createHttpServer(runtime, options);
  // 1,000 clients connect at once below: every connection queued by the kernel, however long
  // this process takes to accept them.
  const url = await app.listen({ host: '127.0.0.1', port: 0, backlog: BURST_BACKLOG });
  servers.push({ app, runtime });
  return { url, port: (app.server.address() as { port: number }).port, runtime };
}

interface Answer {
  status: number;
  text: string;
  json: Record<string, unknown> | undefined;
}

async function post(url: string, body: string | Uint8Array, contentType = 'application/json') {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': contentType },
    body,
  });
  const text = await response.text();
  let json: Record<string, unknown> | undefined;
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    json = undefined;
  }
  return { status: response.status, text, json } satisfies Answer;
}

function assertNoStack(answer: Answer): void {
  assert.doesNotMatch(answer.text, /\n\s+at |node:internal|\.ts:\d+|SyntaxError|Unexpected token/);
}

async function assertServing(url: string): Promise<void> {
  const answer = await post(
    `${url}/api/capabilities/hostile.echo/execute`,
    JSON.stringify({ input: { text: 'still here' } }),
  );
  assert.equal(answer.status, 200);
  assert.deepEqual((answer.json as { result: unknown }).result, { text: 'still here' });
}

const bytes = (...parts: (string | number[])[]) =>
  Buffer.concat(
    parts.map((part) => (typeof part === 'string' ? Buffer.from(part) : Buffer.from(part))),
  );

describe('invalid UTF-8 bodies', () => {
  it('decodes invalid sequences inside strings as U+FFFD, records that, and refuses bodies that are not JSON', async () => {
    const { url, runtime } = await start();
    const execute = `${url}/api/capabilities/hostile.echo/execute`;
    // A lone continuation byte, a truncated sequence, an overlong '/', a UTF-16 surrogate and an
    // out-of-range lead byte, each inside a JSON string.
    const invalid: number[][] = [[0x80], [0xe2, 0x82], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xf8]];
    for (const sequence of invalid) {
      for (const contentType of ['application/json', 'application/json; charset=utf-8']) {
        const answer = await post(
          execute,
          bytes('{"input":{"text":"a', sequence, 'b"}}'),
          contentType,
        );
        assert.equal(answer.status, 200, `${sequence.join(',')}: ${answer.text}`);
        const text = (answer.json as { result: { text: string } }).result.text;
        assert.match(text, /^a\uFFFD+b$/);
        const job = await runtime.getJob((answer.json as { jobId: string }).jobId);
        assert.deepEqual(job?.steps[0]?.input, { text }, 'recorded as decoded');
      }
    }
    for (const body of [
      bytes([0xff, 0xfe, 0xfd]),
      bytes([0xef, 0xbb]),
      bytes('{"input":', [0xff], '{"text":"x"}}'),
      bytes('{', [0xc3, 0x28], ':1}'),
    ]) {
      for (const path of ['/api/plans', '/api/capabilities/hostile.echo/execute']) {
        const answer = await post(`${url}${path}`, body);
        assert.equal(answer.status, 400, `${path}: ${answer.text}`);
        assert.deepEqual(answer.json, { error: 'Malformed JSON body' });
        assertNoStack(answer);
      }
    }
    await assertServing(url);
  });
});

describe('deeply nested bodies', () => {
  const objects = (depth: number, leaf: string) =>
    `${'{"a":'.repeat(depth)}${leaf}${'}'.repeat(depth)}`;
  const arrays = (depth: number, leaf: string) => `${'['.repeat(depth)}${leaf}${']'.repeat(depth)}`;
  const refused = { error: 'JSON body is nested deeper than 1000 levels' };

  // The body itself is level 1: `{"input":{"nest":...}}` leaves 998 levels to the nest, a plan's
  // step input 996 (the plan, `steps`, the step and the input come first).
  it('runs plans whose inputs nest as deep as the limit allows, and resolves a reference at the bottom', async () => {
    const { url, runtime } = await start();
    for (const nest of [objects, arrays]) {
      const direct = await post(
        `${url}/api/capabilities/hostile.depth/execute`,
        `{"input":{"nest":${nest(998, '"bottom"')}}}`,
      );
      assert.equal(direct.status, 200, direct.text.slice(0, 200));
      assert.deepEqual((direct.json as { result: unknown }).result, {
        depth: 998,
        leaf: 'bottom',
      });
      const plan = await post(
        `${url}/api/plans`,
        `{"version":"1.0","steps":[
          {"id":"first","capability":"hostile.echo","input":{"text":"from the first step"}},
          {"id":"second","capability":"hostile.depth",
           "input":{"nest":${nest(995, '{"$ref":"steps.first.result.text"}')}}}]}`,
      );
      assert.equal(plan.status, 201, plan.text.slice(0, 200));
      const job = plan.json as unknown as Job;
      assert.deepEqual(job.steps[1]?.result, { depth: 995, leaf: 'from the first step' });
      assert.equal((await runtime.getJob(job.id))?.status, 'completed');
      // The history still answers: values deeper than 200 levels are cut when printed.
      const history = await fetch(`${url}/api/jobs/${job.id}`);
      assert.equal(history.status, 200);
      assert.match(await history.text(), /\[Too deep\]/);
    }
    await assertServing(url);
  });

  it('refuses a __proto__ key 994 levels down, and nothing is polluted', async () => {
    const { url } = await start();
    for (const nest of [objects, arrays]) {
      const answer = await post(
        `${url}/api/plans`,
        `{"version":"1.0","steps":[{"id":"s","capability":"hostile.depth",
          "input":{"nest":${nest(994, '{"__proto__":{"polluted":true}}')}}}]}`,
      );
      assert.equal(answer.status, 400);
      assert.match(String(answer.json?.error), /forbidden "__proto__"/);
    }
    assert.equal((Object.prototype as Record<string, unknown>).polluted, undefined);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    await assertServing(url);
  });

  it('refuses bodies nested deeper than 1,000 levels, up to the 1 MiB limit, and keeps serving', async () => {
    const { url, runtime } = await start();
    const limit = 1024 * 1024;
    for (const body of [
      `{"input":{"nest":${arrays(999, '1')}}}`,
      `{"input":{"nest":${objects(10_000, '1')}}}`,
      `{"input":{"nest":${arrays(10_000, '{"__proto__":{"polluted":true}}')}}}`,
      `{"input":{"nest":${arrays(Math.floor((limit - 64) / 2), '1')}}}`,
      `{"input":{"nest":${objects(Math.floor((limit - 64) / 6), '1')}}}`,
    ]) {
      assert.ok(body.length <= limit, 'under the body limit');
      const answer = await post(`${url}/api/capabilities/hostile.depth/execute`, body);
      assert.equal(answer.status, 400, answer.text.slice(0, 200));
      assert.deepEqual(answer.json, refused);
      assertNoStack(answer);
    }
    assert.deepEqual(await runtime.listJobs(), [], 'nothing was admitted');
    await assertServing(url);
  });

  // Regression: the reference scan of admission copied the input path at every level, which
  // costs memory quadratic in the depth; an input like these (the size of a 1 MiB body)
  // exhausted the heap and killed the process. HTTP now refuses such bodies before parsing, so
  // the library path guards it. The time-out only bounds a hang; it asserts no speed.
  it(
    'admits inputs nested as deep as a 1 MiB body could hold through the library',
    { timeout: 120_000 },
    async () => {
      const runtime = new OperatorRuntime({ store: 'memory' });
      after(() => runtime.close());
      const limit = 1024 * 1024;
      const arrayDepth = Math.floor((limit - 64) / 2);
      const objectDepth = Math.floor((limit - 64) / 6);
      for (const [nest, depth] of [
        [arrays, arrayDepth],
        [objects, objectDepth],
      ] as const) {
        const job = await runtime.executePlan({
          version: '1.0',
          steps: [
            { id: 's', capability: 'hostile.depth', input: { nest: JSON.parse(nest(depth, '1')) } },
          ],
        });
        assert.equal(job.status, 'completed');
        assert.deepEqual(job.result, { depth, leaf: 1 });
      }
    },
  );

  // Regression: each reference keeps its path (and a refused one names it), so thousands of
  // references under a deep or long-keyed container cost their count times their depth; inputs
  // like these stalled the process for minutes. Their paths are now bounded together. The deep
  // one is over the HTTP nesting limit, so it goes through the library.
  it(
    'refuses, without stalling, thousands of references under deep nesting or a huge key',
    { timeout: 120_000 },
    async () => {
      const { url, runtime } = await start();
      const ref = '{"$ref":"steps.f.result"}';
      const many = (count: number) => Array.from({ length: count }, () => ref).join(',');
      const steps = (nest: string) => `[
          {"id":"f","capability":"hostile.echo","input":{"text":"t"}},
          {"id":"s","capability":"hostile.depth","input":{"nest":${nest}}}]`;
      const assertPathsRefused = (issues: readonly { code: string; message: string }[]) => {
        assert.equal(issues.length, 1);
        assert.equal(issues[0]?.code, 'INVALID_PLAN');
        assert.match(String(issues[0]?.message), /paths are longer than 1000000 characters/);
      };
      const deep = steps(`${'['.repeat(200_000)}${many(20_000)}${']'.repeat(200_000)}`);
      const refusedPlan = await runtime
        .executePlan({ version: '1.0', steps: JSON.parse(deep) as ExecutionPlan['steps'] })
        .then(
          () => assert.fail('admitted'),
          (error: unknown) => error,
        );
      assert.ok(isPlanAdmissionError(refusedPlan));
      assertPathsRefused(refusedPlan.issues);
      const body = `{"version":"1.0","steps":${steps(`{"${'k'.repeat(500_000)}":[${many(15_000)}]}`)}}`;
      assert.ok(body.length <= 1024 * 1024, 'under the body limit');
      const answer = await post(`${url}/api/plans`, body);
      assert.equal(answer.status, 400, answer.text.slice(0, 300));
      assertPathsRefused(answer.json?.issues as { code: string; message: string }[]);
      assert.ok(answer.text.length < 10_000, 'the answer does not repeat the paths');
      await assertServing(url);
    },
  );
});

describe('slow-loris clients', () => {
  it('keeps the default deadline of 30 s for headers and for whole requests', async () => {
    const { url } = await start();
    const server = servers.at(-1)?.app.server;
    assert.equal(server?.headersTimeout, 30_000);
    assert.equal(server?.requestTimeout, 30_000);
    await assertServing(url);
  });

  it(
    'cuts off clients that drip their headers byte by byte, while serving everyone else',
    { timeout: 30_000 },
    async () => {
      const { url, port } = await start({ requestTimeoutMs: 1_000 });
      const request =
        'POST /api/plans HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
        `X-Padding: ${'p'.repeat(10_000)}\r\n\r\n`;
      const drippers = Array.from({ length: 10 }, () => {
        const socket = connect(port, '127.0.0.1');
        sockets.push(socket);
        let answer = '';
        let sent = 0;
        socket.setEncoding('utf8');
        socket.on('data', (chunk: string) => (answer += chunk));
        socket.on('error', () => {});
        const drip = setInterval(() => {
          if (sent < request.length && socket.writable) socket.write(request[sent++] as string);
        }, 20);
        const state = { connected: true };
        const closed = new Promise<{ answer: string; sent: number }>((resolve) =>
          socket.on('close', () => {
            clearInterval(drip);
            state.connected = false;
            resolve({ answer, sent });
          }),
        );
        return { state, closed };
      });
      let allClosed = false;
      void Promise.all(drippers.map((dripper) => dripper.closed)).then(() => (allClosed = true));
      // Other clients keep coming until every dripper is gone; note who was served while all of
      // them were still connected.
      const served: { status: number; whileDripping: boolean }[] = [];
      while (!allClosed) {
        const answer = await post(
          `${url}/api/capabilities/hostile.echo/execute`,
          JSON.stringify({ input: { text: `served ${served.length}` } }),
        );
        const whileDripping = drippers.every((dripper) => dripper.state.connected);
        served.push({ status: answer.status, whileDripping });
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      for (const { closed } of drippers) {
        const { answer, sent } = await closed;
        assert.ok(sent < request.length, 'cut off before the headers were complete');
        assert.match(answer, /^(HTTP\/1\.1 408 |$)/, 'a 408, or a bare close');
      }
      assert.ok(
        served.some((answer) => answer.whileDripping),
        'other clients were served while every dripper was connected',
      );
      assert.ok(served.every((answer) => answer.status === 200));
      await assertServing(url);
    },
  );
});

describe('1,000 concurrent plans on the SQLite store', () => {
  it(
    'answers each with the right status and records each admitted job exactly once',
    { timeout: 120_000 },
    async () => {
      const { url, runtime } = await start({}, `sqlite:${join(directory, 'load.db')}`);
      const kinds = [
        {
          name: 'allowed',
          status: 201,
          steps: [
            { id: 'one', capability: 'hostile.echo', input: { text: 'x' } },
            {
              id: 'two',
              capability: 'hostile.echo',
              input: { text: { $ref: 'steps.one.result.text' } },
            },
          ],
          recorded: { status: 'completed', steps: ['completed', 'completed'] },
        },
        {
          name: 'denied',
          status: 403,
          steps: [
            { id: 'one', capability: 'hostile.echo', input: { text: 'x' } },
            { id: 'two', capability: 'hostile.write' },
            { id: 'three', capability: 'hostile.echo', input: { text: 'x' } },
          ],
          recorded: { status: 'failed', steps: ['completed', 'failed', 'skipped'] },
        },
        {
          name: 'failing',
          status: 500,
          steps: [
            { id: 'one', capability: 'hostile.fail' },
            { id: 'two', capability: 'hostile.echo', input: { text: 'x' } },
          ],
          recorded: { status: 'failed', steps: ['failed', 'skipped'] },
        },
        {
          name: 'refused',
          status: 400,
          steps: [
            { id: 'one', capability: 'hostile.echo', input: { text: 'x' } },
            { id: 'one', capability: 'hostile.echo', input: { text: 'x' } },
          ],
          recorded: undefined,
        },
        {
          name: 'unknown',
          status: 404,
          steps: [{ id: 'one', capability: 'hostile.nothing' }],
          recorded: undefined,
        },
      ] as const;
      const answers = await Promise.all(
        Array.from({ length: 1000 }, async (_, index) => {
          const kind = kinds[index % kinds.length] as (typeof kinds)[number];
          const answer = await post(
            `${url}/api/plans`,
            JSON.stringify({ version: '1.0', goal: `load ${index}`, steps: kind.steps }),
          );
          const job = (answer.json?.job ?? answer.json) as Partial<Job> | undefined;
          return { index, kind, status: answer.status, jobId: job?.id };
        }),
      );
      assert.deepEqual(
        answers.filter((answer) => answer.status !== answer.kind.status),
        [],
      );
      const admitted = answers.filter((answer) => answer.kind.recorded !== undefined);
      assert.equal(admitted.length, 600);
      assert.ok(admitted.every((answer) => typeof answer.jobId === 'string'));
      assert.ok(
        answers.every((answer) => answer.kind.recorded !== undefined || answer.jobId === undefined),
        'no job for a refused plan',
      );
      const stored = await runtime.listJobs();
      assert.equal(stored.length, 600, 'no job missing, none twice');
      const byGoal = new Map(stored.map((job) => [job.goal, job]));
      assert.equal(byGoal.size, 600, 'one job per admitted request');
      for (const { index, kind, jobId } of admitted) {
        const job = byGoal.get(`load ${index}`);
        assert.equal(job?.id, jobId);
        assert.equal(job?.status, kind.recorded?.status);
        assert.deepEqual(
          job?.steps.map((step) => step.status),
          kind.recorded?.steps,
        );
        assert.equal(
          job?.events.filter(
            (event) => event.type === 'job.completed' || event.type === 'job.failed',
          ).length,
          1,
        );
      }
      await assertServing(url);
    },
  );
});
