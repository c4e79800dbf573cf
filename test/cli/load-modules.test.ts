// `--module` accepts a TypeScript-compiled CommonJS file: `exports.default` is its module. Run
// through the built program (dist/esm/cli/main.js, built by `npm test`'s pretest): under tsx,
// which this test runner loads, import() already unwraps `exports.default`, plain Node does not.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';

const bin = resolve('dist/esm/cli/main.js');
const dir = mkdtempSync(join(tmpdir(), 'warrant-cjs-'));
writeFileSync(join(dir, 'package.json'), '{ "type": "commonjs" }');
after(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

function capabilities(module: string) {
  assert.ok(existsSync(bin), 'dist/esm/cli/main.js is missing: run `npm run build` first');
  const child = spawnSync(process.execPath, [bin, 'capabilities', '--module', module, '--json'], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: child.status, stdout: child.stdout, stderr: child.stderr };
}

const capabilityModule = (name: string) => `{
  manifest: { name: '${name}', version: '1.0.0', capabilities: ['${name}.ping'] },
  capabilities: [
    { name: '${name}.ping', version: '1.0.0', description: 'pong', risk: 'read', execute: () => 'pong' },
  ],
}`;

describe('--module: TypeScript-compiled CommonJS', () => {
  it('takes exports.default of a file marked __esModule (what tsc writes for export default)', () => {
    const path = file(
      'compiled.js',
      `"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
const capabilityModule = ${capabilityModule('compiled')};
exports.default = capabilityModule;
`,
    );
    const run = capabilities(path);
    assert.equal(run.code, 0, run.stderr);
    const names = (JSON.parse(run.stdout) as { name: string }[]).map(({ name }) => name);
    assert.ok(names.includes('compiled.ping'), names.join(', '));
  });

  it('still takes module.exports itself when it is the capability module', () => {
    const run = capabilities(file('plain.js', `module.exports = ${capabilityModule('plain')};`));
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /plain\.ping/);
  });

  it('says there is no default export when a compiled file has none', () => {
    const path = file(
      'empty.js',
      `"use strict";\nObject.defineProperty(exports, "__esModule", { value: true });\nexports.default = undefined;\n`,
    );
    const run = capabilities(path);
    assert.equal(run.code, 2);
    assert.match(run.stderr, /--module .*empty\.js: the module has no default export/);
  });
});

describe('--module: a file whose imports cannot be found (docs/guide/cli.md, "Module files")', () => {
  it("names the import's own error and where `warrant` is looked for, not `file not found`", () => {
    const path = file(
      'ledger.mjs',
      `import { createCapability } from 'warrant';\nexport default [createCapability];\n`,
    );
    const run = capabilities(path);
    assert.equal(run.code, 2);
    assert.doesNotMatch(run.stderr, /file not found/);
    assert.match(
      run.stderr,
      /--module .*ledger\.mjs: could not be loaded \(Cannot find package 'warrant'/,
    );
    assert.match(run.stderr, /keep it inside the project where warrant is installed/);
    assert.equal(run.stderr.trim().split('\n').length, 1, run.stderr);
  });

  it('names any other missing import as it is, without the hint', () => {
    const path = file('other.mjs', `import 'no-such-package-here';\nexport default {};\n`);
    const run = capabilities(path);
    assert.equal(run.code, 2);
    assert.match(run.stderr, /could not be loaded \(Cannot find package 'no-such-package-here'/);
    assert.doesNotMatch(run.stderr, /warrant is installed/);
  });
});
