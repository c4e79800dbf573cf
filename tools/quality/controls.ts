/**
 * Section 4 of the report: changes to whatever decides what gets verified and how. Every one of
 * them needs a human review, because a change there can weaken the checks that judge the rest.
 */
import type { PackageJson } from './dependencies.js';
import type { Tree } from './git.js';

/** package.json fields that decide what the package exposes and how it is loaded. */
export const ENTRY_POINT_FIELDS = [
  'exports',
  'main',
  'types',
  'typings',
  'module',
  'imports',
  'bin',
  'files',
  'type',
] as const;

/** Directories whose every file is a verification control. */
export const CONTROL_DIRECTORIES = ['.ci/', 'test/', 'tools/quality/'] as const;

/** Single files that are verification controls (besides any tsconfig*.json). */
export const CONTROL_FILES = [
  'src/index.ts',
  // The test runner behind `npm test` and `npm run test:quality`: it chooses what runs.
  'scripts/run-tests.mjs',
  // The tests' TypeScript loader: how every test file, and the fixtures they start, are loaded.
  'scripts/ts-loader.mjs',
  'scripts/ts-loader-hooks.mjs',
] as const;

export interface ControlChange {
  /** A file path, or `package.json <field>` for a package.json field. */
  readonly subject: string;
  readonly change: 'added' | 'removed' | 'modified';
}

const isTsconfig = (path: string) => /^tsconfig[^/]*\.json$/.test(path.split('/').at(-1) ?? '');

/** Whether a file, by its path alone, is a verification control. */
export function isControlPath(path: string): boolean {
  return (
    CONTROL_DIRECTORIES.some((directory) => path.startsWith(directory)) ||
    (CONTROL_FILES as readonly string[]).includes(path) ||
    isTsconfig(path)
  );
}

function compare(subject: string, before: unknown, after: unknown): ControlChange[] {
  if (before === undefined && after === undefined) return [];
  if (before === undefined) return [{ subject, change: 'added' }];
  if (after === undefined) return [{ subject, change: 'removed' }];
  return JSON.stringify(before) === JSON.stringify(after) ? [] : [{ subject, change: 'modified' }];
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Script-by-script and entry-point changes of the root package.json. */
export function packageControlChanges(
  base: PackageJson | undefined,
  work: PackageJson | undefined,
): ControlChange[] {
  const before = base?.scripts;
  const after = work?.scripts;
  let scriptChanges: ControlChange[];
  if (isPlainObject(before ?? {}) && isPlainObject(after ?? {})) {
    const oldScripts = isPlainObject(before) ? before : {};
    const newScripts = isPlainObject(after) ? after : {};
    scriptChanges = [...new Set([...Object.keys(oldScripts), ...Object.keys(newScripts)])]
      .sort()
      .flatMap((name) =>
        compare(`package.json scripts.${name}`, oldScripts[name], newScripts[name]),
      );
  } else {
    // Not an object on one side: compare the field as a whole.
    scriptChanges = compare('package.json scripts', before, after);
  }
  const entryChanges = ENTRY_POINT_FIELDS.flatMap((field) =>
    compare(`package.json ${field}`, base?.[field], work?.[field]),
  );
  return [...scriptChanges, ...entryChanges];
}

/** Added, removed and modified control files, sorted by path. */
export function fileControlChanges(base: Tree, work: Tree): ControlChange[] {
  const paths = [...new Set([...base.paths, ...work.paths].filter(isControlPath))].sort();
  base.prefetch(paths);
  return paths.flatMap((path): ControlChange[] => {
    const before = base.read(path);
    const after = work.read(path);
    if (before === undefined) return [{ subject: path, change: 'added' }];
    if (after === undefined) return [{ subject: path, change: 'removed' }];
    return before.equals(after) ? [] : [{ subject: path, change: 'modified' }];
  });
}
