import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { OperatorRuntime } from '../../src/index.js';
import { checkStoreOption, openStore } from '../../src/stores/open-store.js';
import { MemoryJobStore } from '../../src/stores/memory/memory-store.js';
import { PostgresJobStore } from '../../src/stores/postgres/postgres-store.js';
import { SqliteJobStore } from '../../src/stores/sqlite/sqlite-store.js';
import { CoreStore } from '../support/core-store.js';
import { register } from '../support/runtime-fixtures.js';
import { stepRequests } from '../support/step-requests.js';

describe('store selection', () => {
  it('accepts memory (default), sqlite:<file> and postgres URLs, opening nothing while checking', () => {
    for (const option of [
      undefined,
      'memory',
      'sqlite:/no/such/dir/jobs.db',
      'sqlite::memory:',
      'postgres://user:pw@127.0.0.1:1/none',
      'postgresql://localhost/db',
      'postgres://localhost/db?statement_timeout=0',
      'postgres://localhost/db?statement_timeout=5000',
    ]) {
      assert.doesNotThrow(() => checkStoreOption(option), String(option));
    }
  });

  it('refuses unknown stores, sqlite: without a file, malformed postgres URLs and statement time-outs with RUNTIME_OPTIONS_INVALID', () => {
    for (const option of [
      'redis://x',
      'sqlite:',
      'postgres://u@[bad/db',
      'postgres:/x',
      'postgres://localhost/db?statement_timeout=5s',
      'postgres://localhost/db?statement_timeout=-1',
      'postgres://localhost/db?statement_timeout=1&statement_timeout=2',
      42,
      {},
      '',
    ]) {
      assert.throws(
        () => checkStoreOption(option),
        { name: 'TypeError', code: 'RUNTIME_OPTIONS_INVALID' },
        String(option),
      );
    }
  });

  it('opens the store the option names (PostgreSQL connects on first use, not here)', async () => {
    assert.ok(openStore(undefined, { maxJobs: 5 }) instanceof MemoryJobStore);
    assert.ok(openStore('memory', { maxJobs: 5 }) instanceof MemoryJobStore);
    const sqlite = await openStore(
      `sqlite:${join(mkdtempSync(join(tmpdir(), 'warrant-open-')), 'jobs.db')}`,
      { maxJobs: 5 },
    );
    assert.ok(sqlite instanceof SqliteJobStore);
    await sqlite.close();
    const postgres = await openStore('postgres://user:pw@127.0.0.1:1/none', { maxJobs: 5 });
    assert.ok(postgres instanceof PostgresJobStore);
    await postgres.close();
  });
});

describe('the runtime opens a durable store on first use (docs/decisions.md, "Light import")', () => {
  it('a store still opening when close() is called is closed once open, and a read begun before close() still answers', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'warrant-open-')), 'jobs.db');
    const runtime = new OperatorRuntime({ store: `sqlite:${file}` });
    const listing = runtime.listJobs();
    const closing = runtime.close();
    assert.deepEqual(await listing, []);
    await closing;
    // The store was opened (the file exists) and closed: SQLite removes its WAL file when the
    // last connection closes; a store opened after close() would keep it.
    assert.ok(existsSync(file));
    assert.equal(existsSync(`${file}-wal`), false);
  });

  it('a store that failed to open is tried again on the next call', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'warrant-open-'));
    const runtime = new OperatorRuntime({ store: `sqlite:${join(dir, 'later', 'jobs.db')}` });
    await assert.rejects(runtime.listJobs(), { code: 'STORE_OPEN_FAILED' });
    mkdirSync(join(dir, 'later'));
    assert.deepEqual(await runtime.listJobs(), []);
    await runtime.close();
  });
});

// better-sqlite3 without its compiled binding, as a package manager that skips build scripts
// (pnpm) leaves it: an installed copy of the package (its JavaScript, no build/) beside links to
// every other dependency, and the built package linked in; node runs with --preserve-symlinks so
// that the package resolves better-sqlite3 to that copy. Nothing in node_modules is changed.
describe('better-sqlite3 installed without its native binding', () => {
  const repo = fileURLToPath(new URL('../../', import.meta.url));
  let dir: string;

  before(() => {
    assert.ok(existsSync(join(repo, 'dist/esm/index.js')), 'run `npm run build` first');
    dir = mkdtempSync(join(tmpdir(), 'warrant-nobinding-'));
    const modules = join(dir, 'node_modules');
    mkdirSync(modules);
    const installed = realpathSync(join(repo, 'node_modules'));
    for (const name of readdirSync(installed)) {
      // better-sqlite3-node22 (the Node-API build Node 22 and later load) is left out too: without
      // it every Node.js falls back to better-sqlite3 (src/stores/sqlite/sqlite-driver.cts).
      if (name === 'better-sqlite3' || name === 'better-sqlite3-node22' || name.startsWith('.'))
        continue;
      symlinkSync(join(installed, name), join(modules, name));
    }
    const copy = join(modules, 'better-sqlite3');
    mkdirSync(copy);
    copyFileSync(join(installed, 'better-sqlite3/package.json'), join(copy, 'package.json'));
    cpSync(join(installed, 'better-sqlite3/lib'), join(copy, 'lib'), { recursive: true });
    const warrant = join(modules, 'warrant');
    mkdirSync(warrant);
    copyFileSync(join(repo, 'package.json'), join(warrant, 'package.json'));
    symlinkSync(join(repo, 'dist'), join(warrant, 'dist'));
  });

  after(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  function run(args: string[]): { stdout: string; stderr: string } {
    const child = spawnSync(process.execPath, ['--preserve-symlinks', ...args], {
      cwd: dir,
      encoding: 'utf8',
      env: { ...process.env, NODE_OPTIONS: '' },
      timeout: 60_000,
    });
    assert.equal(child.error, undefined);
    return { stdout: child.stdout, stderr: child.stderr };
  }

  const REPORT = `
    const runtime = new OperatorRuntime({ store: 'sqlite:jobs.db' });
    await runtime.listJobs().then(
      () => console.log('opened'),
      (error) => console.log(JSON.stringify({ code: error.code, message: error.message })),
    );
  `;

  function assertOneLineFix(stdout: string): void {
    const { code, message } = JSON.parse(stdout.trim()) as { code: string; message: string };
    assert.equal(code, 'STORE_OPEN_FAILED');
    assert.doesNotMatch(message, /[\r\n]/);
    assert.match(message, /better-sqlite3's native binding is not built/);
    assert.match(message, /npm rebuild better-sqlite3/);
    assert.match(message, /pnpm approve-builds/);
  }

  it('opening the SQLite store says so in one line naming the fix, ESM and CommonJS', () => {
    const esm = run([
      '--input-type=module',
      '-e',
      `import { OperatorRuntime } from 'warrant'; ${REPORT}`,
    ]);
    assertOneLineFix(esm.stdout);
    const cjs = run([
      '-e',
      `const { OperatorRuntime } = require('warrant'); (async () => { ${REPORT} })();`,
    ]);
    assertOneLineFix(cjs.stdout);
  });

  it('the program prints that line whole and exits 2', () => {
    const child = spawnSync(
      process.execPath,
      [
        '--preserve-symlinks',
        '--preserve-symlinks-main',
        join(dir, 'node_modules/warrant/dist/esm/cli/main.js'),
        'jobs',
        '--store',
        'sqlite:jobs.db',
      ],
      { cwd: dir, encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' }, timeout: 60_000 },
    );
    assert.equal(child.status, 2, child.stderr);
    const lines = child.stderr.trim().split('\n');
    assert.equal(lines.length, 1, child.stderr);
    assert.match(
      lines[0] as string,
      /native binding is not built; run `npm rebuild better-sqlite3`/,
    );
  });

  it('better-sqlite3 not installed at all: one line naming the install command, ESM and CommonJS', () => {
    const copy = join(dir, 'node_modules/better-sqlite3');
    renameSync(copy, `${copy}.away`);
    try {
      for (const args of [
        ['--input-type=module', '-e', `import { OperatorRuntime } from 'warrant'; ${REPORT}`],
        ['-e', `const { OperatorRuntime } = require('warrant'); (async () => { ${REPORT} })();`],
      ]) {
        const { stdout } = run(args);
        const { code, message } = JSON.parse(stdout.trim()) as { code: string; message: string };
        assert.equal(code, 'STORE_OPEN_FAILED');
        assert.equal(
          message,
          'Cannot open the store: its driver better-sqlite3 is not installed (run `npm install better-sqlite3`)',
        );
      }
    } finally {
      renameSync(`${copy}.away`, copy);
    }
  });

  it('a binding that does not load in this Node.js (another ABI, another platform) says so in one line with the same fix', () => {
    // Not an ELF object at all: dlopen refuses it with ERR_DLOPEN_FAILED, as it refuses a
    // binding compiled for another Node.js.
    const release = join(dir, 'node_modules/better-sqlite3/build/Release');
    mkdirSync(release, { recursive: true });
    writeFileSync(join(release, 'better_sqlite3.node'), 'not a shared object\n');
    try {
      const { stdout } = run([
        '--input-type=module',
        '-e',
        `import { OperatorRuntime } from 'warrant'; ${REPORT}`,
      ]);
      const { code, message } = JSON.parse(stdout.trim()) as { code: string; message: string };
      assert.equal(code, 'STORE_OPEN_FAILED');
      assert.doesNotMatch(message, /[\r\n]/);
      assert.match(message, /native binding does not load in Node\.js \d+\.\d+\.\d+/);
      assert.match(message, /npm rebuild better-sqlite3/);
    } finally {
      rmSync(join(dir, 'node_modules/better-sqlite3/build'), { recursive: true, force: true });
    }
  });
});

describe('a store object (docs/api.md, "Stores")', () => {
  it('runs, reads, verifies and resumes jobs on a store with the core methods only, and closes it', async () => {
    const store = new CoreStore();
    const runtime = new OperatorRuntime({
      store,
      approvals: { approver: { canApprove: () => true } },
    });
    const [read, write] = register(
      runtime,
      { execute: () => ({ value: 41 }) },
      { risk: 'write', execute: ({ input }: { input: unknown }) => ({ wrote: input }) },
    ) as [string, string];
    const plan = {
      version: '1.0' as const,
      goal: 'on a host store',
      steps: [
        { id: 'look', capability: read, input: {} },
        { id: 'save', capability: write, input: { n: { $ref: 'steps.look.result.value' } } },
      ],
    };
    const waiting = await runtime.executePlan(plan, { caller: { id: 'alice' } });
    assert.equal(waiting.status, 'awaiting_approval');
    // Written to the host's store: what it holds is what the runtime reads back.
    assert.equal(store.jobs.get(waiting.id)?.status, 'awaiting_approval');
    assert.deepEqual(await runtime.getJob(waiting.id), store.get(waiting.id));
    const [request] = stepRequests(await runtime.listApprovals());
    assert.equal(request?.jobId, waiting.id);
    // Taken up again from what the store's `get` answers, through `update`.
    const done = await runtime.decideApproval({
      jobId: waiting.id,
      stepId: 'save',
      inputDigest: request?.inputDigest as string,
      approver: { id: 'bob' },
      decision: 'approve',
    });
    assert.equal(done.status, 'completed');
    assert.deepEqual(done.steps[1]?.result, { wrote: { n: 41 } });
    assert.equal(store.jobs.get(waiting.id)?.status, 'completed');
    assert.deepEqual(
      store.jobs.get(waiting.id)?.events.map((event) => event.type),
      done.events.map((event) => event.type),
    );
    assert.deepEqual(
      (await runtime.listJobs({ status: 'completed' })).map((job) => job.id),
      [waiting.id],
    );
    assert.equal((await runtime.verifyJob(waiting.id))?.ok, true);
    assert.deepEqual(runtime.storeAvailability(), { writable: true });
    assert.equal(store.closed, 0);
    await runtime.close();
    assert.equal(store.closed, 1);
  });

  it('refuses an object without the core methods, naming the first one missing', () => {
    const store = new CoreStore();
    const withoutList = {
      create: store.create.bind(store),
      update: store.update.bind(store),
      get: store.get.bind(store),
      close: store.close.bind(store),
    };
    assert.throws(
      () => new OperatorRuntime({ store: withoutList as never }),
      (error: Error & { code?: string }) =>
        error.code === 'RUNTIME_OPTIONS_INVALID' && /list is undefined/.test(error.message),
    );
    const hostile = new Proxy(store, {
      get: () => {
        throw new Error('trap');
      },
    });
    assert.throws(
      () => new OperatorRuntime({ store: hostile }),
      (error: Error & { code?: string }) =>
        error.code === 'RUNTIME_OPTIONS_INVALID' &&
        /options.store.create could not be read/.test(error.message),
    );
  });
});
