import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';

/** Folders whose files a clone of the repository must be able to follow. */
const ROOTS = ['src', 'test', 'tools', 'bench', 'scripts', 'examples', 'docs'];
const DOCS_AT_TOP = ['README.md', 'SECURITY.md', 'BENCHMARKS.md'];

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : files(path);
    return /\.(ts|mjs|js|md)$/.test(entry.name) ? [path] : [];
  });
}

// Names of the design documents that live outside the repository, spelled in pieces so this file
// does not cite them itself.
const OUTSIDE = new RegExp(
  [
    'spec ' + '\u00a7',
    'API' + '\\.md ' + '\u00a7',
    'API-2' + '\\.md',
    'STYLE' + '\\.md',
    'ARCHITECTURE' + '\\.md',
  ].join('|'),
);

describe('citations', () => {
  it('cite only documents the repository contains (docs/api.md, docs/decisions.md, README, ...)', () => {
    const offenders = [...ROOTS.flatMap(files), ...DOCS_AT_TOP].flatMap((file) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .flatMap((line, index) =>
          OUTSIDE.test(line) ? [`${file}:${index + 1}: ${line.trim()}`] : [],
        ),
    );
    assert.deepEqual(offenders, []);
  });
});
