// Runs the real executable (dist/esm/cli/main.js, built by `npm test`'s pretest) as a child process.
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';

const bin = resolve('dist/esm/cli/main.js');
const fixtures = resolve('test/cli/fixtures');

function warrant(args: string[], cwd = process.cwd()) {
  assert.ok(existsSync(bin), 'dist/esm/cli/main.js is missing: run `npm run build` first');
  const child = spawnSync(process.execPath, [bin, ...args], {
    cwd,
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: child.status, stdout: child.stdout, stderr: child.stderr };
}

function planFile(plan: unknown): string {
  const dir = mkdtempSync(join(tmpdir(), 'warrant-cli-'));
  const file = join(dir, 'plan.json');
  writeFileSync(file, typeof plan === 'string' ? plan : JSON.stringify(plan));
  return file;
}

function assertOneLineError(stderr: string): void {
  assert.doesNotMatch(stderr, /\n\s+at /, 'no stack trace');
}

describe('warrant (no command)', () => {
  it('prints usage and exits 2 without a command, 0 with --help', () => {
    const none = warrant([]);
    assert.equal(none.code, 2);
    assert.match(none.stdout, /Usage: warrant <command>/);
    assert.equal(warrant(['--help']).code, 0);
    const unknown = warrant(['frobnicate']);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /unknown command "frobnicate"/);
    // A name every object has is no command either.
    for (const name of ['constructor', 'toString', '__proto__']) {
      const inherited = warrant([name]);
      assert.equal(inherited.code, 2, name);
      assert.match(inherited.stderr, /unknown command/, name);
    }
  });

  it('has --help on every command', () => {
    for (const command of ['run', 'serve', 'jobs', 'capabilities']) {
      const help = warrant([command, '--help']);
      assert.equal(help.code, 0, command);
      assert.match(help.stdout, new RegExp(`Usage: warrant ${command}`));
    }
  });
});

describe('warrant run', () => {
  it('runs a plan with a reference: progress and summary on stderr, job id on stdout, exit 0', () => {
    const file = planFile({
      version: '1.0',
      steps: [
        { id: 'hello', capability: 'system.echo', input: { message: 'hello' } },
        {
          id: 'count',
          capability: 'fixture.count',
          input: { text: { $ref: 'steps.hello.result.message' } },
        },
      ],
    });
    const run = warrant([
      'run',
      file,
      '--store',
      'memory',
      '--module',
      join(fixtures, 'modules.mjs'),
    ]);
    assert.equal(run.code, 0, run.stderr);
    const jobId = run.stdout.trim();
    assert.match(jobId, /^[0-9a-f-]{36}$/);
    // Not a terminal: the job id first, then a line as each step starts.
    assert.deepEqual(run.stderr.split('\n').slice(0, 3), [
      `job ${jobId}: 2 steps`,
      '[1/2] running system.echo (hello) ...',
      '[2/2] running fixture.count (count) ...',
    ]);
    assert.match(run.stderr, /step\s+capability\s+decision\s+status\s+duration/);
    assert.match(run.stderr, /hello\s+system\.echo\s+allow\s+completed\s+[\d.]+ ms/);
    assert.match(run.stderr, /count\s+fixture\.count\s+allow\s+completed/);
  });

  it('prints the job as JSON with --json', () => {
    const file = planFile({
      version: '1.0',
      steps: [{ id: 'e', capability: 'system.echo', input: { message: 'json' } }],
    });
    const run = warrant(['run', file, '--store', 'memory', '--json']);
    assert.equal(run.code, 0);
    const job = JSON.parse(run.stdout) as {
      status: string;
      result: { message: string };
      events: unknown[];
    };
    assert.equal(job.status, 'completed');
    assert.equal(job.result.message, 'json');
    assert.equal(job.events.length, 5);
  });

  it('exits 1 on a failed job (a denial by default policy, or a capability that throws)', () => {
    const denied = warrant([
      'run',
      planFile({
        version: '1.0',
        steps: [{ id: 'w', capability: 'fs.write', input: { path: 'x', content: 'y' } }],
      }),
      '--store',
      'memory',
      '--fs-root',
      tmpdir(),
    ]);
    assert.equal(denied.code, 1);
    assert.match(
      denied.stderr,
      /✖ \[1\/1\] w \(fs\.write\) denied: Write capability requires explicit approval\./,
    );
    assert.match(denied.stderr, /w\s+fs\.write\s+deny\s+failed/);
    const failed = warrant([
      'run',
      planFile({ version: '1.0', steps: [{ id: 'x', capability: 'fixture.explode' }] }),
      '--store',
      'memory',
      '--module',
      join(fixtures, 'modules.mjs'),
    ]);
    assert.equal(failed.code, 1);
    assert.match(failed.stderr, /fixture exploded/);
  });

  it('lets an --authorizer file approve a write, and records it by its own name and the caller', () => {
    const root = mkdtempSync(join(tmpdir(), 'warrant-cli-root-'));
    const plan = planFile({
      version: '1.0',
      steps: [{ id: 'w', capability: 'fs.write', input: { path: 'out.txt', content: 'ok' } }],
    });
    const run = warrant([
      'run',
      plan,
      '--store',
      'memory',
      '--fs-root',
      root,
      '--authorizer',
      join(fixtures, 'allow-all.mjs'),
      '--caller',
      '{"id":"ops-1"}',
      '--json',
    ]);
    assert.equal(run.code, 0, run.stderr);
    assert.ok(existsSync(join(root, 'out.txt')));
    const job = JSON.parse(run.stdout) as {
      caller?: unknown;
      steps: { decision?: { outcome: string; authorizer?: string } }[];
    };
    assert.deepEqual(job.caller, { id: 'ops-1' });
    assert.equal(job.steps[0]?.decision?.outcome, 'allow');
    assert.equal(job.steps[0]?.decision?.authorizer, 'allow-all');
  });

  it('exits 2 with the issues when admission refuses the plan', () => {
    const run = warrant([
      'run',
      planFile({
        version: '1.0',
        steps: [
          { id: 'a', capability: 'nope' },
          { id: 'a', capability: 'system.echo' },
        ],
      }),
      '--store',
      'memory',
    ]);
    assert.equal(run.code, 2);
    assert.match(run.stderr, /Plan refused at admission \(PLAN_ADMISSION_REJECTED\)/);
    assert.match(run.stderr, /UNKNOWN_CAPABILITY/);
    assert.match(run.stderr, /DUPLICATE_STEP_ID/);
  });

  it('with --json, prints an admission refusal as { error, code, issues } on stdout, and suggests a close name', () => {
    const run = warrant([
      'run',
      planFile({
        version: '1.0',
        steps: [
          { id: 'a', capability: 'system.ecoh', input: { message: 'x' } },
          { id: 'a', capability: 'system.echo', input: { message: 'x' } },
        ],
      }),
      '--store',
      'memory',
      '--json',
    ]);
    assert.equal(run.code, 2, run.stderr);
    assert.deepEqual(JSON.parse(run.stdout), {
      error:
        'Execution plan failed validation: steps[0] "a": capability "system.ecoh" is not registered; did you mean "system.echo"?; steps[1] "a": id is already used by steps[0]; step ids must be unique within a plan',
      code: 'PLAN_ADMISSION_REJECTED',
      issues: [
        {
          code: 'UNKNOWN_CAPABILITY',
          message:
            'steps[0] "a": capability "system.ecoh" is not registered; did you mean "system.echo"?',
          stepIndex: 0,
          stepId: 'a',
          field: 'capability',
          path: '/steps/0/capability',
          hint: 'did you mean "system.echo"?',
        },
        {
          code: 'DUPLICATE_STEP_ID',
          message:
            'steps[1] "a": id is already used by steps[0]; step ids must be unique within a plan',
          stepIndex: 1,
          stepId: 'a',
          field: 'id',
          path: '/steps/1/id',
        },
      ],
    });
    assert.match(run.stderr, /did you mean "system\.echo"\?/);
  });

  it('loads a TypeScript --module file through tsx', () => {
    const run = warrant([
      'run',
      planFile({
        version: '1.0',
        steps: [{ id: 's', capability: 'typed.shout', input: { text: 'quiet' } }],
      }),
      '--store',
      'memory',
      '--module',
      join(fixtures, 'typed-module.ts'),
      '--json',
    ]);
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual((JSON.parse(run.stdout) as { result: unknown }).result, { text: 'QUIET' });
  });

  it('summarises a long plan instead of a row per step', () => {
    const steps = Array.from({ length: 60 }, (_, index) => ({
      id: `e${index + 1}`,
      capability: 'system.echo',
      input: { message: 'x' },
    }));
    const run = warrant(['run', planFile({ version: '1.0', steps }), '--store', 'memory']);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /\[60\/60\] running system\.echo \(e60\) \.\.\./);
    assert.match(run.stderr, /^\.\.\. 50 more/m);
    assert.match(run.stderr, /^60 steps: 60 completed$/m);
    assert.doesNotMatch(run.stderr, /^e30\s/m);
  });

  it('exits 2 with one line for a missing file, invalid JSON, a bad module, a bad option', () => {
    const cases: [string[], RegExp][] = [
      [
        ['run', '/no/such/plan.json', '--store', 'memory'],
        /plan file \/no\/such\/plan\.json: file not found/,
      ],
      [['run', planFile('{not json'), '--store', 'memory'], /is not valid JSON/],
      [
        [
          'run',
          planFile({ version: '1.0', steps: [] }),
          '--store',
          'memory',
          '--module',
          '/no/such/module.mjs',
        ],
        /--module \/no\/such\/module\.mjs: file not found/,
      ],
      [
        [
          'run',
          planFile({ version: '1.0', steps: [] }),
          '--store',
          'memory',
          '--module',
          join(fixtures, 'not-a-module.mjs'),
        ],
        /must be a capability module/,
      ],
      [
        [
          'run',
          planFile({ version: '1.0', steps: [] }),
          '--store',
          'memory',
          '--authorizer',
          join(fixtures, 'not-a-module.mjs'),
        ],
        /authorize\(context\) method/,
      ],
      [['run', '--bogus'], /Unknown option '--bogus'/],
      [['run'], /expected exactly one plan file/],
    ];
    for (const [args, message] of cases) {
      const run = warrant(args);
      assert.equal(run.code, 2, `${args.join(' ')}: ${run.stderr}`);
      assert.match(run.stderr, message);
      assert.equal(run.stderr.trim().split('\n').length, 1, run.stderr);
      assertOneLineError(run.stderr);
    }
  });
});

describe('warrant capabilities', () => {
  it('lists built-ins and module capabilities, describes one, and exits 1 for an unknown name', () => {
    const list = warrant(['capabilities', '--module', join(fixtures, 'modules.mjs')]);
    assert.equal(list.code, 0);
    assert.match(list.stdout, /system\.echo\s+1\.0\.0\s+read/);
    assert.match(list.stdout, /fixture\.count/);
    assert.doesNotMatch(list.stdout, /fs\.read/, 'fs.* needs --fs-root');
    const one = warrant(['capabilities', 'system.echo', '--json']);
    assert.deepEqual(JSON.parse(one.stdout).inputSchema, {
      message: { type: 'string', required: true, description: 'Text to echo' },
    });
    const unknown = warrant(['capabilities', 'nope']);
    assert.equal(unknown.code, 1);
  });

  it('--plan-schema prints the plan schema of the registered capabilities, the same bytes each run', () => {
    const args = ['capabilities', '--plan-schema', '--module', join(fixtures, 'modules.mjs')];
    const printed = warrant([...args, '--plan-versions', '1.0,2.0']);
    assert.equal(printed.code, 0, printed.stderr);
    const schema = JSON.parse(printed.stdout) as {
      $schema: string;
      properties: {
        version: unknown;
        steps: { items: { oneOf: { properties: { capability: { const: string } } }[] } };
      };
    };
    assert.equal(schema.$schema, 'https://json-schema.org/draft/2020-12/schema');
    assert.deepEqual(schema.properties.version, { const: '2.0' });
    assert.deepEqual(
      schema.properties.steps.items.oneOf.map((branch) => branch.properties.capability.const),
      [
        'system.echo',
        'system.status',
        'http.get',
        'http.status',
        'fixture.count',
        'fixture.explode',
      ],
    );
    assert.equal(warrant([...args, '--plan-versions', '1.0,2.0']).stdout, printed.stdout);
    assert.deepEqual(JSON.parse(warrant(args).stdout).properties.version, { const: '1.0' });
    const named = warrant(['capabilities', 'system.echo', '--plan-schema']);
    assert.equal(named.code, 2);
    assert.match(named.stderr, /--plan-schema takes no capability name/);
  });
});

// docs/api.md, "Prepared effects": http.get refuses internal addresses unless
// --http-allow-private, which the run passes on to the built-in module.
describe('warrant run --http-allow-private', () => {
  it('denies http.get to a loopback server without it (nothing sent), and reaches it with it', async () => {
    let requests = 0;
    const server = createServer((_request, response) => {
      requests += 1;
      response.end('reached');
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    const { port } = server.address() as AddressInfo;
    const file = planFile({
      version: '1.0',
      steps: [{ id: 'get', capability: 'http.get', input: { url: `http://127.0.0.1:${port}/` } }],
    });
    const args = ['run', file, '--store', 'memory', '--json', '--http-allow', `127.0.0.1:${port}`];
    // Asynchronous: the server answers from this process while the child runs.
    const run = (extra: string[]) =>
      new Promise<{ code: number | null; stdout: string }>((done) => {
        execFile(process.execPath, [bin, ...args, ...extra], { timeout: 60_000 }, (error, stdout) =>
          done({ code: error === null ? 0 : (error.code as number | null), stdout }),
        );
      });
    try {
      const refused = await run([]);
      assert.equal(refused.code, 1);
      const job = JSON.parse(refused.stdout) as { error: string; steps: { effect: unknown }[] };
      assert.match(job.error, /^EFFECT_REFUSED: 127\.0\.0\.1 is a loopback address/);
      assert.deepEqual((job.steps[0]?.effect as { addresses: string[] }).addresses, ['127.0.0.1']);
      assert.equal(requests, 0);
      const reached = await run(['--http-allow-private']);
      assert.equal(reached.code, 0, reached.stdout);
      assert.equal(
        (JSON.parse(reached.stdout) as { result: { body: string } }).result.body,
        'reached',
      );
      assert.equal(requests, 1);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  it('refuses --notify-allow-private without --notify', () => {
    const file = planFile({ version: '1.0', steps: [{ id: 'a', capability: 'system.status' }] });
    const run = warrant(['run', file, '--store', 'memory', '--notify-allow-private']);
    assert.equal(run.code, 2);
    assert.match(run.stderr, /--notify-allow-private needs --notify <url>/);
  });
});

describe('warrant run with --mcp-server', () => {
  const downstream = `fixture=${process.execPath} ${resolve('test/mcp/fixtures/downstream-server.mjs')}`;

  it('governs downstream MCP tools: a read tool runs, a write tool is denied by default, and the process exits', () => {
    const plan = planFile({
      version: '1.0',
      steps: [
        { id: 'echo', capability: 'fixture.echo', input: { text: 'through mcp' } },
        { id: 'refuse', capability: 'fixture.refuse' },
      ],
    });
    const run = warrant([
      'run',
      plan,
      '--store',
      'memory',
      '--json',
      '--mcp-server',
      downstream,
      '--mcp-tool',
      'fixture.echo=read',
      '--mcp-tool',
      'fixture.refuse=write',
    ]);
    assert.equal(run.code, 1, run.stderr);
    const job = JSON.parse(run.stdout) as { steps: { status: string; error?: string }[] };
    assert.equal(job.steps[0]?.status, 'completed');
    assert.equal(job.steps[1]?.error, 'Write capability requires explicit approval.');
  });

  it('refuses a tool without a valid risk, or naming an unknown server, with exit 2', () => {
    const plan = planFile({
      version: '1.0',
      steps: [{ id: 'e', capability: 'system.echo', input: { message: 'x' } }],
    });
    for (const [flags, message] of [
      [['--mcp-server', downstream, '--mcp-tool', 'fixture.echo=admin'], /risk/],
      [['--mcp-tool', 'nobody.echo=read'], /no --mcp-server named "nobody"/],
      [['--mcp-server', 'broken'], /--mcp-server expects <name>=<command line>/],
    ] as const) {
      const run = warrant(['run', plan, '--store', 'memory', ...flags]);
      assert.equal(run.code, 2, run.stderr);
      assert.match(run.stderr, message);
    }
  });
});
