// Errors crossing a process boundary are one line with no stack frames (issue 14 item 10):
// the sanitiser itself, and the MCP adapter's answers, which use it (the HTTP answers are
// asserted in test/http/boundary.test.ts).
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { Client, type CallToolResult } from '@modelcontextprotocol/client';
import { InMemoryTransport } from '@modelcontextprotocol/server';
import { oneLineError } from '../../src/errors/error-text.js';
import { McpAdapter, OperatorRuntime, createCapability } from '../../src/index.js';

describe('oneLineError(text)', () => {
  it('keeps the first line that is not a stack frame, trimmed', () => {
    assert.equal(oneLineError('plain'), 'plain');
    assert.equal(oneLineError('boom\n    at f (/srv/app.js:1:2)\n    at g (node:x:1:1)'), 'boom');
    assert.equal(
      oneLineError('Error: inner\n    at Object.<anonymous> (file.ts:3:9)'),
      'Error: inner',
    );
    assert.equal(oneLineError('first\r\nsecond'), 'first');
    assert.equal(oneLineError('first\rsecond'), 'first');
    assert.equal(oneLineError('first\u2028second'), 'first');
    assert.equal(oneLineError('first\u2029second'), 'first');
    assert.equal(oneLineError('    at f (/srv/app.js:1:2)\nreal message'), 'real message');
    assert.equal(oneLineError('\n\n  padded  \n'), 'padded');
    assert.equal(oneLineError('at the end of the day'), 'at the end of the day');
  });

  it('answers a fixed text when nothing but frames and blanks is left', () => {
    assert.equal(oneLineError(''), 'Error');
    assert.equal(oneLineError('\n   \n'), 'Error');
    assert.equal(oneLineError('    at f (/srv/app.js:1:2)\n\tat g (x.js:1:1)'), 'Error');
  });
});

describe('the MCP adapter answers one-line errors', () => {
  const STACKED = 'boom\n    at secretFunction (/srv/app/secret.js:10:5)';
  new OperatorRuntime().use({
    manifest: {
      name: 'one-line-mcp',
      version: '1.0.0',
      capabilities: ['oneline.fail', 'oneline.deny'],
    },
    capabilities: ['oneline.fail', 'oneline.deny'].map((name) =>
      createCapability({
        name,
        version: '1.0.0',
        description: 'fails with a stacked message',
        risk: 'read',
        execute: () => {
          throw new Error(STACKED);
        },
      }),
    ),
  });
  const runtime = new OperatorRuntime({
    authorizer: {
      authorize: (context) =>
        context.capability.name === 'oneline.deny'
          ? { decision: 'deny', reason: STACKED }
          : { decision: 'allow' },
    },
  });
  const adapter = new McpAdapter(runtime);
  const client = new Client({ name: 'one-line', version: '1.0.0' });
  after(async () => {
    await client.close();
    await adapter.close();
    await runtime.close();
  });

  it('for failed and denied tool calls', async () => {
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await adapter.connect(serverSide);
    await client.connect(clientSide);
    for (const name of ['oneline.fail', 'oneline.deny']) {
      const result = (await client.callTool({
        name: name.replaceAll('.', '_'),
        arguments: {},
      })) as CallToolResult;
      assert.equal(result.isError, true);
      assert.deepEqual(result.content, [{ type: 'text', text: 'boom' }], name);
    }
  });
});
