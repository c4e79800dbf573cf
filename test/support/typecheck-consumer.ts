/**
 * Type-checks TypeScript consumers of the BUILT package (dist/esm/index.d.ts) the way a user's
 * project would: a temporary project with `"type": "module"`, a strict tsconfig whose `paths`
 * map 'warrant' to the build, the repository's node_modules for everything else, and
 * `tsc --noEmit`. Used by test/contract/docs-typescript.test.ts (README and docs/ blocks) and
 * test/examples/typecheck.test.ts (examples/). Run `npm run build` first.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const BUILT_TYPES = join(REPO, 'dist/esm/index.d.ts');

/** A file written into the temporary project (`name` relative to it). */
export interface ConsumerFile {
  readonly name: string;
  readonly text: string;
}

/** One error of tsc: where (the path as given, or the name of a written file) and what. */
export interface Diagnostic {
  readonly file: string;
  readonly line: number;
  readonly column: number;
  readonly code: string;
  readonly message: string;
}

export interface TypecheckInput {
  /** Files written into the temporary project. */
  readonly written?: readonly ConsumerFile[];
  /** Files checked where they are (absolute paths). */
  readonly inPlace?: readonly string[];
}

/** The compiler options of a strict user project (no repository-only options). */
const COMPILER_OPTIONS = {
  target: 'ES2022',
  lib: ['ES2023'],
  module: 'NodeNext',
  moduleResolution: 'NodeNext',
  strict: true,
  noEmit: true,
  skipLibCheck: true,
  esModuleInterop: true,
  types: ['node'],
  paths: { warrant: [BUILT_TYPES] },
};

/** Runs tsc over the files; returns its errors, paths made relative to the project or REPO. */
export function typecheckAgainstBuild(input: TypecheckInput): Diagnostic[] {
  assert.ok(existsSync(BUILT_TYPES), `${BUILT_TYPES} is missing: run \`npm run build\` first`);
  const project = mkdtempSync(join(tmpdir(), 'warrant-consumer-'));
  try {
    symlinkSync(join(REPO, 'node_modules'), join(project, 'node_modules'), 'dir');
    writeFileSync(join(project, 'package.json'), '{ "type": "module", "private": true }\n');
    for (const file of input.written ?? []) {
      const path = join(project, file.name);
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, file.text);
    }
    const files = [
      ...(input.written ?? []).map((file) => join(project, file.name)),
      ...(input.inPlace ?? []),
    ];
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: COMPILER_OPTIONS, files }, null, 2),
    );
    const tsc = spawnSync(
      process.execPath,
      [join(REPO, 'node_modules/typescript/bin/tsc'), '-p', project, '--pretty', 'false'],
      { cwd: project, encoding: 'utf8', timeout: 240_000 },
    );
    assert.notEqual(tsc.status, null, `tsc did not finish: ${tsc.error?.message ?? tsc.signal}`);
    const diagnostics = parseDiagnostics(tsc.stdout, project);
    assert.ok(
      tsc.status === 0 || diagnostics.length > 0,
      `tsc failed without diagnostics:\n${tsc.stdout}\n${tsc.stderr}`,
    );
    return diagnostics;
  } finally {
    rmSync(project, { recursive: true, force: true });
  }
}

function parseDiagnostics(output: string, project: string): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];
  for (const line of output.split('\n')) {
    const match = /^(.+)\((\d+),(\d+)\): error (TS\d+): (.*)$/.exec(line);
    if (match === null) continue;
    const [, path = '', lineText = '0', column = '0', code = '', message = ''] = match;
    const absolute = resolve(project, path);
    const file = absolute.startsWith(`${project}/`)
      ? absolute.slice(project.length + 1)
      : absolute.startsWith(`${REPO}/`)
        ? absolute.slice(REPO.length + 1)
        : absolute;
    diagnostics.push({ file, line: Number(lineText), column: Number(column), code, message });
  }
  return diagnostics;
}
