// A copy of examples/ as the repository ships it: what a user's own run left behind (the files
// .gitignore lists under examples/, such as the copy.txt an approved quick start writes) is not
// copied, so no test depends on what ran on this machine before.
import { cpSync, readFileSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';

function leftBehind(): Set<string> {
  const ignored = readFileSync(resolve('.gitignore'), 'utf8')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.startsWith('examples/') && !line.includes('*'));
  return new Set(ignored);
}

/** Copies examples/ into `cwd`/examples, without the files a run writes there. */
export function copyExamples(cwd: string): void {
  const skip = leftBehind();
  const root = resolve('.');
  cpSync(resolve('examples'), join(cwd, 'examples'), {
    recursive: true,
    filter: (source) => !skip.has(relative(root, source).split(sep).join('/')),
  });
}
