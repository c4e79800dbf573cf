// Importing the package root (both builds) loads no MCP SDK module and no zod: the adapter
// imports the SDK on first use (docs/decisions.md, "MCP"). Each check runs in a child process
// against the build (dist/), so no other test's imports are counted.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, it } from 'node:test';

const ROOT = resolve(import.meta.dirname, '../..');
const ESM = pathToFileURL(resolve(ROOT, 'dist/esm/index.js')).href;
const CJS = resolve(ROOT, 'dist/cjs/index.js');
const WATCHED = String.raw`/^(@modelcontextprotocol\/|zod($|\/))/`;

/** Runs an ES module script in a child process; resolves with its stdout. */
function runModule(source: string): string {
  return execFileSync(process.execPath, ['--input-type=module', '-e', source], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 60_000,
  });
}

describe('importing the package root', () => {
  it('loads no @modelcontextprotocol module and no zod (ESM), until an adapter builds a server', () => {
    // A resolve hook refuses the watched packages: importing the root must not need them, and
    // the first createServer() must (which shows the hook works).
    const hook = `export async function resolve(specifier, context, next) {
      if (${WATCHED}.test(specifier)) throw new Error('refused ' + specifier);
      return next(specifier, context);
    }`;
    const output = runModule(`
      import { register } from 'node:module';
      register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(hook)}));
      const root = await import(${JSON.stringify(ESM)});
      const runtime = new root.OperatorRuntime({ store: 'memory' });
      const adapter = new root.McpAdapter(runtime);
      console.log('imported, ' + adapter.tools.length + ' tools');
      const failure = await adapter.createServer().then(() => 'loaded', (error) => error.message);
      console.log(failure);
      await runtime.close();
    `);
    assert.equal(output, 'imported, 0 tools\nrefused @modelcontextprotocol/server\n');
  });

  it('loads no @modelcontextprotocol module and no zod (CommonJS), until an adapter builds a server', () => {
    // Nothing of theirs is required with the root; the first createServer() imports the server
    // SDK with import(), which the same resolve hook as above refuses.
    const hook = `export async function resolve(specifier, context, next) {
      if (${WATCHED}.test(specifier)) throw new Error('refused ' + specifier);
      return next(specifier, context);
    }`;
    const output = runModule(`
      import { createRequire, register } from 'node:module';
      register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(hook)}));
      const require = createRequire(${JSON.stringify(CJS)});
      const watched = () =>
        Object.keys(require.cache).filter((file) => /[\\\\/]node_modules[\\\\/](@modelcontextprotocol|zod)[\\\\/]/.test(file));
      const root = require(${JSON.stringify(CJS)});
      const runtime = new root.OperatorRuntime({ store: 'memory' });
      const adapter = new root.McpAdapter(runtime);
      console.log(JSON.stringify(watched()));
      const failure = await adapter.createServer().then(() => 'loaded', (error) => error.message);
      console.log(failure);
      await runtime.close();
    `);
    assert.equal(output, '[]\nrefused @modelcontextprotocol/server\n');
    // Without the hook, the same build serves.
    const served = runModule(`
      import { createRequire } from 'node:module';
      const root = createRequire(${JSON.stringify(CJS)})(${JSON.stringify(CJS)});
      const runtime = new root.OperatorRuntime({ store: 'memory' });
      const server = await new root.McpAdapter(runtime).createServer();
      console.log(typeof server.connect);
      await runtime.close();
    `);
    assert.equal(served, 'function\n');
  });
});
