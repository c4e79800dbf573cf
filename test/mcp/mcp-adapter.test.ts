// McpAdapter through a real MCP client (@modelcontextprotocol/client) over the SDK's in-memory
// transport pair: tools/list and tools/call as a client sees them, and what the runtime recorded.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { Client, type CallToolResult } from '@modelcontextprotocol/client';
import { InMemoryTransport, type AuthInfo } from '@modelcontextprotocol/server';
import { z } from 'zod';
import {
  McpAdapter,
  createCapability,
  type StepApprovalRequest,
  type CapabilityAuthorizationContext,
  type ExecutionCaller,
  type McpAdapterOptions,
  type OperatorRuntime,
} from '../../src/index.js';
import {
  recordEvents,
  recordingAuthorizer,
  register,
  runtimeWith,
  uniqueName,
} from '../support/runtime-fixtures.js';

interface Connected {
  readonly client: Client;
  close(): Promise<void>;
}

const open: Connected[] = [];
after(async () => {
  for (const connection of open) await connection.close();
});

/** Connects a real client to `adapter.server`; `authInfo` is attached to every client message. */
async function connect(adapter: McpAdapter, authInfo?: AuthInfo): Promise<Connected> {
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  if (authInfo !== undefined) {
    const send = clientTransport.send.bind(clientTransport);
    clientTransport.send = (message, options) => send(message, { ...options, authInfo });
  }
  await adapter.connect(serverTransport);
  const client = new Client({ name: 'warrant-test-client', version: '1.0.0' });
  await client.connect(clientTransport);
  const connected = {
    client,
    close: async () => {
      await client.close();
      await adapter.close();
    },
  };
  open.push(connected);
  return connected;
}

/** The default tool name of a capability: the test names hold dots, which become `_`. */
function toolOf(capability: string): string {
  return capability.replaceAll('.', '_');
}

function textOf(result: CallToolResult): string {
  assert.equal(result.content.length, 1);
  const [block] = result.content;
  assert.equal(block?.type, 'text');
  return (block as { text: string }).text;
}

// Counts every capability invocation of this file.
const invoked: string[] = [];
const counting = (label: string, result: unknown) => () => {
  invoked.push(label);
  return result;
};

describe('new McpAdapter(runtime, options?)', () => {
  const runtime = runtimeWith({ store: 'memory' });
  const [lookup, send, wipe, bare] = register(
    runtime,
    {
      description: 'Finds a user by id',
      inputSchema: {
        id: { type: 'string', required: true, description: 'User id' },
        verbose: { type: 'boolean', required: false, description: 'Include details' },
      },
      execute: counting('lookup', { email: 'ada@example.com' }),
    },
    {
      description: 'Sends a message',
      risk: 'write',
      inputSchema: {
        to: { type: 'string', required: true, description: 'Recipient' },
        attempts: { type: 'number', required: false, description: 'Retries' },
        tags: { type: 'array', required: false, description: 'Labels' },
        headers: { type: 'object', required: false, description: 'Extra headers' },
      },
      execute: counting('send', { sent: true }),
    },
    {
      description: 'Deletes everything',
      risk: 'destructive',
      execute: counting('wipe', { wiped: true }),
    },
    { description: 'No fields', execute: counting('bare', 'ok') },
  ) as [string, string, string, string];

  it('lists one tool per registered capability, in registration order, with name and description', async () => {
    const { client } = await connect(new McpAdapter(runtime));
    const { tools } = await client.listTools();
    assert.deepEqual(
      tools.map((tool) => [tool.name, tool.description]),
      runtime
        .listCapabilities()
        .map((descriptor) => [toolOf(descriptor.name), descriptor.description]),
    );
  });

  it('derives each input schema from the field contract: types, descriptions and the required list', async () => {
    const { client } = await connect(new McpAdapter(runtime));
    const { tools } = await client.listTools();
    const schemaOf = (name: string) =>
      tools.find((tool) => tool.name === toolOf(name))?.inputSchema;
    assert.deepEqual(schemaOf(lookup), {
      type: 'object',
      properties: {
        id: { type: 'string', description: 'User id' },
        verbose: { type: 'boolean', description: 'Include details' },
      },
      required: ['id'],
    });
    assert.deepEqual(schemaOf(send), {
      type: 'object',
      properties: {
        to: { type: 'string', description: 'Recipient' },
        attempts: { type: 'number', description: 'Retries' },
        tags: { type: 'array', description: 'Labels' },
        headers: { type: 'object', description: 'Extra headers' },
      },
      required: ['to'],
    });
    assert.deepEqual(schemaOf(bare), { type: 'object', properties: {} });
    for (const descriptor of runtime.listCapabilities()) {
      const required = Object.entries(descriptor.inputSchema)
        .filter(([, field]) => field.required)
        .map(([key]) => key);
      assert.deepEqual(schemaOf(descriptor.name)?.required ?? [], required, descriptor.name);
    }
  });

  it('derives MCP annotations from risk: readOnlyHint for read, destructiveHint for destructive', async () => {
    const { client } = await connect(new McpAdapter(runtime));
    const { tools } = await client.listTools();
    const annotationsOf = (name: string) =>
      tools.find((tool) => tool.name === toolOf(name))?.annotations;
    assert.deepEqual(annotationsOf(lookup), { readOnlyHint: true });
    assert.deepEqual(annotationsOf(send), { readOnlyHint: false, destructiveHint: false });
    assert.deepEqual(annotationsOf(wipe), { readOnlyHint: false, destructiveHint: true });
  });

  it('invokes no authorizer and no capability, publishes no event and creates no job when constructed and listed', async () => {
    const authorizer = recordingAuthorizer();
    const watched = runtimeWith({ store: 'memory', authorizer });
    const events = recordEvents(watched);
    const before = invoked.length;
    const { client } = await connect(new McpAdapter(watched));
    await client.listTools();
    await client.listTools();
    assert.equal(authorizer.calls.length, 0);
    assert.equal(invoked.length, before);
    assert.deepEqual(events, []);
    assert.deepEqual(await watched.listJobs(), []);
  });

  it('lists the inventory as it was at construction', async () => {
    const adapter = new McpAdapter(runtime);
    const [later] = register(runtime, { execute: counting('later', 1) }) as [string];
    const { client } = await connect(adapter);
    const { tools } = await client.listTools();
    assert.equal(
      tools.some((tool) => tool.name === toolOf(later)),
      false,
    );
    assert.equal(tools.length, runtime.listCapabilities().length - 1);
  });

  it('throws MCP_ADAPTER_OPTIONS_INVALID for something that is not a runtime, or a malformed option', () => {
    const cases: [unknown, unknown, RegExp][] = [
      [undefined, {}, /McpAdapter needs an OperatorRuntime, got undefined/],
      [{ listCapabilities: () => [] }, {}, /McpAdapter needs an OperatorRuntime, got an object/],
      [runtime, null, /McpAdapter options must be an object, got null/],
      [runtime, { resolveCaller: 'header' }, /options.resolveCaller must be a function/],
      [runtime, { onInternalError: 1 }, /options.onInternalError must be a function/],
      [runtime, { caller: 'ops' }, /options.caller must be an object/],
      [runtime, { caller: { id: 7 } }, /options.caller.id must be a non-empty string/],
      [runtime, { caller: { id: 'a', tenant: 1 } }, /options.caller.tenant must be a string/],
      [
        runtime,
        { caller: { id: 'a', actor: { id: 'b', actor: { id: 'a' } } } },
        /options.caller.actor.actor.id "a" appears twice in the chain/,
      ],
      [
        runtime,
        { caller: { id: 'a', tenant: 't', actor: { id: 'b', tenant: 'u' } } },
        /options.caller.actor.tenant must be the caller's tenant/,
      ],
      [runtime, { name: 7 }, /options.name must be a string, got 7/],
      [runtime, { jobTools: 'yes' }, /options.jobTools must be a boolean, got "yes"/],
      [runtime, { waitMs: -1 }, /options.waitMs must be a non-negative integer, got -1/],
      [runtime, { waitMs: 1.5 }, /options.waitMs must be a non-negative integer, got 1.5/],
      [runtime, { approveFlags: '--fs-root' }, /options.approveFlags must be an array/],
      [runtime, { approveFlags: [''] }, /options.approveFlags must be an array/],
      [runtime, { approveFlags: [1] }, /options.approveFlags must be an array/],
    ];
    for (const [candidate, options, message] of cases) {
      assert.throws(
        () => new McpAdapter(candidate as OperatorRuntime, options as McpAdapterOptions),
        (error: Error & { code?: string }) => {
          assert.ok(error instanceof TypeError);
          assert.equal(error.code, 'MCP_ADAPTER_OPTIONS_INVALID');
          assert.match(error.message, message);
          return true;
        },
      );
    }
  });
});

describe('McpAdapter tools/call', () => {
  const runtime = runtimeWith({ store: 'memory' });
  const events = recordEvents(runtime);
  const [lookup, send, wipe, explode, list, huge, nothing] = register(
    runtime,
    {
      version: '3.1.0',
      description: 'Finds a user by id',
      inputSchema: { id: { type: 'string', required: true, description: 'User id' } },
      execute: ({ input }) => ({ id: (input as { id: string }).id, email: 'ada@example.com' }),
    },
    {
      description: 'Sends a message',
      risk: 'write',
      inputSchema: { to: { type: 'string', required: true, description: 'Recipient' } },
      execute: counting('send (denied)', { sent: true }),
    },
    { risk: 'destructive', execute: counting('wipe (denied)', { wiped: true }) },
    {
      execute: () => {
        throw new Error('upstream said no');
      },
    },
    { execute: () => ['a', 'b'] },
    { execute: () => ({ count: 12345678901234567890n }) },
    { execute: () => undefined },
  ) as [string, string, string, string, string, string, string];
  const adapter = new McpAdapter(runtime, { caller: { id: 'ide-user' } });
  const ready = connect(adapter);

  it('runs a read tool as a one-step plan and answers with JSON text and structuredContent', async () => {
    const { client } = await ready;
    const result = await client.callTool({ name: toolOf(lookup), arguments: { id: 'ada' } });
    assert.equal(result.isError, undefined);
    assert.deepEqual(JSON.parse(textOf(result)), { id: 'ada', email: 'ada@example.com' });
    assert.deepEqual(result.structuredContent, { id: 'ada', email: 'ada@example.com' });
    const [job] = await runtime.listJobs({ capability: lookup });
    assert.equal(job?.status, 'completed');
    assert.equal(job?.steps.length, 1);
    assert.equal(job?.steps[0]?.capabilityVersion, '3.1.0', 'pinned to the version listed');
  });

  it('denies a write tool under the default policy with an isError result and does not invoke it', async () => {
    const { client } = await ready;
    const result = await client.callTool({ name: toolOf(send), arguments: { to: 'bob' } });
    assert.equal(result.isError, true);
    assert.equal(textOf(result), 'Write capability requires explicit approval.');
    assert.equal(result.structuredContent, undefined);
    assert.equal(invoked.includes('send (denied)'), false);
    const denied = events.filter((event) => event.type === 'capability.denied');
    assert.equal(denied.at(-1)?.data?.capability, send);
  });

  it('denies a destructive tool under the default policy', async () => {
    const { client } = await ready;
    const result = await client.callTool({ name: toolOf(wipe), arguments: {} });
    assert.equal(result.isError, true);
    assert.equal(textOf(result), 'Destructive capability requires explicit approval.');
    assert.equal(invoked.includes('wipe (denied)'), false);
  });

  it('answers invalid arguments with the admission message and creates no job', async () => {
    const { client } = await ready;
    const before = (await runtime.listJobs()).length;
    const missing = await client.callTool({ name: toolOf(lookup), arguments: {} });
    assert.equal(missing.isError, true);
    assert.equal(
      textOf(missing),
      'Execution plan failed validation: steps[0] "call": input.id is required',
    );
    const mistyped = await client.callTool({ name: toolOf(lookup), arguments: { id: 42 } });
    assert.equal(mistyped.isError, true);
    assert.match(
      textOf(mistyped),
      /^Execution plan failed validation: .*input\.id must be a string/,
    );
    assert.equal((await runtime.listJobs()).length, before);
  });

  it('answers a capability that throws with its message, without a stack trace', async () => {
    const { client } = await ready;
    const result = await client.callTool({ name: toolOf(explode), arguments: {} });
    assert.equal(result.isError, true);
    assert.equal(textOf(result), 'upstream said no');
    const [job] = await runtime.listJobs({ capability: explode });
    assert.equal(job?.status, 'failed');
  });

  it('sends structuredContent only for plain-object results, and JSON text for any result', async () => {
    const { client } = await ready;
    const array = await client.callTool({ name: toolOf(list), arguments: {} });
    assert.deepEqual(JSON.parse(textOf(array)), ['a', 'b']);
    assert.equal(array.structuredContent, undefined);
    const bigint = await client.callTool({ name: toolOf(huge), arguments: {} });
    assert.deepEqual(bigint.structuredContent, { count: '12345678901234567890' });
    const empty = await client.callTool({ name: toolOf(nothing), arguments: {} });
    assert.equal(textOf(empty), 'null');
    assert.equal(empty.isError, undefined);
  });

  it('rejects a call to an unknown tool with a protocol error, as the SDK does', async () => {
    const { client } = await ready;
    await assert.rejects(client.callTool({ name: 'no.such.tool', arguments: {} }), {
      message: /Tool no\.such\.tool not found/,
    });
  });
});

describe('McpAdapter callers', () => {
  const authorizer = recordingAuthorizer();
  const seen: readonly CapabilityAuthorizationContext[] = authorizer.calls;
  const runtime = runtimeWith({ store: 'memory', authorizer });
  const [tool] = register(runtime, { risk: 'write', execute: () => ({ done: true }) }) as [string];

  it('passes options.caller to the authorizer of every call', async () => {
    const { client } = await connect(new McpAdapter(runtime, { caller: { id: 'ide-user' } }));
    const result = await client.callTool({ name: toolOf(tool), arguments: {} });
    assert.deepEqual(result.structuredContent, { done: true });
    assert.equal(seen.at(-1)?.caller?.id, 'ide-user');
  });

  it('resolves the caller per request from the transport auth info when resolveCaller is given', async () => {
    const requests: unknown[] = [];
    const adapter = new McpAdapter(runtime, {
      caller: { id: 'ignored' },
      resolveCaller: ({ authInfo, tool: name }) => {
        requests.push({ clientId: authInfo?.clientId, name });
        return { id: authInfo?.clientId, scopes: authInfo?.scopes } as ExecutionCaller;
      },
    });
    const { client } = await connect(adapter, {
      token: 'secret',
      clientId: 'agent-7',
      scopes: ['notes:write'],
    });
    await client.callTool({ name: toolOf(tool), arguments: {} });
    assert.deepEqual(requests, [{ clientId: 'agent-7', name: toolOf(tool) }]);
    assert.deepEqual(seen.at(-1)?.caller, { id: 'agent-7', scopes: ['notes:write'] });
  });

  it('passes an actor chain from resolveCaller, and refuses a hostile one with CALLER_INVALID, nothing admitted (issue 50)', async () => {
    let answer: ExecutionCaller = {
      id: 'ada',
      scopes: ['notes:write'],
      actor: { id: 'agent-7', scopes: ['notes:write'] },
    };
    const reported: unknown[] = [];
    const { client } = await connect(
      new McpAdapter(runtime, {
        resolveCaller: () => answer,
        onInternalError: (error) => reported.push(error),
      }),
    );
    await client.callTool({ name: toolOf(tool), arguments: {} });
    assert.deepEqual(seen.at(-1)?.caller, answer);
    const calls = authorizer.calls.length;
    const jobs = (await runtime.listJobs()).length;
    for (const hostile of [
      {
        id: 'ada',
        actor: {
          id: 'a',
          actor: { id: 'b', actor: { id: 'c', actor: { id: 'd', actor: { id: 'e' } } } },
        },
      },
      { id: 'ada', actor: { id: 'agent-7', actor: { id: 'ada' } } },
      { id: 'ada', tenant: 't', actor: { id: 'agent-7', tenant: 'u' } },
      { id: 'ada', scopes: ['x'], actor: { id: '' } },
    ]) {
      answer = hostile;
      const result = await client.callTool({ name: toolOf(tool), arguments: {} });
      assert.equal(result.isError, true);
      assert.match(textOf(result), /^CALLER_INVALID: options\.caller\./);
    }
    assert.equal(authorizer.calls.length, calls, 'no authorizer call');
    assert.equal((await runtime.listJobs()).length, jobs, 'no job');
    assert.equal(reported.length, 4, 'the host is told: its resolver answered a refused chain');
  });

  it('answers "Internal error" (no inner message) when resolveCaller throws, and tells onInternalError', async () => {
    const reported: [unknown, string][] = [];
    const calls = authorizer.calls.length;
    const adapter = new McpAdapter(runtime, {
      resolveCaller: () => {
        throw new Error('token store password=hunter2 unreachable');
      },
      onInternalError: (error, name) => reported.push([error, name]),
    });
    const { client } = await connect(adapter);
    const result = await client.callTool({ name: toolOf(tool), arguments: {} });
    assert.equal(result.isError, true);
    assert.equal(textOf(result), 'Internal error');
    assert.equal(reported.length, 1);
    assert.equal((reported[0]?.[0] as Error).message, 'token store password=hunter2 unreachable');
    assert.equal(reported[0]?.[1], toolOf(tool));
    assert.equal(authorizer.calls.length, calls);
  });

  it('answers "Internal error" once the runtime is closed', async () => {
    const closing = runtimeWith({ store: 'memory' });
    const adapter = new McpAdapter(closing);
    const { client } = await connect(adapter);
    await closing.close();
    const result = await client.callTool({ name: toolOf(tool), arguments: {} });
    assert.equal(result.isError, true);
    assert.equal(textOf(result), 'Internal error');
  });
});

describe('McpAdapter with approvals', () => {
  it('answers a tool call that stops for approval with isError naming the job and step', async () => {
    const { OperatorRuntime } = await import('../../src/index.js');
    const runtime = new OperatorRuntime({ approvals: { approver: { canApprove: () => true } } });
    let wrote = 0;
    const [tool] = register(runtime, {
      risk: 'write',
      execute: () => {
        wrote += 1;
        return { ok: true };
      },
    }) as [string];
    const { client } = await connect(new McpAdapter(runtime));
    const result = (await client.callTool({ name: toolOf(tool), arguments: {} })) as CallToolResult;
    assert.equal(result.isError, true);
    const [request] = (await runtime.listApprovals()) as StepApprovalRequest[];
    assert.ok(
      textOf(result).startsWith(
        `Awaiting approval: job ${request?.jobId}, step call. Nothing ran yet: an approver decides it`,
      ),
      textOf(result),
    );
    assert.equal(wrote, 0);
    await runtime.close();
  });

  it('names the approve command with approveFlags, each word quoted for the shell', async () => {
    const { OperatorRuntime } = await import('../../src/index.js');
    const runtime = new OperatorRuntime({ approvals: { approver: { canApprove: () => true } } });
    const [tool] = register(runtime, { risk: 'write', execute: () => ({ ok: true }) }) as [string];
    const adapter = new McpAdapter(runtime, {
      approveFlags: ['--store', 'sqlite:jobs.db', '--fs-root', "/tmp/a dir's"],
    });
    const { client } = await connect(adapter);
    const result = (await client.callTool({ name: toolOf(tool), arguments: {} })) as CallToolResult;
    const [request] = (await runtime.listApprovals()) as StepApprovalRequest[];
    assert.ok(request !== undefined);
    assert.ok(
      textOf(result).includes(
        `(warrant approvals approve ${request.jobId} call --digest ${request.inputDigest} --store sqlite:jobs.db --fs-root '/tmp/a dir'\\''s', POST`,
      ),
      textOf(result),
    );
    await runtime.close();
  });

  it('answers structuredContent { jobId, stepId, status, inputDigest } naming the request, even for a tool with an output schema', async () => {
    const { OperatorRuntime } = await import('../../src/index.js');
    const runtime = new OperatorRuntime({ approvals: { approver: { canApprove: () => true } } });
    const [tool] = register(runtime, {
      risk: 'write',
      outputSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
      execute: () => ({ ok: true }),
    }) as [string];
    const { client } = await connect(new McpAdapter(runtime, { caller: { id: 'ide-user' } }));
    await client.listTools(); // the client now checks results against the output schema
    const result = (await client.callTool({
      name: toolOf(tool),
      arguments: {},
    })) as CallToolResult;
    const [request] = (await runtime.listApprovals()) as StepApprovalRequest[];
    assert.equal(result.isError, true);
    assert.deepEqual(result.structuredContent, {
      jobId: request?.jobId,
      stepId: 'call',
      status: 'awaiting_approval',
      inputDigest: request?.inputDigest,
    });
    await runtime.close();
  });

  it('answers a retried call (same tool, arguments and caller) with the pending request, not a new one', async () => {
    const { OperatorRuntime } = await import('../../src/index.js');
    const runtime = new OperatorRuntime({ approvals: { approver: { canApprove: () => true } } });
    const [tool] = register(runtime, { risk: 'write', execute: () => ({ ok: true }) }) as [string];
    const { client } = await connect(new McpAdapter(runtime, { caller: { id: 'ide-user' } }));
    const call = (args: Record<string, unknown>) =>
      client.callTool({ name: toolOf(tool), arguments: args }) as Promise<CallToolResult>;
    const first = await call({ to: 'bob', body: { a: 1, b: 2 } });
    // The same arguments, keys in another order: the same canonical call.
    const again = await call({ body: { b: 2, a: 1 }, to: 'bob' });
    assert.deepEqual(again.structuredContent, first.structuredContent);
    assert.equal((await runtime.listApprovals()).length, 1);
    assert.equal((await runtime.listJobs()).length, 1);
    // Other arguments are another call.
    await call({ to: 'carol' });
    assert.equal((await runtime.listApprovals()).length, 2);
    // Once its request is decided, the same call asks again.
    const request = (await runtime.listApprovals()).find(
      (pending) => pending.jobId === (first.structuredContent as { jobId: string }).jobId,
    ) as StepApprovalRequest;
    await runtime.decideApproval({
      jobId: request.jobId,
      stepId: request.stepId,
      inputDigest: request.inputDigest,
      approver: { id: 'lead' },
      decision: 'reject',
    });
    const later = await call({ to: 'bob', body: { a: 1, b: 2 } });
    assert.notEqual(
      (later.structuredContent as { jobId: string }).jobId,
      (first.structuredContent as { jobId: string }).jobId,
    );
    assert.equal((await runtime.listJobs()).length, 3);
    await runtime.close();
  });

  it('answers concurrent identical calls with one request', async () => {
    const { OperatorRuntime } = await import('../../src/index.js');
    const runtime = new OperatorRuntime({ approvals: { approver: { canApprove: () => true } } });
    const [tool] = register(runtime, { risk: 'write', execute: () => ({ ok: true }) }) as [string];
    const { client } = await connect(new McpAdapter(runtime, { caller: { id: 'ide-user' } }));
    const results = (await Promise.all(
      [1, 2, 3].map(() => client.callTool({ name: toolOf(tool), arguments: { n: 1 } })),
    )) as CallToolResult[];
    assert.equal(
      new Set(results.map((result) => JSON.stringify(result.structuredContent))).size,
      1,
    );
    assert.equal((await runtime.listApprovals()).length, 1);
    await runtime.close();
  });

  it('never answers another caller, or a caller without an id, with a pending request', async () => {
    const { OperatorRuntime } = await import('../../src/index.js');
    const runtime = new OperatorRuntime({ approvals: { approver: { canApprove: () => true } } });
    const [tool] = register(runtime, { risk: 'write', execute: () => ({ ok: true }) }) as [string];
    let caller: ExecutionCaller | undefined = { id: 'ada', tenant: 'a' };
    const { client } = await connect(new McpAdapter(runtime, { resolveCaller: () => caller }));
    const call = () => client.callTool({ name: toolOf(tool), arguments: {} });
    await call();
    caller = { id: 'ada', tenant: 'b' };
    await call();
    caller = { id: 'bob', tenant: 'a' };
    await call();
    caller = undefined;
    await call();
    await call();
    assert.equal((await runtime.listApprovals()).length, 5);
    await runtime.close();
  });
});

describe('McpAdapter with waitMs', () => {
  it('submits each call and answers a call still executing or queued with its job id and status', async () => {
    const { OperatorRuntime } = await import('../../src/index.js');
    const runtime = new OperatorRuntime({ queue: { concurrency: 1 } });
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const [slow, quick] = register(
      runtime,
      { execute: async () => (await gate, { done: true }) },
      { execute: () => ({ quick: true }) },
    ) as [string, string];
    const { client } = await connect(
      new McpAdapter(runtime, { caller: { id: 'ide-user' }, waitMs: 30 }),
    );
    const running = (await client.callTool({
      name: toolOf(slow),
      arguments: {},
    })) as CallToolResult;
    const queued = (await client.callTool({
      name: toolOf(quick),
      arguments: {},
    })) as CallToolResult;
    const runningId = (running.structuredContent as { jobId: string }).jobId;
    const queuedId = (queued.structuredContent as { jobId: string }).jobId;
    assert.deepEqual(running.structuredContent, { jobId: runningId, status: 'executing' });
    assert.equal(running.isError, true);
    assert.equal(textOf(running), `Job ${runningId} is executing`);
    assert.deepEqual(queued.structuredContent, { jobId: queuedId, status: 'queued' });
    assert.equal((await runtime.getJob(queuedId))?.status, 'queued');
    release();
    assert.equal((await runtime.waitForJob(queuedId, { timeoutMs: 5000 }))?.status, 'completed');
    assert.equal((await runtime.getJob(runningId))?.status, 'completed');
    // A call that ends within waitMs answers its result as before.
    const done = await client.callTool({ name: toolOf(quick), arguments: {} });
    assert.deepEqual(done.structuredContent, { quick: true });
    await runtime.close();
  });
});

describe('McpAdapter output schemas', () => {
  const runtime = runtimeWith({ store: 'memory' });
  const objectSchema = {
    type: 'object',
    properties: { total: { type: 'number' } },
    required: ['total'],
  };
  const [typed, listed, broken, untyped] = register(
    runtime,
    { outputSchema: objectSchema, execute: () => ({ total: 3 }) },
    { outputSchema: { type: 'array', items: { type: 'string' } }, execute: () => ['a'] },
    { outputSchema: objectSchema, execute: () => ['not', 'an', 'object'] },
    { execute: () => ({ total: 1 }) },
  ) as [string, string, string, string];

  it('publishes an object output schema and answers with structuredContent', async () => {
    const { client } = await connect(new McpAdapter(runtime));
    const { tools } = await client.listTools();
    const schemaOf = (name: string) =>
      tools.find((tool) => tool.name === toolOf(name))?.outputSchema;
    assert.deepEqual(schemaOf(typed), objectSchema);
    // MCP's structuredContent is an object: a schema with another root is not published.
    assert.equal(schemaOf(listed), undefined);
    assert.equal(schemaOf(untyped), undefined);
    const result = await client.callTool({ name: toolOf(typed), arguments: {} });
    assert.equal(result.isError, undefined);
    assert.deepEqual(result.structuredContent, { total: 3 });
  });

  it('answers isError when a result is not the object its output schema promises', async () => {
    const { client } = await connect(new McpAdapter(runtime));
    const result = await client.callTool({ name: toolOf(broken), arguments: {} });
    assert.equal(result.isError, true);
    assert.equal(
      textOf(result),
      'The result is not an object, as the output schema of the tool requires',
    );
  });

  it('keeps a detached copy of the output schema', () => {
    const schema = { type: 'object', properties: {} as Record<string, unknown> };
    const [name] = register(runtime, { outputSchema: schema, execute: () => ({}) }) as [string];
    schema.properties.late = { type: 'string' };
    assert.deepEqual(runtime.describeCapability(name)?.outputSchema, {
      type: 'object',
      properties: {},
    });
    const described = runtime.describeCapability(name);
    (described?.outputSchema as { type: string }).type = 'changed';
    assert.equal(runtime.describeCapability(name)?.outputSchema?.type, 'object');
  });

  it('refuses an output schema that is not a plain JSON object: CAPABILITY_DEFINITION_INVALID', () => {
    const cyclic: Record<string, unknown> = { type: 'object' };
    cyclic.self = cyclic;
    const cases: [unknown, RegExp][] = [
      [[{ type: 'object' }], /outputSchema must be a plain object \(JSON Schema\), got an array/],
      [new Map(), /outputSchema must be a plain object/],
      ['object', /outputSchema must be a plain object/],
      [cyclic, /outputSchema must be JSON data/],
    ];
    for (const [outputSchema, message] of cases) {
      assert.throws(
        () =>
          createCapability({
            name: uniqueName('bad'),
            version: '1.0.0',
            description: 'bad schema',
            risk: 'read',
            outputSchema: outputSchema as Record<string, unknown>,
            execute: () => ({}),
          }),
        (error: Error & { code?: string }) => {
          assert.equal(error.code, 'CAPABILITY_DEFINITION_INVALID');
          assert.match(error.message, message);
          return true;
        },
      );
    }
  });

  it('advertises tools without listChanged: the list is fixed', async () => {
    const { client } = await connect(new McpAdapter(runtime));
    assert.deepEqual(client.getServerCapabilities()?.tools, {});
  });
});

describe('McpAdapter input schemas', () => {
  const runtime = runtimeWith({ store: 'memory' });
  const [zodTyped, fieldTyped] = register(
    runtime,
    {
      inputSchema: z.object({ id: z.string().min(3), tags: z.array(z.string()).optional() }),
      execute: ({ input }) => input,
    },
    {
      inputSchema: { id: { type: 'string', required: true, description: 'the id' } },
      execute: ({ input }) => input,
    },
  ) as [string, string];

  it("publishes a Standard Schema's full JSON Schema, and the field record's otherwise", async () => {
    const { client } = await connect(new McpAdapter(runtime));
    const { tools } = await client.listTools();
    const schemaOf = (name: string) =>
      tools.find((tool) => tool.name === toolOf(name))?.inputSchema as Record<string, unknown>;
    const zodSchema = schemaOf(zodTyped);
    assert.equal(zodSchema.type, 'object');
    // What the field-record view cannot say: the length bound and the array type survive.
    assert.deepEqual((zodSchema.properties as Record<string, unknown>).id, {
      type: 'string',
      minLength: 3,
    });
    assert.equal(
      ((zodSchema.properties as Record<string, { type?: string }>).tags ?? {}).type,
      'array',
    );
    assert.deepEqual(zodSchema.required, ['id']);
    assert.deepEqual(schemaOf(fieldTyped), {
      type: 'object',
      properties: { id: { type: 'string', description: 'the id' } },
      required: ['id'],
    });
    const refused = await client.callTool({ name: toolOf(zodTyped), arguments: { id: 'ab' } });
    assert.equal(refused.isError, true);
  });
});
