// McpAdapter tool names: [A-Za-z0-9_-] only, collisions refused when the adapter is built, and
// options.toolName. A file of its own: the inventory is process-global, and the colliding pair
// registered here would stop every other adapter of the process.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/client';
import { InMemoryTransport } from '@modelcontextprotocol/server';
import { McpAdapter, createCapability, type CapabilityDescriptor } from '../../src/index.js';
import { register, runtimeWith, uniqueName } from '../support/runtime-fixtures.js';

const open: (() => Promise<void>)[] = [];
after(async () => {
  for (const close of open) await close();
});

async function connect(adapter: McpAdapter): Promise<{ client: Client }> {
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  await adapter.connect(serverTransport);
  const client = new Client({ name: 'tool-names', version: '1.0.0' });
  await client.connect(clientTransport);
  open.push(async () => {
    await client.close();
    await adapter.close();
  });
  return { client };
}

function toolOf(capability: string): string {
  return capability.replaceAll('.', '_');
}

describe('McpAdapter tool names', () => {
  const runtime = runtimeWith({ store: 'memory' });
  const [dotted, underscored] = register(
    runtime,
    { execute: () => ({ ran: 'dotted' }) },
    { execute: () => ({ ran: 'underscored' }) },
  ) as [string, string];
  // Two capabilities whose default tool names would be one: `<x>.a.b` and `<x>_a_b`.
  const base = uniqueName('names').replaceAll('.', '_');
  const pair: [string, string] = [`${base}.a.b`, `${base}_a_b`];
  runtime.use({
    manifest: { name: uniqueName('module'), version: '1.0.0', capabilities: pair },
    capabilities: pair.map((name) =>
      createCapability({
        name,
        version: '2.0.0',
        description: 'collides',
        risk: 'read',
        lifecycleLogging: false,
        execute: () => ({ ran: name }),
      }),
    ),
  });
  const only = (...names: string[]) => ({
    include: (capability: CapabilityDescriptor) => names.includes(capability.name),
  });

  it('keeps [A-Za-z0-9_-] only: dots become _', async () => {
    const { client } = await connect(new McpAdapter(runtime, only(dotted, underscored)));
    const { tools } = await client.listTools();
    assert.deepEqual(
      tools.map((tool) => tool.name),
      [dotted.replaceAll('.', '_'), underscored.replaceAll('.', '_')],
    );
    for (const tool of tools) assert.match(tool.name, /^[A-Za-z0-9_-]+$/);
  });

  it('refuses two capabilities with one tool name when built: MCP_TOOL_NAME_COLLISION', () => {
    assert.throws(() => new McpAdapter(runtime), {
      name: 'TypeError',
      code: 'MCP_TOOL_NAME_COLLISION',
      message: `Capabilities "${pair[0]}" and "${pair[1]}" would both be the MCP tool "${pair[1]}"; rename one or choose names with options.toolName`,
    });
  });

  it('names tools with options.toolName and calls exactly the capability it named', async () => {
    const seen: unknown[] = [];
    const adapter = new McpAdapter(runtime, {
      ...only(...pair),
      // The dotted one takes the other's default name: a second lookup by the renamed string
      // would run the wrong capability.
      toolName: (capability) => {
        seen.push({ ...capability });
        return capability.name === pair[0]
          ? pair[1]
          : `plain_${capability.version}`.replaceAll('.', '-');
      },
    });
    assert.deepEqual(seen, [
      { name: pair[0], version: '2.0.0' },
      { name: pair[1], version: '2.0.0' },
    ]);
    assert.deepEqual(adapter.tools, [
      { tool: pair[1], capability: pair[0] },
      { tool: 'plain_2-0-0', capability: pair[1] },
    ]);
    const { client } = await connect(adapter);
    const first = await client.callTool({ name: pair[1], arguments: {} });
    assert.deepEqual(first.structuredContent, { ran: pair[0] });
    const second = await client.callTool({ name: 'plain_2-0-0', arguments: {} });
    assert.deepEqual(second.structuredContent, { ran: pair[1] });
    await assert.rejects(client.callTool({ name: pair[0], arguments: {} }), {
      message: /not found/,
    });
  });

  it('checks what options.toolName returns: MCP_TOOL_NAME_INVALID', () => {
    const cases: [unknown, RegExp][] = [
      [() => 'has.dot', /must be 1 to 128 characters of A-Z, a-z, 0-9, _ and -, got "has\.dot"/],
      [() => '', /got ""/],
      [() => 'x'.repeat(129), /must be 1 to 128 characters/],
      [() => 42, /got 42/],
      [
        () => {
          throw new Error('no name for you');
        },
        /options\.toolName threw for capability ".*": no name for you/,
      ],
    ];
    for (const [toolName, message] of cases) {
      assert.throws(
        () =>
          new McpAdapter(runtime, {
            ...only(dotted),
            toolName: toolName as () => string,
          }),
        (error: Error & { code?: string }) => {
          assert.equal(error.code, 'MCP_TOOL_NAME_INVALID');
          assert.match(error.message, message);
          return true;
        },
      );
    }
    assert.throws(() => new McpAdapter(runtime, { toolName: 'x' as never }), {
      code: 'MCP_ADAPTER_OPTIONS_INVALID',
      message: /options\.toolName must be a function/,
    });
  });

  it('tells resolveCaller both the tool and the capability', async () => {
    const requests: unknown[] = [];
    const adapter = new McpAdapter(runtime, {
      ...only(dotted),
      resolveCaller: ({ tool, capability }) => {
        requests.push({ tool, capability });
        return { id: 'x' };
      },
    });
    const { client } = await connect(adapter);
    await client.callTool({ name: toolOf(dotted), arguments: {} });
    assert.deepEqual(requests, [{ tool: toolOf(dotted), capability: dotted }]);
  });
});
