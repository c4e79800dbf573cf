// docs/decisions.md, "Light import": an application that uses the memory store bundles the BUILT
// package with esbuild, nothing marked external, and the bundle runs on its own: a consumer in a
// directory with no node_modules but a link to the package, as an installed dependency is, is
// bundled through the package's `exports`, moved away, and runs a one-step plan. `npm test`
// builds first (pretest); run `npm run build` before running this file alone.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { build, type Format } from 'esbuild';

const repo = fileURLToPath(new URL('../../', import.meta.url));

const CONSUMER = `import { OperatorRuntime, createCapability } from 'warrant';

const runtime = new OperatorRuntime();
runtime.use({
  manifest: { name: 'bundled', version: '1.0.0', capabilities: ['bundled.greet'] },
  capabilities: [
    createCapability({
      name: 'bundled.greet',
      version: '1.0.0',
      description: 'Greets',
      risk: 'read',
      inputSchema: { name: { type: 'string', required: true, description: 'Who' } },
      execute: ({ input }) => 'hello ' + input.name,
    }),
  ],
});
const job = await runtime.executePlan({
  version: '1.0',
  steps: [{ id: 'greet', capability: 'bundled.greet', input: { name: 'ada' } }],
});
await runtime.close();
console.log(JSON.stringify({ status: job.status, result: job.result }));
`;

describe('bundling the package with esbuild (memory store, nothing external)', () => {
  let dir: string;

  before(() => {
    assert.ok(existsSync(join(repo, 'dist/esm/index.js')), 'run `npm run build` first');
    dir = mkdtempSync(join(tmpdir(), 'warrant-bundle-'));
    mkdirSync(join(dir, 'app/node_modules'), { recursive: true });
    symlinkSync(repo, join(dir, 'app/node_modules/warrant'));
    writeFileSync(join(dir, 'app/main.mjs'), CONSUMER);
    writeFileSync(
      join(dir, 'app/main.cjs'),
      `(async () => {\n${CONSUMER.replace(
        "import { OperatorRuntime, createCapability } from 'warrant';",
        "const { OperatorRuntime, createCapability } = require('warrant');",
      )}})();\n`,
    );
    mkdirSync(join(dir, 'run'));
  });

  after(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  async function bundleAndRun(entry: string, format: Format, outfile: string): Promise<unknown> {
    const result = await build({
      entryPoints: [join(dir, 'app', entry)],
      bundle: true,
      platform: 'node',
      format,
      target: 'node20',
      outfile: join(dir, 'run', outfile),
      logLevel: 'silent',
    });
    assert.deepEqual(result.errors, []);
    // Run where no node_modules can be found: everything the plan needs is in the bundle.
    const stdout = execFileSync(process.execPath, [join(dir, 'run', outfile)], {
      cwd: join(dir, 'run'),
      encoding: 'utf8',
      env: { ...process.env, NODE_OPTIONS: '', NODE_PATH: '' },
      timeout: 60_000,
    });
    return JSON.parse(stdout.trim());
  }

  it('an ESM consumer bundles and runs a one-step plan', async () => {
    assert.deepEqual(await bundleAndRun('main.mjs', 'esm', 'bundle.mjs'), {
      status: 'completed',
      result: 'hello ada',
    });
  });

  it('a CommonJS consumer bundles and runs a one-step plan', async () => {
    assert.deepEqual(await bundleAndRun('main.cjs', 'cjs', 'bundle.cjs'), {
      status: 'completed',
      result: 'hello ada',
    });
  });
});
