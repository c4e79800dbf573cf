// examples/authorizers/scopes.mjs end to end (issue 17 item 4), as docs/guide/http.md runs it:
// `warrant serve --callers <file> --authorizer examples/authorizers/scopes.mjs`. A caller whose
// token carries "plans:write" runs a write; one without is denied (403 over HTTP, an isError
// result over /mcp), and the write never happens. Run `npm run build` first.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, describe, it } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/client';
import type { ExecutionAuthorizer } from '../../src/index.js';
import { tempDir } from '../http/auth/fixtures/helpers.js';
import { call, jobsOf, mcpClient, serveChild, textOf } from '../support/serve-child.js';

const EXAMPLE = resolve(import.meta.dirname, '../../examples/authorizers/scopes.mjs');
const { default: scopes } = (await import(pathToFileURL(EXAMPLE).href)) as {
  default: { authorize: (context: never) => ReturnType<ExecutionAuthorizer['authorize']> };
};
/** The example's answer, which is synchronous. */
const decide = (context: never) => scopes.authorize(context) as { decision: string };
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const dir = tempDir();
after(() => dir.remove());

describe('examples/authorizers/scopes.mjs', () => {
  it('over HTTP and /mcp: plans:write runs a write, a caller without it is denied', async () => {
    const root = join(dir.path, 'files');
    const callers = dir.file(
      'callers.json',
      JSON.stringify({
        callers: [
          { tokenSha256: sha256('ci-token'), caller: { id: 'ci-bot', scopes: ['plans:write'] } },
          { tokenSha256: sha256('viewer-token'), caller: { id: 'viewer', scopes: ['jobs:read'] } },
        ],
      }),
    );
    const served = serveChild([
      '--callers',
      callers,
      '--authorizer',
      EXAMPLE,
      '--fs-root',
      dir.path,
      '--builtins',
    ]);
    try {
      const address = await served.listening;
      const write = (token: string, path: string) =>
        call(address, 'POST', '/api/capabilities/fs.write/execute', {
          token,
          body: { input: { path: `files/${path}`, content: `by ${token}` } },
        });

      const allowed = await write('ci-token', 'http.txt');
      assert.equal(allowed.status, 200, JSON.stringify(allowed.json));
      assert.equal(readFileSync(join(root, 'http.txt'), 'utf8'), 'by ci-token');

      const denied = await write('viewer-token', 'denied.txt');
      assert.equal(denied.status, 403);
      assert.equal(denied.json.error, 'fs.write needs the scope plans:write; viewer has jobs:read');
      assert.equal(existsSync(join(root, 'denied.txt')), false);
      const read = await call(address, 'POST', '/api/capabilities/system.echo/execute', {
        token: 'viewer-token',
        body: { input: { message: 'reads are open' } },
      });
      assert.equal(read.status, 200, 'every caller may read');

      const ci = await mcpClient(address, 'ci-token');
      const viaMcp = (await ci.callTool({
        name: 'fs_write',
        arguments: { path: 'files/mcp.txt', content: 'over mcp' },
      })) as CallToolResult;
      assert.equal(viaMcp.isError ?? false, false, textOf(viaMcp));
      assert.equal(readFileSync(join(root, 'mcp.txt'), 'utf8'), 'over mcp');

      const viewer = await mcpClient(address, 'viewer-token');
      const refused = (await viewer.callTool({
        name: 'fs_write',
        arguments: { path: 'files/mcp-denied.txt', content: 'no' },
      })) as CallToolResult;
      assert.equal(refused.isError, true);
      assert.equal(textOf(refused), 'fs.write needs the scope plans:write; viewer has jobs:read');
      assert.equal(existsSync(join(root, 'mcp-denied.txt')), false);

      // Each caller reads its own jobs only (docs/api.md, "Reading and tenants").
      const statuses = async (token: string) =>
        ((await jobsOf(address, { token })) as { status: string }[])
          .map((job) => job.status)
          .sort();
      assert.deepEqual(await statuses('ci-token'), ['completed', 'completed']);
      assert.deepEqual(await statuses('viewer-token'), ['completed', 'failed', 'failed']);
    } finally {
      await served.stop();
    }
  });

  it('fails closed: no scopes, no caller or an unknown risk is a denial', () => {
    const context = (risk: string, caller?: unknown) =>
      ({ capability: { name: 'c', risk }, caller }) as never;
    assert.deepEqual(decide(context('read')), { decision: 'allow' });
    assert.equal(decide(context('write')).decision, 'deny');
    assert.equal(decide(context('write', { id: 'a', scopes: 'plans:write' })).decision, 'deny');
    assert.equal(
      decide(context('destructive', { id: 'a', scopes: ['plans:write'] })).decision,
      'deny',
    );
    assert.equal(
      decide(context('destructive', { id: 'a', scopes: ['plans:destructive'] })).decision,
      'allow',
    );
    assert.equal(decide(context('other', { id: 'a', scopes: ['plans:write'] })).decision, 'deny');
  });
});
