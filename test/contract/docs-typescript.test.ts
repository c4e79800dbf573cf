// Every ```ts / ```typescript block of README.md, CONTRIBUTING.md, docs/*.md and the guide
// (docs/guide/*.md) compiles under `strict` against
// the BUILT package (issue 19 item 8), so the examples cannot drift from the code again. Each
// block is written as a module of its own into a temporary project (test/support/
// typecheck-consumer.ts) and checked with `tsc --noEmit`. Run `npm run build` first.
//
// What a block may leave out, as a reader would fill it in:
// - the import from 'warrant': a block with no import from 'warrant' gets one of every root
//   export it names (docs/api.md: everything is imported from the package root);
// - the values named in CONTEXT below (a `runtime`, a `plan`, ...), declared with their types.
// A block that is deliberately not compilable says so on the line before it, with
// `<!-- not-compiled: <reason> -->`; NOT_COMPILED lists every such block, so adding one is a
// visible change to this file.
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import {
  BUILT_TYPES,
  REPO,
  typecheckAgainstBuild,
  type ConsumerFile,
  type Diagnostic,
} from '../support/typecheck-consumer.js';

/** Blocks marked `<!-- not-compiled: reason -->`: document, then reason. */
const NOT_COMPILED: readonly (readonly [string, string])[] = [];

/** Values the snippets use without declaring them (a global script in the temporary project). */
const CONTEXT = `// The values README.md and docs/ snippets assume are in scope.
type W = typeof import('warrant');
declare const runtime: import('warrant').OperatorRuntime;
declare const plan: import('warrant').ExecutionPlan;
declare const job: import('warrant').Job;
declare const jobId: string;
declare const stepId: string;
declare const inputDigest: string;
declare const lookupCapability: import('warrant').Capability;
declare function findUser(id: string, signal: AbortSignal): Promise<{ email: string }>;
declare const audit: { write(event: import('warrant').RuntimeEvent): void };
declare const alerts: { send(text: string): Promise<void> };
`;

const DOCUMENTS = [
  'README.md',
  'CONTRIBUTING.md',
  ...readdirSync(join(REPO, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`),
  ...readdirSync(join(REPO, 'docs/guide'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/guide/${name}`),
];

interface Block {
  readonly document: string;
  /** 1-based line of the block's first line of code. */
  readonly line: number;
  readonly code: string;
  readonly notCompiled: string | undefined;
}

const MARKER = /^<!--\s*not-compiled:\s*(.*?)\s*-->$/;

/** The TypeScript blocks of a Markdown document, with their markers. */
export function typescriptBlocks(document: string, text: string): Block[] {
  const lines = text.split('\n');
  const blocks: Block[] = [];
  for (let index = 0; index < lines.length; index += 1) {
    const fence = /^(\s*)(`{3,}|~{3,})\s*([\w-]*)/.exec(lines[index] as string);
    if (fence === null) continue;
    const [, indent = '', marks = '', language = ''] = fence;
    const start = index + 1;
    let end = start;
    while (end < lines.length && !(lines[end] as string).startsWith(`${indent}${marks}`)) end += 1;
    if (language === 'ts' || language === 'typescript') {
      let previous = index - 1;
      while (previous >= 0 && (lines[previous] as string).trim() === '') previous -= 1;
      const marker = previous >= 0 ? MARKER.exec((lines[previous] as string).trim()) : null;
      blocks.push({
        document,
        line: start + 1,
        code: lines
          .slice(start, end)
          .map((line) => line.slice(indent.length))
          .join('\n'),
        notCompiled: marker?.[1],
      });
    }
    index = end;
  }
  return blocks;
}

/** The names the package root exports, read from the built declarations. */
function rootExports(): string[] {
  const names: string[] = [];
  for (const [, list = ''] of readFileSync(BUILT_TYPES, 'utf8').matchAll(
    /export (?:type )?\{([^}]*)\}/g,
  )) {
    for (const name of list.split(',')) if (name.trim() !== '') names.push(name.trim());
  }
  return names;
}

/** The block as a module: the import of the root exports it names, when it imports none. */
function moduleOf(block: Block, exported: readonly string[]): { text: string; offset: number } {
  const code = block.code;
  if (/from 'warrant'/.test(code)) return { text: `${code}\nexport {};\n`, offset: 0 };
  const declared = (name: string) =>
    new RegExp(`\\b(?:interface|type|class|const|let|function)\\s+${name}\\b`).test(code);
  const named = exported.filter(
    (name) => new RegExp(`\\b${name}\\b`).test(code) && !declared(name),
  );
  const header = named.length === 0 ? '' : `import { ${named.join(', ')} } from 'warrant';`;
  return { text: `${header}\n${code}\nexport {};\n`, offset: 1 };
}

describe('TypeScript blocks of README.md, docs/ and docs/guide/', () => {
  let blocks: Block[];
  let diagnostics: Diagnostic[];
  const origins = new Map<string, { block: Block; offset: number }>();

  before(() => {
    blocks = DOCUMENTS.flatMap((document) =>
      typescriptBlocks(document, readFileSync(join(REPO, document), 'utf8')),
    );
    const exported = rootExports();
    const written: ConsumerFile[] = [{ name: 'context.d.ts', text: CONTEXT }];
    for (const block of blocks) {
      if (block.notCompiled !== undefined) continue;
      const name = `blocks/${block.document.replace(/[/.]/g, '-')}-${block.line}.ts`;
      const { text, offset } = moduleOf(block, exported);
      origins.set(name, { block, offset });
      written.push({ name, text });
    }
    diagnostics = typecheckAgainstBuild({ written });
  });

  it('finds the blocks (README.md, docs/api.md and pages of the guide have some)', () => {
    for (const document of [
      'README.md',
      'docs/api.md',
      'docs/guide/capabilities.md',
      'docs/guide/approvals.md',
      'docs/guide/telemetry.md',
    ])
      assert.ok(
        blocks.some((block) => block.document === document),
        `no TypeScript block found in ${document}`,
      );
  });

  it('lists every block marked not-compiled, with its reason', () => {
    assert.deepEqual(
      blocks
        .filter((block) => block.notCompiled !== undefined)
        .map((block) => [block.document, block.notCompiled]),
      NOT_COMPILED,
    );
    for (const [, reason] of NOT_COMPILED) assert.notEqual(reason, '', 'a marker needs a reason');
  });

  it('compiles every other block under strict against dist/esm/index.d.ts', () => {
    const problems = diagnostics.map((diagnostic) => {
      const origin = origins.get(diagnostic.file);
      const where =
        origin === undefined
          ? `${diagnostic.file}:${diagnostic.line}`
          : `${origin.block.document}:${origin.block.line + diagnostic.line - 1 - origin.offset}`;
      return `${where}: ${diagnostic.code} ${diagnostic.message}`;
    });
    assert.deepEqual(problems, []);
  });
});
