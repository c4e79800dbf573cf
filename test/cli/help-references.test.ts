// Every document the program's --help texts point at exists where users have it (issue 19 item
// 8): a `*.md` file is in the published package (npm pack), the guide's pages included (issue 47
// item 9: the options point at docs/guide/), and a section named after a document in quotes is a
// heading of that document. `warrant serve --help` sends readers of --legacy-routes to
// SECURITY.md. Runs the built program: `npm run build` first.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { before, describe, it } from 'node:test';

const bin = resolve('dist/esm/cli/main.js');
const COMMANDS = [
  'run',
  'serve',
  'mcp',
  'worker',
  'jobs',
  'approvals',
  'notifications',
  'limits',
  'capabilities',
  'policy',
  'evidence',
];

function help(command: string): string {
  const child = spawnSync(process.execPath, [bin, command, '--help'], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  assert.equal(child.status, 0, child.stderr);
  return child.stdout;
}

/** The files `npm pack` would publish. */
function packedFiles(): string[] {
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const child = spawnSync(npm, ['pack', '--dry-run', '--json', '--ignore-scripts'], {
    encoding: 'utf8',
    timeout: 120_000,
  });
  assert.equal(child.status, 0, child.stderr);
  const [pack] = JSON.parse(child.stdout) as [{ files: { path: string }[] }];
  return pack.files.map((file) => file.path);
}

describe('documents named by --help', () => {
  let packed: string[];
  let texts: Map<string, string>;
  before(() => {
    assert.ok(existsSync(bin), 'dist/esm/cli/main.js is missing: run `npm run build` first');
    packed = packedFiles();
    texts = new Map(COMMANDS.map((command) => [command, help(command)]));
  });

  it('ships SECURITY.md, README.md and LICENSE in the package', () => {
    for (const file of ['SECURITY.md', 'README.md', 'LICENSE'])
      assert.ok(packed.includes(file), file);
  });

  it('points --legacy-routes at SECURITY.md, which describes the legacy routes', () => {
    const line = (texts.get('serve') as string).split('--legacy-routes')[1] ?? '';
    assert.match(line.split('\n  --')[0] as string, /SECURITY\.md/);
    assert.match(readFileSync('SECURITY.md', 'utf8'), /legacy routes/i);
  });

  it('names only packaged files, and sections those files have', () => {
    const headingsOf = (file: string) =>
      new Set(
        readFileSync(file, 'utf8')
          .split('\n')
          .filter((line) => line.startsWith('#'))
          .map((line) => line.replace(/^#+\s*/, '').replace(/`/g, '')),
      );
    let guidePages = 0;
    for (const [command, text] of texts) {
      for (const [, file] of text.matchAll(/\b([A-Za-z][\w./-]*\.md)\b/g)) {
        assert.ok(packed.includes(file as string), `${command} --help names ${file}`);
        if ((file as string).startsWith('docs/guide/')) guidePages += 1;
      }
      for (const [, file, section] of text.matchAll(/\b([A-Za-z][\w./-]*\.md),? "([^"]+)"/g))
        assert.ok(
          headingsOf(file as string).has(section as string),
          `${command} --help names ${file}, "${section}"`,
        );
      assert.doesNotMatch(text, /\bREADME "/, `${command} --help names a README section`);
      assert.doesNotMatch(text, /notes in README/, `${command} --help`);
    }
    assert.ok(guidePages > 0, 'no --help names a page of the guide');
  });
});
