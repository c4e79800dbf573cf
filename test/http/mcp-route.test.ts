// MCP over Streamable HTTP at /mcp (issue 17 item 2): a real SDK client
// (@modelcontextprotocol/client, its Streamable HTTP transport with a bearer header) against the
// server of `warrant serve`. Every tool call runs as the caller the gate authenticated; without
// credentials the route answers 401 and nothing is admitted.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import {
  Client,
  StreamableHTTPClientTransport,
  type CallToolResult,
} from '@modelcontextprotocol/client';
import type { FastifyInstance } from 'fastify';
import { createHttpServer, type HttpServerOptions } from '../../src/http/server.js';
import type { Authenticator } from '../../src/http/auth/index.js';
import { bearerToken } from '../../src/http/auth/index.js';
import type { ExecutionCaller, OperatorRuntime } from '../../src/index.js';
import { createSystemModule } from '../../src/builtins/system-module.js';
import { recordingAuthorizer, register, runtimeWith } from '../support/runtime-fixtures.js';

const CALLERS: Record<string, ExecutionCaller> = {
  'alice-token': { id: 'alice', scopes: ['notes:write'] },
  'bob-token': { id: 'bob', scopes: [] },
};

/** Bearer tokens from the table above; no token: `Bearer`, an unknown one: `invalid_token`. */
const tableAuthenticator: Authenticator = {
  async authenticate(request) {
    const credentials = bearerToken(request.headers);
    if (credentials.kind === 'missing') return { ok: false, challenge: 'Bearer' };
    const caller = credentials.kind === 'token' ? CALLERS[credentials.token] : undefined;
    return caller === undefined
      ? { ok: false, challenge: 'Bearer error="invalid_token"' }
      : { ok: true, caller: Object.freeze(caller) };
  },
};

const started: { app: FastifyInstance; runtime: OperatorRuntime }[] = [];
const clients: Client[] = [];
after(async () => {
  for (const client of clients) await client.close();
  for (const { app, runtime } of started) {
    await app.close();
    await runtime.close();
  }
});

async function serve(options: HttpServerOptions = {}) {
  const authorizer = recordingAuthorizer(({ caller, capability }) =>
    capability.risk === 'read' || caller?.scopes?.includes('notes:write') === true
      ? { decision: 'allow' }
      : { decision: 'deny', reason: `${caller?.id ?? 'nobody'} may not write notes` },
  );
  const runtime = runtimeWith({ store: 'memory', authorizer });
  const runs: string[] = [];
  const [write] = register(runtime, {
    description: 'Writes a note',
    risk: 'write',
    inputSchema: { text: { type: 'string', required: true, description: 'The note' } },
    execute: (execution: unknown) => {
      const { input, context } = execution as {
        input: { text: string };
        context: { caller?: ExecutionCaller };
      };
      runs.push(`${context.caller?.id ?? '?'}: ${input.text}`);
      return { saved: true };
    },
  });
  const app = createHttpServer(runtime, { authenticator: tableAuthenticator, ...options });
  await app.listen({ host: '127.0.0.1', port: 0 });
  started.push({ app, runtime });
  const { port } = app.server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    runtime,
    authorizer,
    runs,
    write: (write as string).replaceAll('.', '_'),
  };
}

/** A client of the 2025 era (`initialize`, the SDK client's default) or of 2026-07-28 ('auto'). */
type Era = 'legacy' | 'auto';

async function connect(url: string, token?: string, era: Era = 'legacy'): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    ...(token !== undefined && { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
  });
  const client = new Client(
    { name: 'mcp-route-test', version: '1.0.0' },
    { versionNegotiation: { mode: era } },
  );
  await client.connect(transport);
  clients.push(client);
  return client;
}

function textOf(result: CallToolResult): string {
  const [block] = result.content;
  return block?.type === 'text' ? block.text : '';
}

describe('MCP over Streamable HTTP at /mcp (issue 17 item 2)', () => {
  for (const era of ['legacy', 'auto'] as const)
    it(`lists tools and runs each call as the authenticated caller (client negotiation: ${era})`, async () => {
      const served = await serve();
      const alice = await connect(served.url, 'alice-token', era);
      const { tools } = await alice.listTools();
      assert.ok(tools.some((tool) => tool.name === served.write));
      assert.equal(served.authorizer.calls.length, 0, 'listing tools authorizes nothing');

      const done = (await alice.callTool({
        name: served.write,
        arguments: { text: 'from alice' },
      })) as CallToolResult;
      assert.equal(done.isError ?? false, false, textOf(done));
      assert.deepEqual(done.structuredContent, { saved: true });
      assert.deepEqual(served.authorizer.calls.at(-1)?.caller, {
        id: 'alice',
        scopes: ['notes:write'],
      });

      const bob = await connect(served.url, 'bob-token', era);
      const denied = (await bob.callTool({
        name: served.write,
        arguments: { text: 'from bob' },
      })) as CallToolResult;
      assert.equal(denied.isError, true);
      assert.match(textOf(denied), /bob may not write notes/);
      assert.deepEqual(served.authorizer.calls.at(-1)?.caller, { id: 'bob', scopes: [] });
      assert.deepEqual(served.runs, ['alice: from alice'], 'the capability ran once, as alice');
      const jobs = await served.runtime.listJobs();
      assert.deepEqual(jobs.map((job) => job.status).sort(), ['completed', 'failed']);
    });

  it('serves warrant_job_status with an authentication mode, reading through the read policy', async () => {
    const served = await serve();
    const alice = await connect(served.url, 'alice-token');
    const { tools } = await alice.listTools();
    // The plan tools too, callers being told apart (docs/api.md, "new McpAdapter").
    assert.deepEqual(
      tools.slice(-3).map((tool) => tool.name),
      ['warrant_job_status', 'warrant_preview_plan', 'warrant_submit_plan'],
    );
    const done = (await alice.callTool({
      name: served.write,
      arguments: { text: 'mine' },
    })) as CallToolResult;
    assert.equal(done.isError ?? false, false, textOf(done));
    const [job] = await served.runtime.listJobs();
    const status = (jobId: string) => ({ name: 'warrant_job_status', arguments: { jobId } });
    const own = (await alice.callTool(status(job?.id as string))) as CallToolResult;
    assert.deepEqual((own.structuredContent as { status?: string; result?: unknown }).result, {
      saved: true,
    });
    // Bob neither submitted it nor audits: the job does not exist for him.
    const bob = await connect(served.url, 'bob-token');
    const hidden = (await bob.callTool(status(job?.id as string))) as CallToolResult;
    assert.equal(hidden.isError, true);
    assert.equal(textOf(hidden), `Job ${JSON.stringify(job?.id)} not found`);
    assert.equal(hidden.structuredContent, undefined);
  });

  it('answers 401 with the challenge without credentials or with a bad token, and admits nothing', async () => {
    const served = await serve();
    const initialize = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: served.write, arguments: { text: 'sneaked' } },
    });
    for (const [authorization, challenge] of [
      [undefined, 'Bearer'],
      ['Bearer nope', 'Bearer error="invalid_token"'],
      ['Basic YWxpY2U6eA==', 'Bearer'],
    ] as const) {
      for (const method of ['POST', 'GET', 'DELETE']) {
        const response = await fetch(served.url, {
          method,
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            ...(authorization !== undefined && { authorization }),
          },
          ...(method === 'POST' && { body: initialize }),
        });
        assert.equal(response.status, 401, `${method} ${String(authorization)}`);
        assert.equal(response.headers.get('www-authenticate'), challenge);
        assert.deepEqual(await response.json(), { error: 'Unauthorized' });
      }
    }
    await assert.rejects(connect(served.url), 'the SDK client is refused without a token');
    await assert.rejects(connect(served.url, 'wrong'));
    assert.equal(served.authorizer.calls.length, 0);
    assert.deepEqual(served.runs, []);
    assert.deepEqual(await served.runtime.listJobs(), [], 'no job');
  });

  it('applies the server body limit and JSON depth check to /mcp', async () => {
    const served = await serve({ bodyLimit: 4096 });
    const headers = {
      authorization: 'Bearer alice-token',
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    };
    const tooLarge = await fetch(served.url, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: served.write, arguments: { text: 'x'.repeat(5000) } },
      }),
    });
    assert.equal(tooLarge.status, 413);
    const deep = await fetch(served.url, {
      method: 'POST',
      headers,
      body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":${'['.repeat(1001)}${']'.repeat(1001)}}}}`,
    });
    assert.equal(deep.status, 400);
    assert.match(((await deep.json()) as { error: string }).error, /deeper than 1000/);
    const notJson = await fetch(served.url, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'text/plain' },
      body: '{}',
    });
    assert.equal(notJson.status, 415);
    assert.deepEqual(served.runs, []);
    assert.deepEqual(await served.runtime.listJobs(), []);
  });

  it('without a mode, serves /mcp on loopback as { id: "http" }', async () => {
    const authorizer = recordingAuthorizer();
    const runtime = runtimeWith({ store: 'memory', authorizer });
    const [read] = register(runtime, { execute: () => ({ ok: true }) });
    const app = createHttpServer(runtime);
    await app.listen({ host: '127.0.0.1', port: 0 });
    started.push({ app, runtime });
    const { port } = app.server.address() as { port: number };
    const client = await connect(`http://127.0.0.1:${port}/mcp`);
    const result = (await client.callTool({
      name: (read as string).replaceAll('.', '_'),
      arguments: {},
    })) as CallToolResult;
    assert.equal(result.isError ?? false, false, textOf(result));
    assert.deepEqual(authorizer.calls.at(-1)?.caller, { id: 'http' });
  });
});

describe('/mcp and the built-in capabilities', () => {
  // The inventory is process-global: system.* is registered once, for this file.
  runtimeWith().use(createSystemModule());

  async function toolNames(options: HttpServerOptions): Promise<string[]> {
    const runtime = runtimeWith({ store: 'memory' });
    const app = createHttpServer(runtime, options);
    await app.listen({ host: '127.0.0.1', port: 0 });
    started.push({ app, runtime });
    const { port } = app.server.address() as { port: number };
    const client = await connect(`http://127.0.0.1:${port}/mcp`);
    const { tools } = await client.listTools();
    return tools.map((tool) => tool.name);
  }

  it('serves them only with mcpBuiltins (warrant serve --builtins), and system.status never', async () => {
    const plain = await toolNames({});
    // No authentication mode: every client is `http`, so no job or plan tool either.
    assert.equal(plain.includes('warrant_job_status'), false);
    assert.equal(plain.includes('warrant_submit_plan'), false);
    assert.equal(plain.includes('warrant_preview_plan'), false);
    assert.equal(
      plain.some((name) => name.startsWith('system')),
      false,
    );
    const all = await toolNames({ mcpBuiltins: true });
    assert.ok(all.includes('system_echo'));
    assert.equal(all.includes('system_status'), false);
  });
});
