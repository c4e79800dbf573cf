// STYLE.md rule 14: the error catalogue and the code agree, both ways.
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? sources(path) : entry.name.endsWith('.ts') ? [path] : [];
  });
}

// Node's own codes that src/ inspects (never raises) are not ours to document.
const FOREIGN = /^(ERR_|FST_)/;

function codesInSource(): Set<string> {
  const codes = new Set<string>();
  for (const file of sources('src')) {
    for (const [, code] of readFileSync(file, 'utf8').matchAll(
      /'([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)'/g,
    )) {
      if (!FOREIGN.test(code as string)) codes.add(code as string);
    }
  }
  return codes;
}

function codesInDocs(): Set<string> {
  const text = readFileSync('docs/errors.md', 'utf8');
  return new Set(
    [...text.matchAll(/^\| `([A-Z][A-Z0-9_]+)` +\|/gm)].map((match) => match[1] as string),
  );
}

describe('docs/errors.md', () => {
  it('documents every code used in src/', () => {
    const missing = [...codesInSource()].filter((code) => !codesInDocs().has(code));
    assert.deepEqual(missing, []);
  });

  it('documents no code that src/ no longer uses', () => {
    const stale = [...codesInDocs()].filter((code) => !codesInSource().has(code));
    assert.deepEqual(stale, []);
  });

  it('has exactly one row per code', () => {
    const rows = [
      ...readFileSync('docs/errors.md', 'utf8').matchAll(/^\| `([A-Z][A-Z0-9_]+)` +\|/gm),
    ].map((match) => match[1]);
    assert.equal(rows.length, new Set(rows).size);
  });
});
