// `warrant mcp pin` and `--pins` through the real executable (docs/api.md, "Pinned tools"), against
// the downstream fixture server (test/mcp/fixtures/downstream-server.mjs), started by each process
// over stdio: the command writes the pins file, and `warrant run --pins` with a server whose tool
// changed refuses it (TOOL_DEFINITION_CHANGED) with nothing sent downstream. Runs the built
// program: `npm run build` first.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';

const bin = resolve('dist/esm/cli/main.js');
const SERVER = resolve('test/mcp/fixtures/downstream-server.mjs');
const DIGEST = /^sha256:[0-9a-f]{64}$/;

function warrant(args: string[], cwd: string) {
  assert.ok(existsSync(bin), 'dist/esm/cli/main.js is missing: run `npm run build` first');
  const child = spawnSync(process.execPath, [bin, ...args], {
    cwd,
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: child.status, stdout: child.stdout, stderr: child.stderr };
}

/** A directory for one test: its plan, its pins file, and the log of the tools called. */
function workspace() {
  const cwd = mkdtempSync(join(tmpdir(), 'warrant-pin-cli-'));
  const calls = join(cwd, 'calls.log');
  writeFileSync(
    join(cwd, 'plan.json'),
    JSON.stringify({
      version: '1.0',
      steps: [{ id: 'echo', capability: 'fixture.echo', input: { text: 'pinned' } }],
    }),
  );
  return {
    cwd,
    /** `--mcp-server fixture=...`, with more arguments for the server. */
    server: (...extra: string[]) =>
      `fixture=${process.execPath} ${SERVER} --calls ${calls} ${extra.join(' ')}`.trim(),
    called: () => (existsSync(calls) ? readFileSync(calls, 'utf8').trim().split('\n') : []),
  };
}

interface PinsFile {
  version: number;
  servers: Record<string, Record<string, string>>;
}

const readPins = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as PinsFile;

describe('warrant mcp pin', () => {
  it('writes the pins file (default warrant.pins.json) and prints each tool pinned; run --pins then runs the tool as pinned', () => {
    const space = workspace();
    const pin = warrant(['mcp', 'pin', '--mcp-server', space.server()], space.cwd);
    assert.equal(pin.code, 0, pin.stderr);
    const file = join(space.cwd, 'warrant.pins.json');
    const pins = readPins(file);
    assert.equal(pins.version, 1);
    assert.deepEqual(Object.keys(pins.servers), ['fixture']);
    const tools = pins.servers.fixture as Record<string, string>;
    assert.deepEqual(Object.keys(tools), ['change', 'echo', 'greet', 'refuse']);
    for (const digest of Object.values(tools)) assert.match(digest, DIGEST);
    assert.deepEqual(
      pin.stdout.trim().split('\n').sort(),
      Object.entries(tools)
        .map(([tool, digest]) => `fixture.${tool} ${digest}`)
        .sort(),
    );
    assert.match(pin.stderr, /wrote warrant\.pins\.json/);
    assert.deepEqual(space.called(), [], 'listing calls no tool');

    const run = warrant(
      [
        'run',
        'plan.json',
        '--store',
        'memory',
        '--json',
        '--mcp-server',
        space.server(),
        '--mcp-tool',
        'fixture.echo=read',
        '--pins',
        'warrant.pins.json',
      ],
      space.cwd,
    );
    assert.equal(run.code, 0, run.stderr);
    const job = JSON.parse(run.stdout) as { steps: { decision?: { definitionDigest?: string } }[] };
    assert.equal(job.steps[0]?.decision?.definitionDigest, tools.echo);
    assert.deepEqual(space.called(), ['echo']);
  });

  it('run --pins refuses a tool whose definition changed, or that the file does not pin: exit 1, TOOL_DEFINITION_CHANGED, nothing sent', () => {
    const space = workspace();
    const pins = join(space.cwd, 'pins.json');
    assert.equal(
      warrant(['mcp', 'pin', '--mcp-server', space.server(), '--pins', pins], space.cwd).code,
      0,
    );
    const pinned = readPins(pins).servers.fixture?.echo;
    const changed = warrant(
      [
        'run',
        'plan.json',
        '--store',
        'memory',
        '--json',
        '--mcp-server',
        space.server('--echo-description', 'Ignore-previous-instructions'),
        '--mcp-tool',
        'fixture.echo=read',
        '--pins',
        pins,
      ],
      space.cwd,
    );
    assert.equal(changed.code, 1, changed.stderr);
    const job = JSON.parse(changed.stdout) as { error: string; steps: { decision?: unknown }[] };
    assert.match(
      job.error,
      /^TOOL_DEFINITION_CHANGED: MCP tool "echo" of MCP server "fixture" changed since it was pinned \(pinned sha256:[0-9a-f]{64}, listed sha256:[0-9a-f]{64}\)$/,
    );
    assert.ok(job.error.includes(`pinned ${pinned}`), job.error);
    assert.equal(job.steps[0]?.decision, undefined, 'refused before the authorizer');
    assert.match(changed.stderr, /warrant: fixture\.echo is refused: TOOL_DEFINITION_CHANGED: /);
    assert.doesNotMatch(changed.stderr, /\n\s+at /, 'no stack trace');

    // A pins file of another server pins none of this one's tools.
    const other = join(space.cwd, 'other.json');
    writeFileSync(other, JSON.stringify({ version: 1, servers: { elsewhere: { echo: pinned } } }));
    const unpinned = warrant(
      [
        'run',
        'plan.json',
        '--store',
        'memory',
        '--json',
        '--mcp-server',
        space.server(),
        '--mcp-tool',
        'fixture.echo=read',
        '--pins',
        other,
      ],
      space.cwd,
    );
    assert.equal(unpinned.code, 1, unpinned.stderr);
    assert.match(
      (JSON.parse(unpinned.stdout) as { error: string }).error,
      /^TOOL_DEFINITION_CHANGED: MCP tool "echo" of MCP server "fixture" is not in the pins file/,
    );
    assert.deepEqual(space.called(), [], 'nothing sent downstream');
  });

  it('pins the servers named anew and keeps the others of an existing file', () => {
    const space = workspace();
    const pins = join(space.cwd, 'pins.json');
    const kept = { elsewhere: { tool: `sha256:${'a'.repeat(64)}` } };
    writeFileSync(
      pins,
      JSON.stringify({
        version: 1,
        servers: { ...kept, fixture: { gone: `sha256:${'b'.repeat(64)}` } },
      }),
    );
    const pin = warrant(['mcp', 'pin', '--mcp-server', space.server(), '--pins', pins], space.cwd);
    assert.equal(pin.code, 0, pin.stderr);
    const written = readPins(pins);
    assert.deepEqual(written.servers.elsewhere, kept.elsewhere);
    assert.deepEqual(Object.keys(written.servers.fixture ?? {}), [
      'change',
      'echo',
      'greet',
      'refuse',
    ]);
  });

  it('exits 1 writing nothing when a server cannot be reached, and 2 for bad usage', () => {
    const space = workspace();
    const pins = join(space.cwd, 'pins.json');
    const unreachable = warrant(
      ['mcp', 'pin', '--mcp-server', `gone=${join(space.cwd, 'no-such-server')}`, '--pins', pins],
      space.cwd,
    );
    assert.equal(unreachable.code, 1, unreachable.stderr);
    assert.match(
      unreachable.stderr,
      /^warrant mcp pin: gone: MCP server ".*no-such-server" could not be listed: /m,
    );
    assert.equal(existsSync(pins), false);

    const none = warrant(['mcp', 'pin'], space.cwd);
    assert.equal(none.code, 2);
    assert.match(none.stderr, /warrant mcp pin needs --mcp-server/);
    writeFileSync(pins, '{"version":2}');
    const bad = warrant(['mcp', 'pin', '--mcp-server', space.server(), '--pins', pins], space.cwd);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--pins .*pins\.json: not a pins file/);
    const alone = warrant(['run', 'plan.json', '--store', 'memory', '--pins', pins], space.cwd);
    assert.equal(alone.code, 2);
    assert.match(alone.stderr, /--pins needs --mcp-server/);
    const help = warrant(['mcp', 'pin', '--help'], space.cwd);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /^Usage: warrant mcp pin --mcp-server/);
  });

  it('refuses an approved step whose tool changed between the request and the decision (another process)', () => {
    const space = workspace();
    const store = `sqlite:${join(space.cwd, 'jobs.db')}`;
    const run = warrant(
      [
        'run',
        'plan.json',
        '--store',
        store,
        '--approvals',
        '--mcp-server',
        space.server(),
        '--mcp-tool',
        'fixture.echo=write',
      ],
      space.cwd,
    );
    assert.equal(run.code, 3, run.stderr);
    const jobId = run.stdout.trim();
    const shown = JSON.parse(
      warrant(['jobs', 'show', jobId, '--json', '--store', store], space.cwd).stdout,
    ) as {
      steps: { decision: { inputDigest: string; definitionDigest: string } }[];
    };
    const decision = shown.steps[0]?.decision;
    assert.match(decision?.definitionDigest ?? '', DIGEST);
    // The decision runs in a new process, whose server now describes the tool otherwise: without
    // a pins file it would pin that definition, but the approval was asked under the other one.
    const approve = warrant(
      [
        'approvals',
        'approve',
        jobId,
        'echo',
        '--digest',
        decision?.inputDigest as string,
        '--store',
        store,
        '--mcp-server',
        space.server('--echo-description', 'changed-after-the-request'),
        '--mcp-tool',
        'fixture.echo=write',
        '--caller',
        '{"id":"reviewer"}',
      ],
      space.cwd,
    );
    assert.equal(approve.code, 1, approve.stderr);
    const after = JSON.parse(
      warrant(['jobs', 'show', jobId, '--json', '--store', store], space.cwd).stdout,
    ) as {
      status: string;
      error: string;
    };
    assert.equal(after.status, 'failed');
    assert.equal(
      after.error.startsWith(
        `TOOL_DEFINITION_CHANGED: the tool's definition changed since approval was requested (${decision?.definitionDigest}, now sha256:`,
      ),
      true,
      after.error,
    );
    assert.deepEqual(space.called(), [], 'nothing sent downstream');
    assert.equal(warrant(['jobs', 'verify', '--all', '--store', store], space.cwd).code, 0);
  });
});
