// `--module` accepts a TypeScript-compiled CommonJS file: `exports.default` is its module.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { loadCapabilityModules } from '../../src/cli/load-modules.js';

const dir = mkdtempSync(join(tmpdir(), 'warrant-cjs-'));
writeFileSync(join(dir, 'package.json'), '{ "type": "commonjs" }');
after(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

// What `tsc --module commonjs` writes for `export default { manifest, capabilities }`.
const compiled = `"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
const capabilityModule = {
  manifest: { name: 'compiled', version: '1.0.0', capabilities: [] },
  capabilities: [],
};
exports.default = capabilityModule;
`;

describe('loadCapabilityModules: TypeScript-compiled CommonJS', () => {
  it('takes exports.default of a file marked __esModule', async () => {
    const path = file('compiled.js', compiled);
    const [loaded, ...rest] = await loadCapabilityModules([path]);
    assert.equal(rest.length, 0);
    assert.equal(loaded?.module.manifest.name, 'compiled');
  });

  it('takes module.exports itself when it is the capability module', async () => {
    const path = file(
      'plain.js',
      `module.exports = { manifest: { name: 'plain', version: '1', capabilities: [] }, capabilities: [] };`,
    );
    const [loaded] = await loadCapabilityModules([path]);
    assert.equal(loaded?.module.manifest.name, 'plain');
  });

  it('says there is no default export when a compiled file has none', async () => {
    const path = file(
      'empty.js',
      `"use strict";\nObject.defineProperty(exports, "__esModule", { value: true });\nexports.default = undefined;\n`,
    );
    await assert.rejects(loadCapabilityModules([path]), {
      message: /--module .*empty\.js: the module has no default export/,
    });
  });
});
