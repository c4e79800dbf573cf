// `warrant run --caller <json>` and `warrant mcp --caller <json>` (issue 17 item 3): the caller
// reaches the authorizer; the defaults are { id: 'cli:<os user name>' } and { id: 'mcp' }; a
// malformed caller is exit 2 with one line. The program runs from the build (npm run build).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import { Client, type CallToolResult } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { callerOf, osUserName, parseCallerOption } from '../../src/cli/caller-option.js';
import { UsageError } from '../../src/cli/usage-error.js';

const ROOT = resolve(import.meta.dirname, '../..');
const MAIN = resolve(ROOT, 'dist/esm/cli/main.js');
const PROBE = resolve(import.meta.dirname, 'fixtures/caller-probe.mjs');
const dir = mkdtempSync(join(tmpdir(), 'warrant-caller-option-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const plan = join(dir, 'echo.json');
writeFileSync(
  plan,
  JSON.stringify({
    version: '1.0',
    steps: [{ id: 'e', capability: 'system.echo', input: { message: 'hi' } }],
  }),
);

function warrant(args: string[]): { code: number | null; stdout: string; stderr: string } {
  const child = spawnSync(process.execPath, [MAIN, ...args], {
    encoding: 'utf8',
    timeout: 60_000,
    cwd: dir,
  });
  return { code: child.status, stdout: child.stdout, stderr: child.stderr };
}

/** The caller the probe authorizer saw, from the denial line of `warrant run`. */
function runCaller(args: string[]): unknown {
  const { code, stderr } = warrant([
    'run',
    plan,
    '--store',
    'memory',
    '--authorizer',
    PROBE,
    ...args,
  ]);
  assert.equal(code, 1, stderr);
  const reason = /denied: caller (.*)$/m.exec(stderr)?.[1];
  assert.ok(reason !== undefined, stderr);
  return JSON.parse(reason);
}

const MALFORMED: [string, RegExp][] = [
  ['not json', /--caller is not valid JSON/],
  ['"ci"', /--caller must be an object/],
  ['[]', /--caller must be an object/],
  ['{}', /--caller\.id must be a non-empty string/],
  ['{"id":""}', /--caller\.id must be a non-empty string/],
  ['{"id":7}', /--caller\.id must be a non-empty string/],
  ['{"id":"x","scopes":"a b"}', /--caller\.scopes must be an array of strings/],
  ['{"id":"x","metadata":[]}', /--caller\.metadata must be an object/],
  ['{"id":"x","tenant":null}', /--caller\.tenant must be a string/],
  ['{"id":"x","__proto__":{"admin":true}}', /"__proto__"/],
];

/** Hostile actor chains (issue 50): refused like any malformed caller. */
const HOSTILE_CHAINS: [string, RegExp][] = [
  [
    '{"id":"x","actor":{"id":"a","actor":{"id":"b","actor":{"id":"c","actor":{"id":"d","actor":{"id":"e"}}}}}}',
    /--caller\.holds more than 4 actors/,
  ],
  [
    '{"id":"x","actor":{"id":"a","actor":{"id":"x"}}}',
    /--caller\.actor\.actor\.id "x" appears twice/,
  ],
  [
    '{"id":"x","tenant":"t","actor":{"id":"a","tenant":"u"}}',
    /--caller\.actor\.tenant must be the caller's tenant/,
  ],
  ['{"id":"x","actor":{"scopes":[]}}', /--caller\.actor\.id must be a non-empty string/],
];

describe('parseCallerOption / osUserName', () => {
  it('parses JSON data with a string id into a deeply frozen caller', () => {
    const caller = parseCallerOption('{"id":"ci","scopes":["plans:write"],"metadata":{"a":[1]}}');
    assert.deepEqual(caller, { id: 'ci', scopes: ['plans:write'], metadata: { a: [1] } });
    assert.ok(Object.isFrozen(caller) && Object.isFrozen(caller.scopes));
    assert.ok(Object.isFrozen((caller.metadata as { a: unknown[] }).a));
    assert.deepEqual(
      callerOf(undefined, () => ({ id: 'fallback' })),
      { id: 'fallback' },
    );
  });

  it('refuses anything else with a one-line UsageError', () => {
    for (const [text, message] of [
      ...MALFORMED,
      ...HOSTILE_CHAINS,
      ['x'.repeat(70_000), /longer than/] as const,
    ]) {
      assert.throws(
        () => parseCallerOption(text),
        (error: unknown) => error instanceof UsageError && message.test(error.message),
        text.slice(0, 40),
      );
    }
  });

  it('names the OS user, falling back to the uid when there is no user name', () => {
    assert.equal(osUserName(), userInfo().username);
    assert.equal(
      osUserName(() => ({ username: 'ada', uid: 5 })),
      'ada',
    );
    assert.equal(
      osUserName(() => ({ username: '', uid: 1234 })),
      'uid:1234',
    );
    const noPasswd = osUserName(() => {
      throw new Error('ENOENT: no such file or directory, uv_os_get_passwd');
    });
    assert.match(noPasswd, /^(uid:\d+|unknown)$/);
  });
});

describe('warrant run --caller', () => {
  it('hands the caller to the authorizer; the default is cli:<os user name>', () => {
    assert.deepEqual(runCaller([]), { id: `cli:${userInfo().username}` });
    assert.deepEqual(runCaller(['--caller', '{"id":"ci-bot","scopes":["plans:write"]}']), {
      id: 'ci-bot',
      scopes: ['plans:write'],
    });
  });

  it('hands an actor chain to the authorizer whole', () => {
    assert.deepEqual(
      runCaller([
        '--caller',
        '{"id":"ada","scopes":["a"],"actor":{"id":"assistant","scopes":["a"]}}',
      ]),
      { id: 'ada', scopes: ['a'], actor: { id: 'assistant', scopes: ['a'] } },
    );
  });

  it('refuses a malformed caller with exit 2 and one line, before running anything', () => {
    for (const [text, message] of [...MALFORMED, ...HOSTILE_CHAINS]) {
      const { code, stderr, stdout } = warrant([
        'run',
        plan,
        '--store',
        'memory',
        '--caller',
        text,
      ]);
      assert.equal(code, 2, stderr);
      assert.equal(stdout, '');
      const lines = stderr.trimEnd().split('\n');
      assert.equal(lines.length, 1, stderr);
      assert.match(lines[0] as string, /^warrant run: /);
      assert.match(lines[0] as string, message);
    }
  });

  it('documents --caller in --help', () => {
    assert.match(warrant(['run', '--help']).stdout, /--caller <json>[\s\S]*cli:<os user name>/);
  });
});

describe('warrant mcp --caller', () => {
  async function mcpCaller(args: string[]): Promise<unknown> {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [MAIN, 'mcp', '--store', 'memory', '--authorizer', PROBE, '--builtins', ...args],
      cwd: dir,
      stderr: 'pipe',
    });
    const client = new Client({ name: 'caller-option-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      const result = (await client.callTool({
        name: 'system_echo',
        arguments: { message: 'hi' },
      })) as CallToolResult;
      assert.equal(result.isError, true);
      const [block] = result.content;
      return JSON.parse((block as { text: string }).text.replace(/^caller /, ''));
    } finally {
      await client.close();
    }
  }

  it('runs every tool call as the caller; the default is { id: "mcp" }', async () => {
    assert.deepEqual(await mcpCaller([]), { id: 'mcp' });
    assert.deepEqual(await mcpCaller(['--caller', '{"id":"ide-user","scopes":["a"]}']), {
      id: 'ide-user',
      scopes: ['a'],
    });
  });

  it('takes an actor chain inside --caller', async () => {
    assert.deepEqual(await mcpCaller(['--caller', '{"id":"ada","actor":{"id":"ide-agent"}}']), {
      id: 'ada',
      actor: { id: 'ide-agent' },
    });
  });

  it('refuses a malformed caller with exit 2 and one line', () => {
    for (const [text, message] of [...MALFORMED.slice(0, 4), ...HOSTILE_CHAINS.slice(0, 2)]) {
      const { code, stderr, stdout } = warrant(['mcp', '--store', 'memory', '--caller', text]);
      assert.equal(code, 2, stderr);
      assert.equal(stdout, '');
      const lines = stderr.trimEnd().split('\n');
      assert.equal(lines.length, 1, stderr);
      assert.match(lines[0] as string, /^warrant mcp: /);
      assert.match(lines[0] as string, message);
    }
  });

  it('documents --caller in --help', () => {
    assert.match(warrant(['mcp', '--help']).stdout, /--caller <json>[\s\S]*\{ "id": "mcp" \}/);
  });
});
