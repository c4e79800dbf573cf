// `--plan-versions` (docs/guide/capabilities.md, "Plan version 2.0"): the program's runtime admits
// the versions listed; a 2.0 plan is refused without it, and a bad list is a one-line usage error
// naming the flag. Runs the built executable (dist/esm/cli/main.js) as a child process.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';

const bin = resolve('dist/esm/cli/main.js');

function warrant(args: string[]) {
  assert.ok(existsSync(bin), 'dist/esm/cli/main.js is missing: run `npm run build` first');
  const child = spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', timeout: 60_000 });
  return { code: child.status, stdout: child.stdout, stderr: child.stderr };
}

const dir = mkdtempSync(join(tmpdir(), 'warrant-plan-versions-'));
const plan = join(dir, 'plan.json');
writeFileSync(
  plan,
  JSON.stringify({
    version: '2.0',
    steps: [{ id: 'hello', capability: 'system.echo', input: { message: 'hello' } }],
  }),
);

describe('warrant run --plan-versions', () => {
  it('refuses a 2.0 plan by default (exit 2, UNSUPPORTED_PLAN_VERSION)', () => {
    const run = warrant(['run', plan, '--store', 'memory', '--json']);
    assert.equal(run.code, 2, run.stderr);
    assert.equal(JSON.parse(run.stdout).issues[0].code, 'UNSUPPORTED_PLAN_VERSION');
  });

  it('runs it with --plan-versions 1.0,2.0 and records the version', () => {
    const run = warrant([
      'run',
      plan,
      '--store',
      'memory',
      '--plan-versions',
      '1.0, 2.0',
      '--json',
    ]);
    assert.equal(run.code, 0, run.stderr);
    const job = JSON.parse(run.stdout);
    assert.equal(job.status, 'completed');
    assert.equal(job.planVersion, '2.0');
  });

  it('refuses a bad list in one line naming the flag (exit 2)', () => {
    const run = warrant(['run', plan, '--store', 'memory', '--plan-versions', '3.0']);
    assert.equal(run.code, 2);
    assert.match(run.stderr, /--plan-versions must be a non-empty array/);
    assert.equal(run.stderr.trim().split('\n').length, 1, run.stderr);
  });
});
