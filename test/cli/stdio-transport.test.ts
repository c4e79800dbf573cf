// The stdio transport of `warrant mcp` on its own, over in-memory streams: line framing, the
// answers to lines it cannot deliver, and how it closes. test/mcp/hostile-input.test.ts drives it
// through the real program and the MCP SDK.
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import type { JSONRPCMessage } from '@modelcontextprotocol/server';
import { DEFAULT_MAX_LINE_BYTES, StdioLineTransport } from '../../src/cli/stdio-transport.js';

interface Wired {
  transport: StdioLineTransport;
  input: PassThrough;
  output: PassThrough;
  messages: JSONRPCMessage[];
  errors: string[];
  /** Every line written to the output so far, parsed. */
  written(): unknown[];
}

async function wire(maxLineBytes?: number): Promise<Wired> {
  const input = new PassThrough();
  const output = new PassThrough();
  let text = '';
  output.setEncoding('utf8');
  output.on('data', (chunk: string) => (text += chunk));
  const transport = new StdioLineTransport(
    input,
    output,
    maxLineBytes === undefined ? {} : { maxLineBytes },
  );
  const messages: JSONRPCMessage[] = [];
  const errors: string[] = [];
  transport.onmessage = (message) => messages.push(message);
  transport.onerror = (error) => errors.push(error.message);
  await transport.start();
  return {
    transport,
    input,
    output,
    messages,
    errors,
    written: () =>
      text
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as unknown),
  };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));
const ping = (id: number) => JSON.stringify({ jsonrpc: '2.0', id, method: 'ping' });

describe('StdioLineTransport', () => {
  it('delivers one message per line, across chunks and several per chunk, ignoring blank lines and a CR before the newline', async () => {
    const { input, messages, written } = await wire();
    const text = `${ping(1)}\n\n  \r\n${ping(2)}\r\n${ping(3)}\n`;
    for (const piece of [text.slice(0, 5), text.slice(5, 40), text.slice(40)]) {
      input.write(piece);
      await tick();
    }
    assert.deepEqual(
      messages.map((message) => (message as { id: number }).id),
      [1, 2, 3],
    );
    assert.deepEqual(written(), [], 'nothing to answer');
  });

  it('answers a line that is not JSON with -32700 and one that is not JSON-RPC with -32600, then goes on', async () => {
    const { input, messages, errors, written } = await wire();
    input.write('{oops\n[1]\n{"jsonrpc":"2.0","id":"x","method":7}\n');
    input.write(`${ping(4)}\n`);
    await tick();
    assert.deepEqual(written(), [
      { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } },
      {
        jsonrpc: '2.0',
        id: null,
        error: { code: -32600, message: 'Invalid Request: not a JSON-RPC 2.0 message' },
      },
      {
        jsonrpc: '2.0',
        id: 'x',
        error: { code: -32600, message: 'Invalid Request: not a JSON-RPC 2.0 message' },
      },
    ]);
    assert.deepEqual(
      messages.map((message) => (message as { id: number }).id),
      [4],
    );
    assert.equal(errors.length, 3, 'each refusal is reported, one line each');
    assert.ok(errors.every((error) => !error.includes('\n')));
  });

  it('skips a line over the limit as it arrives, answers -32600, and delivers the next line', async () => {
    const { input, messages, written } = await wire(64);
    input.write(`{"jsonrpc":"2.0","id":5,"method":"ping","params":{"pad":"${'p'.repeat(40)}`);
    input.write(`${'q'.repeat(1000)}"}}`);
    input.write(`\n${ping(6)}\n`);
    await tick();
    assert.deepEqual(written(), [
      {
        jsonrpc: '2.0',
        id: null,
        error: { code: -32600, message: 'Invalid Request: message over 64 bytes' },
      },
    ]);
    assert.deepEqual(
      messages.map((message) => (message as { id: number }).id),
      [6],
    );
    assert.equal(DEFAULT_MAX_LINE_BYTES, 10 * 1024 * 1024);
  });

  it('writes each sent message as one line, and refuses to send once closed', async () => {
    const { transport, written } = await wire();
    await transport.send({ jsonrpc: '2.0', id: 1, result: {} });
    assert.deepEqual(written(), [{ jsonrpc: '2.0', id: 1, result: {} }]);
    await transport.close();
    await assert.rejects(transport.send({ jsonrpc: '2.0', id: 2, result: {} }), /closed/);
  });

  it('closes once when the input ends, and when the output breaks', async () => {
    const ended = await wire();
    let closes = 0;
    ended.transport.onclose = () => closes++;
    ended.input.end();
    await ended.transport.closed;
    await ended.transport.close();
    assert.equal(closes, 1);

    const broken = await wire();
    broken.output.emit('error', new Error('EPIPE'));
    await broken.transport.closed;
    assert.deepEqual(broken.errors, ['EPIPE']);
    broken.input.write(`${ping(7)}\n`);
    await tick();
    assert.deepEqual(broken.messages, [], 'nothing is delivered after close');
  });

  it('refuses to start twice', async () => {
    const { transport } = await wire();
    await assert.rejects(transport.start(), /already started/);
  });
});
