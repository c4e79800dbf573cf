// Issue 15, item 2: one encoding of values at every edge. A result JSON cannot hold as such
// (a cycle, a bigint, toJSON values, boxed primitives, a lone surrogate, ...) reads the same over
// MCP, over HTTP and in the `warrant` program's --json output (the program runs from the build).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { Client, type CallToolResult } from '@modelcontextprotocol/client';
import { InMemoryTransport } from '@modelcontextprotocol/server';
import { createHttpServer } from '../../src/http/server.js';
import { McpAdapter } from '../../src/index.js';
import { register, runtimeWith } from '../support/runtime-fixtures.js';
// @ts-expect-error: a plain JavaScript fixture without declarations
import { oddValue } from './fixtures/odd-value.mjs';

const EXPECTED = {
  big: '12345678901234567890',
  cyclic: { name: 'loop', self: '[Circular]' },
  url: 'https://example.com/a?b=1',
  number: 5,
  string: 'abc',
  money: '12.50 EUR',
  text: 'lone \ud800 and nul \u0000',
  map: { k: '1' },
  set: ['s'],
  nan: 'NaN',
  negativeZero: 0,
  sparse: [1, null, 3],
  fn: '[Function named]',
  when: '1970-01-01T00:00:00.000Z',
};

async function overMcp(): Promise<{ text: unknown; structured: unknown }> {
  const runtime = runtimeWith();
  const [name] = register(runtime, { execute: () => (oddValue as () => unknown)() });
  const adapter = new McpAdapter(runtime);
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  await adapter.connect(serverTransport);
  const client = new Client({ name: 'edge-encoding', version: '1.0.0' });
  await client.connect(clientTransport);
  try {
    const result = (await client.callTool({
      name: (name as string).replaceAll('.', '_'),
      arguments: {},
    })) as CallToolResult;
    assert.equal(result.isError, undefined);
    const [block] = result.content;
    return {
      text: JSON.parse((block as { text: string }).text),
      structured: result.structuredContent,
    };
  } finally {
    await client.close();
    await adapter.close();
    await runtime.close();
  }
}

async function overHttp(): Promise<unknown> {
  const runtime = runtimeWith();
  const [name] = register(runtime, { execute: () => (oddValue as () => unknown)() });
  const app = createHttpServer(runtime);
  try {
    const response = await app.inject({
      method: 'POST',
      url: `/api/capabilities/${encodeURIComponent(name as string)}/execute`,
      payload: { input: {} },
    });
    assert.equal(response.statusCode, 200, response.body);
    return (JSON.parse(response.body) as { result: unknown }).result;
  } finally {
    await app.close();
    await runtime.close();
  }
}

function overCli(): unknown {
  const cwd = mkdtempSync(join(tmpdir(), 'warrant-edge-'));
  const plan = join(cwd, 'plan.json');
  writeFileSync(
    plan,
    JSON.stringify({ version: '1.0', steps: [{ id: 'odd', capability: 'edge.odd' }] }),
  );
  const child = spawnSync(
    process.execPath,
    [
      resolve('dist/esm/cli/main.js'),
      'run',
      plan,
      '--module',
      resolve('test/jobs/fixtures/odd-module.mjs'),
      '--store',
      'memory',
      '--json',
    ],
    { cwd, encoding: 'utf8', timeout: 60_000 },
  );
  assert.equal(child.status, 0, child.stderr);
  return (JSON.parse(child.stdout) as { result: unknown }).result;
}

describe('one encoding of values at every edge', () => {
  it('shows a cyclic, bigint, toJSON, boxed result the same over MCP, HTTP and the CLI', async () => {
    const mcp = await overMcp();
    const http = await overHttp();
    const cli = overCli();
    assert.deepEqual(http, EXPECTED);
    assert.deepEqual(cli, EXPECTED);
    assert.deepEqual(mcp.text, EXPECTED);
    assert.deepEqual(mcp.structured, EXPECTED);
  });
});
