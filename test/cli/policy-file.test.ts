// `--policy <file.cedar>` on run, serve and mcp (docs/api.md, "Policy as code: Cedar"), through the
// real executable (dist/esm/cli/main.js, built by `npm test`'s pretest).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';

const bin = resolve('dist/esm/cli/main.js');
const dir = mkdtempSync(join(tmpdir(), 'warrant-policy-'));

function warrant(args: string[]) {
  assert.ok(existsSync(bin), 'dist/esm/cli/main.js is missing: run `npm run build` first');
  const child = spawnSync(process.execPath, [bin, ...args], {
    encoding: 'utf8',
    timeout: 60_000,
    input: '',
  });
  return { code: child.status, stdout: child.stdout, stderr: child.stderr };
}

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

const plan = file(
  'plan.json',
  JSON.stringify({
    version: '1.0',
    steps: [{ id: 'hello', capability: 'system.echo', input: { message: 'hi' } }],
  }),
);

describe('--policy', () => {
  it('lets Cedar policies decide each step of warrant run', () => {
    const permit = file(
      'permit.cedar',
      '@id("echo") permit(principal, action == Warrant::Action::"system.echo", resource) when { context.input.message == "hi" };',
    );
    const allowed = warrant(['run', plan, '--store', 'memory', '--policy', permit]);
    assert.equal(allowed.code, 0, allowed.stderr);
    const forbid = file(
      'forbid.cedar',
      'permit(principal, action, resource);\n@id("quiet") forbid(principal, action, resource) when { context.input.message == "hi" };',
    );
    const denied = warrant(['run', plan, '--store', 'memory', '--policy', forbid, '--json']);
    assert.equal(denied.code, 1);
    const job = JSON.parse(denied.stdout) as {
      steps: { decision: { authorizer: string; reason: string; policies: string[] } }[];
    };
    assert.deepEqual(job.steps[0]?.decision.policies, ['quiet']);
    assert.equal(job.steps[0]?.decision.reason, 'Forbidden by policy quiet');
    assert.equal(job.steps[0]?.decision.authorizer, 'cedar');
  });

  it('refuses a file that does not parse on run, serve and mcp: exit 2 naming the file and line', () => {
    const bad = file(
      'bad.cedar',
      'permit(principal, action, resource);\nforbid(principal action, resource);',
    );
    for (const command of [
      ['run', plan, '--store', 'memory'],
      ['serve', '--store', 'memory'],
      ['mcp', '--store', 'memory'],
    ]) {
      const refused = warrant([...command, '--policy', bad]);
      assert.equal(refused.code, 2, command[0]);
      assert.match(
        refused.stderr,
        new RegExp(
          `--policy ${bad.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: Cedar policy text does not parse at line 2: `,
        ),
        command[0],
      );
      assert.doesNotMatch(refused.stderr, /\n\s+at /);
    }
  });

  it('refuses duplicate ids, a missing file, and --policy with --authorizer', () => {
    const twice = file(
      'twice.cedar',
      '@id("a") permit(principal, action, resource);\n@id("a") permit(principal, action, resource);',
    );
    const duplicate = warrant(['run', plan, '--store', 'memory', '--policy', twice]);
    assert.equal(duplicate.code, 2);
    assert.match(duplicate.stderr, /Duplicate policy id "a"/);
    const missing = warrant([
      'run',
      plan,
      '--store',
      'memory',
      '--policy',
      join(dir, 'none.cedar'),
    ]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /none\.cedar: file not found/);
    const both = warrant([
      'run',
      plan,
      '--store',
      'memory',
      '--policy',
      twice,
      '--authorizer',
      twice,
    ]);
    assert.equal(both.code, 2);
    assert.match(both.stderr, /--policy and --authorizer cannot be used together/);
  });
});
