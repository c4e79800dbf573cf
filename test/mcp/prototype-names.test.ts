// Capabilities named after Object.prototype members, registered in the (Map-backed) inventory and
// served through McpAdapter, whose tool table is its own Map on the SDK's low-level Server: such
// names once collided with inherited members of the SDK's plain-object tool tables
// ("Tool constructor is already registered", and a tool named __proto__ became the table's
// prototype). A file of its own: the names are process-global and no other test may use them.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { Client, type CallToolResult } from '@modelcontextprotocol/client';
import { InMemoryTransport } from '@modelcontextprotocol/server';
import { McpAdapter, createCapability } from '../../src/index.js';
import { runtimeWith } from '../support/runtime-fixtures.js';

const NAMES = [
  'constructor',
  'toString',
  '__proto__',
  'hasOwnProperty',
  'valueOf',
  '__defineGetter__',
];

function textOf(result: CallToolResult): string {
  const [block] = result.content;
  assert.equal(block?.type, 'text');
  return (block as { text: string }).text;
}

describe('capabilities named after Object.prototype members', () => {
  const runtime = runtimeWith();
  const capabilities = NAMES.map((name) =>
    createCapability({
      name,
      version: '1.0.0',
      description: `the ${name} capability`,
      risk: 'read',
      inputSchema: {
        [name === '__proto__' ? 'value' : name]: {
          type: 'string',
          required: false,
          description: 'a field named like the capability',
        },
      },
      execute: () => ({ ran: name }),
    }),
  );
  runtime.use({
    manifest: { name: 'prototype-names', version: '1', capabilities: NAMES },
    capabilities,
  });
  const closers: (() => Promise<void>)[] = [];
  after(async () => {
    for (const close of closers) await close();
    await runtime.close();
  });

  it('register, list and run through the runtime', async () => {
    assert.deepEqual(
      runtime.listCapabilities().map((descriptor) => descriptor.name),
      NAMES,
    );
    for (const name of NAMES) {
      assert.equal(runtime.describeCapability(name)?.name, name);
      const job = await runtime.executePlan({
        version: '1.0',
        steps: [{ id: 'a', capability: name }],
      });
      assert.deepEqual(job.result, { ran: name });
    }
    assert.equal(runtime.describeCapability('isPrototypeOf'), undefined);
  });

  it('are served by McpAdapter: listed and called, while unknown names stay unknown', async () => {
    const adapter = new McpAdapter(runtime);
    const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
    await adapter.connect(serverTransport);
    const client = new Client({ name: 'prototype-names', version: '1.0.0' });
    await client.connect(clientTransport);
    closers.push(async () => {
      await client.close();
      await adapter.close();
    });
    const { tools } = await client.listTools();
    assert.deepEqual(
      tools.map((tool) => tool.name),
      NAMES,
    );
    for (const name of NAMES) {
      const result = await client.callTool({ name, arguments: {} });
      assert.equal(result.isError, undefined, name);
      assert.deepEqual(JSON.parse(textOf(result)), { ran: name });
    }
    for (const unknown of ['isPrototypeOf', 'propertyIsEnumerable', 'no.such.tool']) {
      await assert.rejects(client.callTool({ name: unknown, arguments: {} }), {
        message: new RegExp(`Tool ${unknown.replace(/\./g, '\\.')} not found`),
      });
    }
  });
});
