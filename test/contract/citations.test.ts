import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, it } from 'node:test';
import { anchors, headings, plainHeading } from '../support/markdown.js';

/** Folders whose files a clone of the repository must be able to follow. */
const ROOTS = ['src', 'test', 'tools', 'bench', 'scripts', 'examples', 'docs', '.ci'];
const DOCS_AT_TOP = ['README.md', 'CONTRIBUTING.md', 'SECURITY.md', 'BENCHMARKS.md'];

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : files(path);
    return /\.(ts|mjs|js|css|html|md)$/.test(entry.name) || dir === '.ci' ? [path] : [];
  });
}

const ALL = [...ROOTS.flatMap(files), ...DOCS_AT_TOP];

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

// A citation names a document of the repository and, in quotes, one or more of its sections:
// README "Quick start", docs/guide/approvals.md, "Try it", docs/api.md, "Limits" and
// "runtime.listLimits".
const DOCUMENT = '(README(?:\\.md)?|[A-Z]+\\.md|docs/[\\w/-]+\\.md)';
const CITATION = new RegExp(`${DOCUMENT}(?:'s)?,? ("[^"]+"(?:(?:,| and|, and) "[^"]+")*)`, 'g');

/** The sections a document offers: its headings and its bold lead-ins (**Recovery.**). */
const sectionsOf = new Map<string, string[]>();
function sections(document: string): string[] {
  let found = sectionsOf.get(document);
  if (found === undefined) {
    const text = readFileSync(document, 'utf8');
    found = [
      ...headings(text).map((heading) => plainHeading(heading.text)),
      ...[...text.matchAll(/\*\*([^*\n]+?)\.?\*\*/g)].map((match) =>
        plainHeading(match[1] as string),
      ),
    ];
    sectionsOf.set(document, found);
  }
  return found;
}

/** A section is named by its whole title, or by the part before `(`, `:` or ` ->` (a signature). */
function names(document: string, name: string): boolean {
  const wanted = plainHeading(name);
  return sections(document).some(
    (section) =>
      section === wanted ||
      (section.startsWith(wanted) && /^(\(| \(|:| ->)/.test(section.slice(wanted.length))),
  );
}

/** Each line with the next one appended (comment markers dropped), so a citation may wrap. */
function linesOf(file: string): { line: number; text: string; length: number }[] {
  const lines = readFileSync(file, 'utf8').split('\n');
  return lines.map((text, index) => ({
    line: index + 1,
    text: `${text} ${(lines[index + 1] ?? '').replace(/^\s*(\/\/|\*|#)?\s*/, '')}`,
    length: text.length,
  }));
}

describe('citations', () => {
  it('cite only documents the repository contains (docs/api.md, docs/decisions.md, README, ...)', () => {
    const offenders = ALL.flatMap((file) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .flatMap((line, index) =>
          OUTSIDE.test(line) ? [`${file}:${index + 1}: ${line.trim()}`] : [],
        ),
    );
    assert.deepEqual(offenders, []);
  });

  it('name sections the cited document has (README, CONTRIBUTING.md, docs/, docs/guide/)', () => {
    const problems: string[] = [];
    let count = 0;
    for (const file of ALL)
      for (const { line, text, length } of linesOf(file))
        for (const match of text.matchAll(CITATION)) {
          if ((match.index ?? 0) >= length) continue;
          const document = match[1] === 'README' ? 'README.md' : (match[1] as string);
          for (const [, name] of (match[2] as string).matchAll(/"([^"]+)"/g)) {
            count += 1;
            if (!existsSync(document)) problems.push(`${file}:${line}: no document ${document}`);
            else if (!names(document, name as string))
              problems.push(`${file}:${line}: ${document} has no section "${name}"`);
          }
        }
    assert.deepEqual(problems, []);
    assert.ok(count >= 500, `only ${count} citations found`);
  });

  it('link only files and headings that exist (README, CONTRIBUTING.md, docs/, docs/guide/)', () => {
    const problems: string[] = [];
    const documents = ALL.filter(
      (file) => file.endsWith('.md') && (DOCS_AT_TOP.includes(file) || file.startsWith('docs')),
    );
    for (const document of documents) {
      // Links outside code: fenced blocks and inline code spans left out.
      const text = readFileSync(document, 'utf8')
        .replace(/^(```|~~~)[^]*?^\1/gm, '')
        .replace(/`[^`\n]*`/g, '');
      for (const match of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = match[1] as string;
        if (/^[a-z]+:/.test(target)) continue;
        const [path = '', anchor] = target.split('#');
        const file = path === '' ? document : normalize(join(dirname(document), path));
        if (!existsSync(file)) problems.push(`${document}: ${target}: no file ${file}`);
        else if (anchor !== undefined && !anchors(readFileSync(file, 'utf8')).has(anchor))
          problems.push(`${document}: ${target}: no heading #${anchor} in ${file}`);
      }
    }
    assert.deepEqual(problems, []);
  });
});
