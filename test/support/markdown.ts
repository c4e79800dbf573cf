// What the documentation tests read in the repository's Markdown: fenced blocks with the marker
// on the line before them, headings outside fences, and the anchors a renderer such as GitHub's
// gives those headings (test/contract/citations.test.ts, docs-shell.test.ts, api-toc.test.ts).
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

export interface FencedBlock {
  /** The info string's first word: `ts`, `sh`, `json`, ... (empty when none). */
  readonly language: string;
  /** 1-based line of the block's first line of code. */
  readonly line: number;
  readonly code: string;
  /** The text of a `<!-- <marker>: <reason> -->` on the last non-blank line before the fence. */
  readonly marker: { readonly name: string; readonly reason: string } | undefined;
}

const FENCE = /^(\s*)(`{3,}|~{3,})\s*([\w-]*)/;
const MARKER = /^<!--\s*([\w-]+):\s*(.*?)\s*-->$/;

/** Every fenced block of a Markdown text, in order. */
export function fencedBlocks(text: string): FencedBlock[] {
  const lines = text.split('\n');
  const blocks: FencedBlock[] = [];
  for (let index = 0; index < lines.length; index += 1) {
    const fence = FENCE.exec(lines[index] as string);
    if (fence === null) continue;
    const [, indent = '', marks = '', language = ''] = fence;
    const start = index + 1;
    let end = start;
    while (end < lines.length && !(lines[end] as string).startsWith(`${indent}${marks}`)) end += 1;
    let previous = index - 1;
    while (previous >= 0 && (lines[previous] as string).trim() === '') previous -= 1;
    const marker = previous >= 0 ? MARKER.exec((lines[previous] as string).trim()) : null;
    blocks.push({
      language,
      line: start + 1,
      code: lines
        .slice(start, end)
        .map((line) => line.slice(indent.length))
        .join('\n'),
      marker: marker === null ? undefined : { name: marker[1] ?? '', reason: marker[2] ?? '' },
    });
    index = end;
  }
  return blocks;
}

export interface Heading {
  readonly level: number;
  /** The heading as written, without its `#`s. */
  readonly text: string;
  /** 1-based line. */
  readonly line: number;
}

/** The ATX headings of a Markdown text, outside fenced blocks. */
export function headings(text: string): Heading[] {
  const found: Heading[] = [];
  let fence: string | undefined;
  text.split('\n').forEach((line, index) => {
    const marks = FENCE.exec(line)?.[2];
    if (fence !== undefined) {
      if (marks !== undefined && line.trimStart().startsWith(fence)) fence = undefined;
      return;
    }
    if (marks !== undefined) {
      fence = marks;
      return;
    }
    const heading = /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading !== null)
      found.push({
        level: (heading[1] as string).length,
        text: heading[2] as string,
        line: index + 1,
      });
  });
  return found;
}

/** A heading as a reader sees it: inline code marks and backslash escapes removed. */
export function plainHeading(text: string): string {
  return text.replace(/`/g, '').replace(/\\(.)/g, '$1');
}

/** The anchor GitHub gives a heading (before numbering duplicates). */
export function slug(text: string): string {
  return plainHeading(text)
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** Every anchor of a Markdown text, duplicates numbered `-1`, `-2`, ... as GitHub numbers them. */
export function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  for (const heading of headings(text)) {
    const base = slug(heading.text);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    result.add(count === 0 ? base : `${base}-${count}`);
  }
  return result;
}

/** The Markdown files of a folder, sorted, as paths relative to `root`. */
export function markdownFiles(root: string, folder: string): string[] {
  return readdirSync(join(root, folder))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `${folder}/${name}`);
}

/** The documents of the guide and the front door, which the shell and citation tests read. */
export function guideDocuments(root: string): string[] {
  return ['README.md', 'CONTRIBUTING.md', ...markdownFiles(root, 'docs/guide')];
}

export function readText(root: string, path: string): string {
  return readFileSync(join(root, path), 'utf8');
}
