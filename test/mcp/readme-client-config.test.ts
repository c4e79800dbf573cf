// docs/guide/mcp.md, "A local client over stdio": the stdio client configuration, taken from the
// guide as written (the README's before issue 47), started from a directory outside the repository
// the way a client starts it, then an MCP initialize and tools/list with the SDK client. Uses the
// build (dist/).
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

const ROOT = resolve(import.meta.dirname, '../..');

interface ServerEntry {
  readonly command: string;
  readonly args: readonly string[];
}

/** The first JSON block of the guide's section: the stdio server entry. */
function guideServerEntry(): ServerEntry {
  const guide = readFileSync(resolve(ROOT, 'docs/guide/mcp.md'), 'utf8');
  const section = guide.split('\n## A local client over stdio\n')[1]?.split('\n## ')[0];
  const block = section?.match(/```json\n([\s\S]*?)\n```/)?.[1];
  assert.ok(block !== undefined, 'the section has a JSON block');
  const config = JSON.parse(block) as { mcpServers: Record<string, ServerEntry> };
  const entry = config.mcpServers.warrant;
  assert.ok(entry !== undefined);
  return entry;
}

const CAPABILITIES = `export default {
  manifest: { name: 'notes', version: '1.0.0', capabilities: ['notes.search'] },
  capabilities: [{
    name: 'notes.search',
    version: '1.0.0',
    description: 'Searches notes',
    risk: 'read',
    inputSchema: { query: { type: 'string', required: true, description: 'Words to find' } },
    execute: (input) => ({ found: [input.query] }),
  }],
};
`;
const AUTHORIZER = `export default { authorize: () => ({ decision: 'allow' }) };\n`;

describe("the guide's MCP client configuration", () => {
  const files = mkdtempSync(join(tmpdir(), 'warrant-readme-files-'));
  const elsewhere = mkdtempSync(join(tmpdir(), 'warrant-readme-cwd-'));
  after(() => {
    rmSync(files, { recursive: true, force: true });
    rmSync(elsewhere, { recursive: true, force: true });
  });

  it('starts from another directory and answers initialize and tools/list', async () => {
    const entry = guideServerEntry();
    assert.notEqual(entry.command, 'npx', 'npx warrant resolves to another package');
    writeFileSync(join(files, 'package.json'), '{ "type": "module" }\n');
    writeFileSync(join(files, 'capabilities.js'), CAPABILITIES);
    writeFileSync(join(files, 'authorizer.js'), AUTHORIZER);
    mkdirSync(join(files, '.warrant'));
    // The guide's placeholders: the installed package is this repository; the rest is `files`.
    const args = entry.args.map((arg) =>
      arg
        .replace('/path/to/project/node_modules/warrant/', `${ROOT}/`)
        .replace('/path/to/', `${files}/`),
    );
    assert.ok(
      args.every((arg) => !arg.includes('/path/to/')),
      JSON.stringify(args),
    );
    const transport = new StdioClientTransport({
      command: entry.command === 'node' ? process.execPath : entry.command,
      args,
      cwd: elsewhere,
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const client = new Client({ name: 'readme-config-test', version: '1.0.0' });
    try {
      await client.connect(transport, { timeout: 30_000 });
      const { tools } = await client.listTools(undefined, { timeout: 30_000 });
      assert.deepEqual(
        tools.map((tool) => tool.name),
        ['notes_search'],
        stderr,
      );
      const result = await client.callTool(
        { name: 'notes_search', arguments: { query: 'mcp' } },
        { timeout: 30_000 },
      );
      assert.deepEqual(result.structuredContent, { found: ['mcp'] });
    } finally {
      await client.close();
    }
  });
});
