/**
 * Read-only access to the two trees the harness compares: a base commit (through `git ls-tree`
 * and `git cat-file`) and the working tree (tracked files plus untracked files git does not
 * ignore). Nothing here writes to the repository, its index or its refs.
 */
import { spawnSync } from 'node:child_process';
import { lstatSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { QualityFailure } from './failure.js';

const MAX_BUFFER = 1024 * 1024 * 1024;

/** One version of the repository's files, addressed by repository-relative POSIX paths. */
export interface Tree {
  /** Sorted paths of the files (regular files and symbolic links) in this tree. */
  readonly paths: readonly string[];
  has(path: string): boolean;
  /** The file's bytes, or undefined when the tree has no such file. */
  read(path: string): Buffer | undefined;
  /** Reads many files at once (an optimisation; `read` works without it). */
  prefetch(paths: readonly string[]): void;
}

interface GitOutput {
  readonly status: number | null;
  readonly stdout: Buffer;
  readonly stderr: string;
}

/** The environment git runs with (the harness's caller chooses it; main.ts passes its own). */
export type GitEnv = NodeJS.ProcessEnv;

function git(cwd: string, env: GitEnv, args: readonly string[], input?: string): GitOutput {
  const result = spawnSync('git', args, {
    cwd,
    input,
    maxBuffer: MAX_BUFFER,
    // Reading commands must not even refresh the index as a side effect.
    env: { ...env, GIT_OPTIONAL_LOCKS: '0' },
  });
  if (result.error !== undefined) {
    throw new QualityFailure(`cannot run git ${args[0] ?? ''}: ${result.error.message}`);
  }
  return {
    status: result.status,
    stdout: result.stdout,
    stderr: result.stderr.toString('utf8').trim(),
  };
}

function gitOrFail(cwd: string, env: GitEnv, args: readonly string[], input?: string): Buffer {
  const result = git(cwd, env, args, input);
  if (result.status !== 0) {
    throw new QualityFailure(`git ${args.join(' ')} failed: ${result.stderr || 'no message'}`);
  }
  return result.stdout;
}

function splitNul(output: Buffer): string[] {
  return output
    .toString('utf8')
    .split('\0')
    .filter((entry) => entry !== '');
}

/** The top-level directory of the repository that contains `cwd`. */
export function repositoryRoot(cwd: string, env: GitEnv): string {
  const result = git(cwd, env, ['rev-parse', '--show-toplevel']);
  if (result.status !== 0) {
    throw new QualityFailure(`not inside a git repository (${cwd}): ${result.stderr}`);
  }
  return result.stdout.toString('utf8').trim();
}

/** The full hash of `revision` when it names a commit; a QualityFailure otherwise. */
export function resolveCommit(root: string, env: GitEnv, revision: string): string {
  if (revision === '' || revision.startsWith('-')) {
    throw new QualityFailure(`--base needs a commit, got ${JSON.stringify(revision)}`);
  }
  const result = git(root, env, ['rev-parse', '--verify', '--quiet', `${revision}^{commit}`]);
  const hash = result.stdout.toString('utf8').trim();
  if (result.status !== 0 || !/^[0-9a-f]{40,64}$/.test(hash)) {
    throw new QualityFailure(`--base ${JSON.stringify(revision)} does not name a commit`);
  }
  return hash;
}

/** Splits the output of `git cat-file --batch` into the requested objects, in order. */
function parseBatch(output: Buffer, count: number): (Buffer | undefined)[] {
  const objects: (Buffer | undefined)[] = [];
  let offset = 0;
  for (let index = 0; index < count; index++) {
    const newline = output.indexOf(0x0a, offset);
    if (newline < 0) throw new QualityFailure('git cat-file --batch: truncated output');
    const header = output.subarray(offset, newline).toString('utf8').split(' ');
    offset = newline + 1;
    if (header[1] === 'missing' || header.length < 3) {
      objects.push(undefined);
      continue;
    }
    const size = Number(header[2]);
    if (!Number.isSafeInteger(size) || offset + size > output.length) {
      throw new QualityFailure('git cat-file --batch: malformed output');
    }
    objects.push(output.subarray(offset, offset + size));
    offset += size + 1;
  }
  return objects;
}

/** The files of a commit: blobs and symbolic links (submodules are not files and are skipped). */
export function commitTree(root: string, env: GitEnv, commit: string): Tree {
  const objects = new Map<string, string>();
  for (const entry of splitNul(
    gitOrFail(root, env, ['ls-tree', '-r', '-z', '--full-tree', commit]),
  )) {
    const tab = entry.indexOf('\t');
    const [, type, hash] = entry.slice(0, tab).split(' ');
    if (type === 'blob' && hash !== undefined) objects.set(entry.slice(tab + 1), hash);
  }
  const cache = new Map<string, Buffer | undefined>();
  const prefetch = (paths: readonly string[]): void => {
    const wanted = paths.filter((path) => objects.has(path) && !cache.has(path));
    if (wanted.length === 0) return;
    const hashes = wanted.map((path) => objects.get(path) as string);
    const output = gitOrFail(root, env, ['cat-file', '--batch'], `${hashes.join('\n')}\n`);
    parseBatch(output, wanted.length).forEach((content, index) => {
      cache.set(wanted[index] as string, content);
    });
  };
  return {
    paths: [...objects.keys()].sort(),
    has: (path) => objects.has(path),
    read(path) {
      if (!objects.has(path)) return undefined;
      prefetch([path]);
      const content = cache.get(path);
      if (content === undefined) {
        throw new QualityFailure(`cannot read ${path} at ${commit.slice(0, 12)}`);
      }
      return content;
    },
    prefetch,
  };
}

/** The working tree, which can also read a symbolic link's target file (for the scan). */
export interface WorkingTree extends Tree {
  /** The bytes of the file a path leads to, following symbolic links. */
  readFollowingLinks(path: string): Buffer | undefined;
}

/**
 * The working tree as git sees it: `git ls-files --cached --others --exclude-standard`, without
 * files deleted from disk. A symbolic link's content is its target, as git stores it.
 */
export function workingTree(root: string, env: GitEnv): WorkingTree {
  const listed = splitNul(
    gitOrFail(root, env, ['ls-files', '-z', '--cached', '--others', '--exclude-standard']),
  );
  const present = new Map<string, boolean>();
  for (const path of new Set(listed)) {
    let stats;
    try {
      stats = lstatSync(join(root, path));
    } catch {
      continue; // deleted from disk, still in the index
    }
    if (stats.isFile()) present.set(path, false);
    else if (stats.isSymbolicLink()) present.set(path, true);
  }
  const read = (path: string, follow: boolean): Buffer | undefined => {
    const link = present.get(path);
    if (link === undefined) return undefined;
    const full = join(root, path);
    try {
      return link && !follow ? Buffer.from(readlinkSync(full), 'utf8') : readFileSync(full);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      throw new QualityFailure(`cannot read ${path}: ${message}`);
    }
  };
  return {
    paths: [...present.keys()].sort(),
    has: (path) => present.has(path),
    read: (path) => read(path, false),
    readFollowingLinks: (path) => read(path, true),
    prefetch: () => undefined,
  };
}
