/** Section 3 of the report: lines added and removed per area and file (informational). */
import type { Tree } from './git.js';

export const GROWTH_AREAS = ['src/', 'test/', 'tools/quality/'] as const;

export interface FileGrowth {
  readonly path: string;
  readonly status: 'added' | 'removed' | 'modified';
  readonly added: number;
  readonly removed: number;
  /** Binary files (holding a NUL byte) are listed but their lines are not counted. */
  readonly binary: boolean;
}

export interface AreaGrowth {
  readonly area: string;
  readonly files: FileGrowth[];
  readonly added: number;
  readonly removed: number;
}

export interface GrowthReport {
  readonly areas: AreaGrowth[];
  readonly added: number;
  readonly removed: number;
}

function linesOf(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines;
}

function cell(values: Int32Array, index: number): number {
  return values[index] ?? 0;
}

/** Length of the shortest edit script (insertions plus deletions), Myers' O((N+M)D) search. */
function editDistance(a: readonly number[], b: readonly number[]): number {
  const n = a.length;
  const m = b.length;
  const max = n + m;
  if (max === 0) return 0;
  const offset = max + 1;
  const furthest = new Int32Array(2 * max + 3);
  for (let d = 0; d <= max; d++) {
    for (let k = -d; k <= d; k += 2) {
      const down =
        k === -d || (k !== d && cell(furthest, offset + k - 1) < cell(furthest, offset + k + 1));
      let x = down ? cell(furthest, offset + k + 1) : cell(furthest, offset + k - 1) + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      furthest[offset + k] = x;
      if (x >= n && y >= m) return d;
    }
  }
  return max;
}

/** Lines added and removed between two texts (a minimal line diff, like `diff` would count). */
export function lineDiff(before: string, after: string): { added: number; removed: number } {
  const ids = new Map<string, number>();
  const toIds = (lines: string[]) =>
    lines.map((line) => {
      let id = ids.get(line);
      if (id === undefined) {
        id = ids.size;
        ids.set(line, id);
      }
      return id;
    });
  let a = toIds(linesOf(before));
  let b = toIds(linesOf(after));
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let end = 0;
  while (
    end < a.length - start &&
    end < b.length - start &&
    a[a.length - 1 - end] === b[b.length - 1 - end]
  ) {
    end++;
  }
  a = a.slice(start, a.length - end);
  b = b.slice(start, b.length - end);
  const distance = editDistance(a, b);
  const added = (distance + b.length - a.length) / 2;
  return { added, removed: distance - added };
}

const isBinary = (content: Buffer) => content.includes(0);

function fileGrowth(path: string, before: Buffer | undefined, after: Buffer | undefined) {
  if (before !== undefined && after !== undefined && before.equals(after)) return undefined;
  const status = before === undefined ? 'added' : after === undefined ? 'removed' : 'modified';
  const binary = [before, after].some((content) => content !== undefined && isBinary(content));
  const counts = binary
    ? { added: 0, removed: 0 }
    : lineDiff(before?.toString('utf8') ?? '', after?.toString('utf8') ?? '');
  return { path, status, binary, ...counts } satisfies FileGrowth;
}

export function growth(base: Tree, work: Tree): GrowthReport {
  const areas = GROWTH_AREAS.map((area): AreaGrowth => {
    const paths = [
      ...new Set([...base.paths, ...work.paths].filter((path) => path.startsWith(area))),
    ].sort();
    base.prefetch(paths);
    const files = paths.flatMap((path) => fileGrowth(path, base.read(path), work.read(path)) ?? []);
    return {
      area,
      files,
      added: files.reduce((sum, file) => sum + file.added, 0),
      removed: files.reduce((sum, file) => sum + file.removed, 0),
    };
  });
  return {
    areas,
    added: areas.reduce((sum, area) => sum + area.added, 0),
    removed: areas.reduce((sum, area) => sum + area.removed, 0),
  };
}
