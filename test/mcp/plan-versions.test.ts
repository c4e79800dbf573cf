// docs/api.md, "Plan version 2.0", over MCP: a runtime that admits 2.0 gets 2.0 tool calls (the
// arguments become governed values: a frozen copy for the authorizer); by default, 1.0 as before.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/client';
import { InMemoryTransport } from '@modelcontextprotocol/server';
import { McpAdapter, OperatorRuntime } from '../../src/index.js';
import { recordingAuthorizer, register } from '../support/runtime-fixtures.js';

async function callOnce(planVersions: readonly ('1.0' | '2.0')[] | undefined) {
  const authorizer = recordingAuthorizer();
  const runtime = new OperatorRuntime({ authorizer, planVersions: planVersions as never });
  const received: unknown[] = [];
  const [echo] = register(runtime, {
    execute: ({ input }) => {
      received.push(input);
      return 'ok';
    },
  });
  const adapter = new McpAdapter(runtime);
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  await adapter.connect(serverTransport);
  const client = new Client({ name: 'plan-versions-test', version: '1.0.0' });
  await client.connect(clientTransport);
  try {
    const result = await client.callTool({
      name: (echo as string).replaceAll('.', '_'),
      arguments: { nested: { n: 1 } },
    });
    assert.notEqual(result.isError, true);
    const [job] = await runtime.listJobs();
    return { job, asked: authorizer.calls[0]?.input, given: received[0] };
  } finally {
    await client.close();
    await adapter.close();
    await runtime.close();
  }
}

describe('plan version 2.0 over MCP', () => {
  it('calls tools as 2.0 plans when the runtime admits 2.0: the authorizer sees a frozen copy', async () => {
    const { job, asked, given } = await callOnce(['2.0']);
    assert.equal(job?.planVersion, '2.0');
    assert.ok(Object.isFrozen(asked));
    assert.notEqual(asked, given);
    assert.deepEqual(given, { nested: { n: 1 } });
  });

  it('calls tools as 1.0 plans by default, as before', async () => {
    const { job, asked, given } = await callOnce(undefined);
    assert.equal(job?.planVersion, undefined);
    assert.equal(asked, given);
  });
});
