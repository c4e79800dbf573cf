// `warrant policy schema|validate` (docs/api.md, "Policy as code: Cedar"), through the real
// executable (dist/esm/cli/main.js, built by `npm test`'s pretest).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';

const bin = resolve('dist/esm/cli/main.js');
const modules = resolve('test/cli/fixtures/modules.mjs');
const dir = mkdtempSync(join(tmpdir(), 'warrant-policy-command-'));

function warrant(args: string[]) {
  assert.ok(existsSync(bin), 'dist/esm/cli/main.js is missing: run `npm run build` first');
  const child = spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', timeout: 60_000 });
  return { code: child.status, stdout: child.stdout, stderr: child.stderr };
}

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

describe('warrant policy schema', () => {
  it('prints the Cedar schema of the built-ins and the --module capabilities', () => {
    const printed = warrant(['policy', 'schema', '--module', modules]);
    assert.equal(printed.code, 0, printed.stderr);
    assert.match(printed.stdout, /^namespace Warrant \{$/m);
    assert.match(printed.stdout, /action "system\.echo" in \["risk:read"\]/);
    assert.match(
      printed.stdout,
      /action "fixture\.count" in \["risk:read"\] appliesTo \{[^}]*context: \{ "input": \{ "text": String \}/,
    );
  });

  it('declares who acts for the caller in every context: actors, effectiveScopes, an optional actor', () => {
    const printed = warrant(['policy', 'schema', '--module', modules]);
    assert.equal(printed.code, 0, printed.stderr);
    assert.ok(
      printed.stdout.includes(
        '"actors": Set<String>, "effectiveScopes": Set<String>, "actor"?: { "id": String, "scopes": Set<String> } }',
      ),
      printed.stdout,
    );
    const acting = file(
      'acting.cedar',
      'permit(principal is Warrant::Caller, action == Warrant::Action::"fixture.count", resource) when { context.effectiveScopes.contains("count") && !context.actors.contains("intruder") && (context has actor && context.actor.scopes.contains("count")) };',
    );
    const checked = warrant(['policy', 'validate', acting, '--module', modules]);
    assert.equal(checked.code, 0, checked.stderr);
  });
});

describe('warrant policy validate', () => {
  it('exits 0 for policies that fit the schema', () => {
    const good = file(
      'good.cedar',
      'permit(principal, action == Warrant::Action::"fixture.count", resource) when { context has input && context.input.text != "" };\n' +
        // No `has`: the input is always in the context.
        'forbid(principal, action == Warrant::Action::"fixture.count", resource) when { context.input.text like "/etc/*" };',
    );
    const checked = warrant(['policy', 'validate', good, '--module', modules]);
    assert.equal(checked.code, 0, checked.stderr);
    assert.match(checked.stderr, /good\.cedar: valid/);
  });

  it('exits 1 naming each problem with its line: an unknown capability, an unknown attribute, text that does not parse', () => {
    const bad = file(
      'bad.cedar',
      'permit(principal, action, resource);\n' +
        '@id("typo") permit(principal, action == Warrant::Action::"fixture.cuont", resource);\n' +
        'permit(principal, action == Warrant::Action::"fixture.count", resource) when { context has input && context.input.txt == "" };',
    );
    const checked = warrant(['policy', 'validate', bad, '--module', modules]);
    assert.equal(checked.code, 1);
    const escaped = bad.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
    assert.match(
      checked.stderr,
      new RegExp(`^${escaped}:2: policy typo: unrecognized action`, 'm'),
    );
    assert.match(checked.stderr, new RegExp(`^${escaped}:3: policy policy2: .*txt`, 'm'));
    const broken = file(
      'broken.cedar',
      'permit(principal, action, resource);\n\npermit(principal action, resource);',
    );
    const parse = warrant(['policy', 'validate', broken]);
    assert.equal(parse.code, 1);
    assert.match(parse.stderr, /broken\.cedar:3: /);
  });

  it('exits 2 for bad usage: a missing file, no subcommand', () => {
    assert.equal(warrant(['policy', 'validate', join(dir, 'none.cedar')]).code, 2);
    assert.equal(warrant(['policy']).code, 2);
    assert.equal(warrant(['policy', '--help']).code, 0);
  });

  it('--help lists only the options that register capabilities, and the others are refused', () => {
    const help = warrant(['policy', '--help']).stdout;
    for (const option of ['--module', '--fs-root', '--mcp-server', '--mcp-tool'])
      assert.ok(help.includes(option), `${option} missing from:\n${help}`);
    for (const option of [
      '--store',
      '--approvals',
      '--notify',
      '--limits',
      '--authorizer',
      '--policy',
    ])
      assert.ok(!help.includes(option), `${option} listed in:\n${help}`);
    const refused = warrant(['policy', 'schema', '--approvals']);
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /--approvals/);
  });
});
