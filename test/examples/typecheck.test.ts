// The TypeScript consumers in examples/ compile under `strict` against the BUILT package
// (issue 19: "types through tsc on example consumers in examples/, which the test command
// compiles"). examples.test.ts runs them through tsx, which strips types without checking them;
// this file checks them as a user's project would (test/support/typecheck-consumer.ts).
// Run `npm run build` first.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { REPO, typecheckAgainstBuild } from '../support/typecheck-consumer.js';

function typescriptFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return typescriptFiles(path);
    return /\.[cm]?tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

describe('examples/ as TypeScript consumers of the package', () => {
  it('compiles every example under strict against dist/esm/index.d.ts', () => {
    const files = typescriptFiles(join(REPO, 'examples')).sort();
    assert.ok(files.length >= 4, `only ${files.length} TypeScript examples found`);
    const problems = typecheckAgainstBuild({ inPlace: files }).map(
      (diagnostic) =>
        `${diagnostic.file}:${diagnostic.line}:${diagnostic.column}: ${diagnostic.code} ${diagnostic.message}`,
    );
    assert.deepEqual(problems, [], `in ${files.map((file) => relative(REPO, file)).join(', ')}`);
  });
});
