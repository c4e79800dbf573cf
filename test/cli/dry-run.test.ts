// `warrant run --dry-run` (docs/api.md, "runtime.previewPlan"), through the real executable
// (dist/esm/cli/main.js, built by `npm test`'s pretest).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';

const bin = resolve('dist/esm/cli/main.js');
const dir = mkdtempSync(join(tmpdir(), 'warrant-dry-run-'));

function warrant(args: string[]) {
  assert.ok(existsSync(bin), 'dist/esm/cli/main.js is missing: run `npm run build` first');
  const child = spawnSync(process.execPath, [bin, ...args], {
    cwd: dir,
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: child.status, stdout: child.stdout, stderr: child.stderr };
}

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

describe('warrant run --dry-run', () => {
  it('prints each step decided, references unknown, runs and records nothing', () => {
    const plan = file(
      'plan.json',
      JSON.stringify({
        version: '1.0',
        steps: [
          { id: 'hello', capability: 'system.echo', input: { message: 'hi' } },
          {
            id: 'again',
            capability: 'system.echo',
            input: { message: { $ref: 'steps.hello.result.message' } },
          },
        ],
      }),
    );
    const policy = file(
      'echo.cedar',
      '@id("echo") permit(principal, action == Warrant::Action::"system.echo", resource);',
    );
    const ran = warrant(['run', plan, '--dry-run', '--json', '--policy', policy]);
    assert.equal(ran.code, 0, ran.stderr);
    assert.deepEqual(JSON.parse(ran.stdout), {
      steps: [
        { id: 'hello', capability: 'system.echo', outcome: 'allow', policies: ['echo'] },
        { id: 'again', capability: 'system.echo', outcome: 'unknown', waitsFor: ['hello'] },
      ],
    });
    assert.match(ran.stderr, /^hello system\.echo: allow \| policies: echo$/m);
    assert.match(ran.stderr, /^again system\.echo: unknown \| waits for: hello$/m);
    // No store was opened on disk: the default ./.warrant/ does not exist.
    assert.deepEqual(readdirSync(dir).sort(), ['echo.cedar', 'plan.json']);
  });

  it('exits 1 when a step would be refused, 2 when admission refuses the plan', () => {
    const plan = file(
      'write.json',
      JSON.stringify({
        version: '1.0',
        steps: [{ id: 'w', capability: 'system.echo', input: { message: 'x' } }],
      }),
    );
    const none = file('none.cedar', '');
    const denied = warrant(['run', plan, '--dry-run', '--policy', none]);
    assert.equal(denied.code, 1);
    assert.match(denied.stderr, /^w system\.echo: deny \| No policy permits \| policies: none$/m);
    const bad = file(
      'bad.json',
      JSON.stringify({ version: '1.0', steps: [{ id: 'x', capability: 'no.such' }] }),
    );
    assert.equal(warrant(['run', bad, '--dry-run']).code, 2);
  });
});
