// Exit codes of the real executable (dist/esm/cli/main.js, built by `npm test`'s pretest) at its
// edges (docs/guide/cli.md, "Exit codes"): work that never settles is 1, never 0; a bad module,
// a file that is not a regular file of at most 10 MiB, and a store that cannot be opened are 2,
// with one line, before any plan runs.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';

const bin = resolve('dist/esm/cli/main.js');
const fixtures = resolve('test/cli/fixtures');
const MiB = 1024 * 1024;

function warrant(args: string[], options: { cwd?: string; timeout?: number } = {}) {
  assert.ok(existsSync(bin), 'dist/esm/cli/main.js is missing: run `npm run build` first');
  const child = spawnSync(process.execPath, [bin, ...args], {
    cwd: options.cwd ?? process.cwd(),
    encoding: 'utf8',
    input: '', // `warrant mcp` stops when stdin closes
    timeout: options.timeout ?? 30_000,
  });
  return { code: child.status, stdout: child.stdout, stderr: child.stderr };
}

function scratch(): string {
  return mkdtempSync(join(tmpdir(), 'warrant-exit-'));
}

/** Writes `files` (name → text) into a new directory and returns their paths by name. */
function writeFiles<T extends Record<string, string>>(files: T): { [K in keyof T]: string } {
  const dir = scratch();
  return Object.fromEntries(
    Object.entries(files).map(([name, text]) => {
      writeFileSync(join(dir, name), text);
      return [name, join(dir, name)];
    }),
  ) as { [K in keyof T]: string };
}

function oneLine(stderr: string, pattern: RegExp, context: string): void {
  assert.equal(stderr.trim().split('\n').length, 1, `${context}: ${stderr}`);
  assert.match(stderr.trimEnd(), pattern, context);
  assert.doesNotMatch(stderr, /\n\s+at /, `${context}: no stack trace`);
}

/** `warrant run` prints its progress first (the job id, each step started): the error is last. */
function progressThenOneLine(stderr: string, progress: RegExp[], pattern: RegExp, context: string) {
  const lines = stderr.trimEnd().split('\n');
  assert.equal(lines.length, progress.length + 1, `${context}: ${stderr}`);
  progress.forEach((line, index) => assert.match(lines[index] as string, line, context));
  oneLine(`${lines.at(-1)}\n`, pattern, context);
}

const capability = (name: string, execute: string, risk = 'read') =>
  `{ name: '${name}', version: '1.0.0', description: 'test', risk: '${risk}', execute: ${execute} }`;
const moduleOf = (name: string, declared: string[], capabilities: string[]) =>
  `export default { manifest: { name: '${name}', version: '1.0.0', capabilities: ${JSON.stringify(declared)} }, capabilities: [${capabilities.join(', ')}] };\n`;

const files = writeFiles({
  'hang.mjs': moduleOf(
    'hang',
    ['fixture.hang'],
    [capability('fixture.hang', '() => new Promise(() => {})')],
  ),
  'authorizer-hangs.mjs': 'export default { authorize: () => new Promise(() => {}) };\n',
  'top-level-await.mjs': 'await new Promise(() => {});\nexport default [];\n',
  'mismatch.mjs': moduleOf('mismatch', ['fixture.other'], [capability('fixture.m', '() => 1')]),
  'duplicate-builtin.mjs': moduleOf('dup', ['system.echo'], [capability('system.echo', '() => 1')]),
  'bad-risk.mjs': moduleOf('risky', ['fixture.r'], [capability('fixture.r', '() => 1', 'admin')]),
  'throwing-proxy.mjs':
    "export default new Proxy({}, { has() { throw new Error('trap has\\n    at evil (x.js:1:1)'); }, get() { throw new Error('trap get'); } });\n",
  'throwing-array-proxy.mjs': 'export default new Proxy([], { get() { throw 42; } });\n',
  'throws-at-load.mjs':
    "throw new Proxy({}, { get() { throw new Error('hostile getter'); }, getPrototypeOf() { throw new Error('hostile prototype'); } });\n",
  'plan.json': JSON.stringify({
    version: '1.0',
    steps: [{ id: 'x', capability: 'fixture.hang' }],
  }),
  'echo.json': JSON.stringify({
    version: '1.0',
    steps: [{ id: 'e', capability: 'system.echo', input: { message: 'hi' } }],
  }),
});

describe('warrant run: work that never settles exits 1, naming it', () => {
  it('a capability whose promise never settles', () => {
    const run = warrant([
      'run',
      files['plan.json'],
      '--store',
      'memory',
      '--module',
      files['hang.mjs'],
    ]);
    assert.equal(run.code, 1, run.stderr);
    progressThenOneLine(
      run.stderr,
      [/^job [0-9a-f-]{36}: 1 step$/, /^\[1\/1\] running fixture\.hang \(x\) \.\.\.$/],
      /^warrant run: the job never settled: step "x" \(capability "fixture\.hang"\) is still running \(job [0-9a-f-]{36}\)$/,
      'capability',
    );
    assert.equal(run.stdout, '');
  });

  it('an authorizer whose promise never settles', () => {
    const run = warrant([
      'run',
      files['plan.json'],
      '--store',
      'memory',
      '--module',
      files['hang.mjs'],
      '--authorizer',
      files['authorizer-hangs.mjs'],
    ]);
    assert.equal(run.code, 1, run.stderr);
    progressThenOneLine(
      run.stderr,
      [/^job [0-9a-f-]{36}: 1 step$/],
      /the job never settled: step "x" \(capability "fixture\.hang"\) is still waiting for the authorizer/,
      'authorizer',
    );
  });

  it('a module whose top-level await never settles', () => {
    const run = warrant([
      'run',
      files['echo.json'],
      '--store',
      'memory',
      '--module',
      files['top-level-await.mjs'],
    ]);
    assert.equal(run.code, 1, run.stderr);
    oneLine(
      run.stderr,
      /^warrant run: --module \S+top-level-await\.mjs never finished loading \(its top-level await never settled\)$/,
      'module',
    );
  });
});

describe('a bad module is exit 2 in every form and every command', () => {
  const plan = files['echo.json'];
  const cases: [string, string[], RegExp][] = [
    [
      'manifest mismatch',
      ['--module', files['mismatch.mjs']],
      /not declared in manifest\.capabilities/,
    ],
    [
      'duplicate of a built-in',
      ['--module', files['duplicate-builtin.mjs']],
      /"system\.echo" is already registered/,
    ],
    [
      'the same module twice',
      ['--module', join(fixtures, 'modules.mjs'), '--module', join(fixtures, 'modules.mjs')],
      /already registered/,
    ],
    [
      'bad risk',
      ['--module', files['bad-risk.mjs']],
      /risk must be "read", "write" or "destructive"/,
    ],
    [
      'throwing proxy',
      ['--module', files['throwing-proxy.mjs']],
      /the default export cannot be read \(trap has\)/,
    ],
    [
      'throwing array proxy',
      ['--module', files['throwing-array-proxy.mjs']],
      /the default export cannot be read \(42\)$/,
    ],
    [
      'a module that throws a hostile value while it loads',
      ['--module', files['throws-at-load.mjs']],
      /^warrant run: --module \S+throws-at-load\.mjs: could not be loaded \(.+\)$/,
    ],
    [
      'throwing proxy as the authorizer',
      ['--authorizer', files['throwing-proxy.mjs']],
      /^warrant \w+: --authorizer \S+: the default export cannot be read \(trap get\)$/,
    ],
  ];
  // Every form through `run`; two of them through every other command that loads modules.
  const everywhere = new Set(['manifest mismatch', 'throwing proxy']);
  for (const [name, flags, message] of cases) {
    it(name, () => {
      const commands = everywhere.has(name)
        ? [['run', plan], ['capabilities'], ['mcp'], ['serve', '--port', '0']]
        : [['run', plan]];
      for (const command of commands) {
        const result = warrant([...command, '--store', 'memory', ...flags], { timeout: 20_000 });
        const context = `${name}, ${command[0]}`;
        assert.equal(result.code, 2, `${context}: ${result.stderr}`);
        oneLine(result.stderr, message, context);
        assert.match(result.stderr, new RegExp(`^warrant ${command[0]}: --(module|authorizer) `));
      }
    });
  }
});

describe('files the program reads are regular files of at most 10 MiB', () => {
  const dir = scratch();
  const fifo = join(dir, 'fifo');
  execFileSync('mkfifo', [fifo]);
  const directory = join(dir, 'a-directory');
  mkdirSync(directory);
  const large = join(dir, 'large.json');
  writeFileSync(large, Buffer.alloc(11 * MiB, ' '));
  const largeModule = join(dir, 'large.mjs');
  writeFileSync(largeModule, Buffer.alloc(11 * MiB, ' '));
  const unfit: [string, string, RegExp][] = [
    ['/dev/zero', '/dev/zero', /not a regular file \(a character device\)$/],
    ['a FIFO', fifo, /not a regular file \(a FIFO\)$/],
    ['a directory', directory, /not a regular file \(a directory\)$/],
    ['an 11 MiB file', large, /larger than 10 MiB$/],
  ];

  for (const [name, path, message] of unfit) {
    it(`refuses ${name} as a plan, a module and an authorizer with exit 2`, () => {
      const forms: [string[], string][] = [
        [['run', path], `plan file ${path}`],
        [
          ['run', files['echo.json'], '--module', name === 'an 11 MiB file' ? largeModule : path],
          '--module',
        ],
        [['run', files['echo.json'], '--authorizer', path], '--authorizer'],
      ];
      for (const [args, label] of forms) {
        const run = warrant([...args, '--store', 'memory'], { timeout: 20_000 });
        assert.equal(run.code, 2, `${name} ${label}: ${run.stderr}`);
        oneLine(run.stderr, message, `${name} ${label}`);
        assert.ok(run.stderr.startsWith(`warrant run: ${label}`), run.stderr);
      }
    });
  }

  it('accepts a plan of exactly 10 MiB', () => {
    const plan = join(dir, 'ten.json');
    const text = JSON.stringify({
      version: '1.0',
      steps: [{ id: 'e', capability: 'system.echo', input: { message: 'ten' } }],
    });
    writeFileSync(plan, text + ' '.repeat(10 * MiB - text.length));
    const run = warrant(['run', plan, '--store', 'memory']);
    assert.equal(run.code, 0, run.stderr);
  });
});

describe('a store that cannot be opened is exit 2 at start-up, before any plan runs', () => {
  it('refuses a corrupt SQLite file in run, jobs, mcp and serve, and runs nothing', () => {
    const dir = scratch();
    const corrupt = join(dir, 'corrupt.db');
    writeFileSync(corrupt, 'this is not a SQLite database'.repeat(200));
    const root = join(dir, 'root');
    mkdirSync(root);
    const plan = join(dir, 'write.json');
    writeFileSync(
      plan,
      JSON.stringify({
        version: '1.0',
        steps: [{ id: 'w', capability: 'fs.write', input: { path: 'out.txt', content: 'x' } }],
      }),
    );
    const store = `sqlite:${corrupt}`;
    for (const args of [
      ['run', plan, '--fs-root', root, '--authorizer', join(fixtures, 'allow-all.mjs')],
      ['jobs'],
      ['mcp'],
      ['serve', '--port', '0'],
    ]) {
      const result = warrant([...args, '--store', store], { timeout: 20_000 });
      assert.equal(result.code, 2, `${args[0]}: ${result.stderr}`);
      oneLine(
        result.stderr,
        /cannot open the store sqlite:\S+corrupt\.db: file is not a database/,
        args.join(' '),
      );
    }
    assert.equal(existsSync(join(root, 'out.txt')), false, 'the plan did not run');
  });

  it('refuses an unreachable PostgreSQL server without showing its password', () => {
    const run = warrant(['jobs', '--store', 'postgres://warrant:s3cret@127.0.0.1:1/none']);
    assert.equal(run.code, 2, run.stderr);
    oneLine(
      run.stderr,
      /Cannot connect to the PostgreSQL store at postgres:\/\/warrant:\*\*\*@127\.0\.0\.1:1\/none/,
      'postgres',
    );
    assert.doesNotMatch(run.stderr, /s3cret/);
  });

  it('refuses malformed stores', () => {
    for (const [store, message] of [
      ['redis://x', /--store must be 'memory', 'sqlite:<file>' or a postgres:\/\/ URL/],
      ['sqlite:', /--store 'sqlite:' needs a file/],
      [
        'postgres://h/db?statement_timeout=soon',
        /statement_timeout must be one whole number of milliseconds/,
      ],
    ] as const) {
      const run = warrant(['run', files['echo.json'], '--store', store]);
      assert.equal(run.code, 2, `${store}: ${run.stderr}`);
      oneLine(run.stderr, message, store);
    }
  });

  it('creates ./.warrant/ only: a missing parent of any other SQLite file is exit 2, nothing created', () => {
    const cwd = scratch();
    const missing = join(cwd, 'no', 'such', 'dir', 'jobs.db');
    for (const store of [
      `sqlite:${missing}`,
      'sqlite:.warrant/nested/jobs.db',
      'sqlite:elsewhere/jobs.db',
    ]) {
      const run = warrant(['run', files['echo.json'], '--store', store], { cwd });
      assert.equal(run.code, 2, `${store}: ${run.stderr}`);
      oneLine(
        run.stderr,
        /the directory \S+ does not exist \(only \.\/\.warrant\/ is created\)$/,
        store,
      );
    }
    assert.equal(existsSync(join(cwd, 'no')), false);
    assert.equal(existsSync(join(cwd, 'elsewhere')), false);
    assert.equal(existsSync(join(cwd, '.warrant', 'nested')), false);
    const explicit = warrant(['run', files['echo.json'], '--store', 'sqlite:.warrant/jobs.db'], {
      cwd,
    });
    assert.equal(explicit.code, 0, explicit.stderr);
    assert.ok(existsSync(join(cwd, '.warrant', 'jobs.db')));
  });
});
