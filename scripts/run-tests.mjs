// Runs every test/**/*.test.ts file with node:test through a TypeScript loader. Node 20's runner finds nothing
// when given a directory, so the files are listed explicitly. Extra arguments are passed on
// (for example a single file: `npm test -- test/plan/admission.test.ts`).
//
// Files run as concurrent processes (docs/decisions.md, "Test runs"): WARRANT_TEST_CONCURRENCY,
// by default twice the available cores. Most files wait on child processes, sockets and
// databases, so two cores keep more than two files busy.
//
// WARRANT_TEST_SCOPE=node-dependent leaves out the files whose outcome does not depend on the
// Node version (the TypeScript compiler checks and the quality harness): CI runs them on its
// first Node only and this scope on the others (.ci/run). The files left out are printed.
//
// WARRANT_TEST_SHARD=<k>/<n> (1 <= k <= n) runs the k-th of n shares of the files: every n-th
// file of the sorted list from the k-th on, plus the files of EVERY_SHARD. CI runs the suite on
// its first Node and splits it between the others (docs/decisions.md, "Test runs").
//
// WARRANT_TEST_TIMES=<file> measures instead: each file runs as its own `node --test` process
// under /usr/bin/time (Linux), the same number at a time, and <file> gets one line per file
// (wall, user and sys seconds, exit status, tests counted, path), slowest CPU first. Only the
// output of failing files is printed; the totals (files, tests, CPU seconds) end the run.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';

/** Files whose outcome does not depend on the Node version that runs them, and why. */
const NODE_INDEPENDENT = {
  'test/quality/harness.test.ts':
    'the governance harness parses source with the TypeScript compiler',
  'test/capabilities/input-types.test.ts': 'tsc on examples/typed-inputs.ts',
  'test/examples/typecheck.test.ts': 'tsc on the examples as consumers of the package types',
  'test/contract/docs-typescript.test.ts': 'tsc on the TypeScript blocks of README.md and docs/',
};

/** Files every share runs: they exercise what differs most between Node versions. */
const EVERY_SHARD = {
  'test/stores/sqlite/sqlite-driver.test.ts': "the native SQLite driver's build for this Node",
  'test/stores/sqlite/sqlite-store.test.ts': 'the SQLite store on that driver',
  'test/stores/sqlite/wal-checkpointer.test.ts': 'that driver loaded again in a worker thread',
  'test/contract/exports.test.ts': 'the package loaded as ESM and CommonJS by this Node',
  'test/contract/light-import.test.ts': "this Node's module loaders, ESM and CommonJS",
  'test/contract/engines.test.ts': 'the engines of what an install brings',
  'test/cli/cli.test.ts': 'the built program started by this Node',
};

/** The files that take longest on their own (`WARRANT_TEST_TIMES`), longest first. */
const LONGEST = [
  'test/cli/serve-auth.test.ts',
  'test/workers/worker-crash.test.ts',
  'test/stores/postgres/postgres-store.test.ts',
  'test/workers/queued-cancel.test.ts',
  'test/approvals/multi-process.test.ts',
];

function findTests(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return findTests(path);
    return entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

function positiveInteger(name, fallback) {
  const text = process.env[name];
  if (text === undefined || text === '') return fallback;
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < 1) {
    console.error(`run-tests: ${name} must be a positive integer, got ${JSON.stringify(text)}`);
    process.exit(2);
  }
  return value;
}

const scope = process.env.WARRANT_TEST_SCOPE ?? 'all';
if (scope !== 'all' && scope !== 'node-dependent') {
  console.error(`run-tests: WARRANT_TEST_SCOPE must be "all" or "node-dependent", got ${scope}`);
  process.exit(2);
}
const requested = process.argv.slice(2).filter((arg) => !arg.startsWith('-'));
const flags = process.argv.slice(2).filter((arg) => arg.startsWith('-'));
let files = requested.length > 0 ? requested : findTests('test').sort();
if (scope === 'node-dependent') {
  const left = files.filter((file) => Object.hasOwn(NODE_INDEPENDENT, file.split('\\').join('/')));
  files = files.filter((file) => !left.includes(file));
  for (const file of left) {
    console.log(`run-tests: ${file} runs on CI's first Node only (${NODE_INDEPENDENT[file]})`);
  }
}
const shard = process.env.WARRANT_TEST_SHARD;
if (shard !== undefined && shard !== '') {
  const match = /^(\d+)\/(\d+)$/.exec(shard);
  const [k, n] = match === null ? [0, 0] : [Number(match[1]), Number(match[2])];
  if (!(n >= 1 && k >= 1 && k <= n)) {
    console.error(`run-tests: WARRANT_TEST_SHARD must be <k>/<n> with 1 <= k <= n, got ${shard}`);
    process.exit(2);
  }
  const every = (file) => Object.hasOwn(EVERY_SHARD, file.split('\\').join('/'));
  const shared = files.filter((file) => !every(file));
  const mine = new Set(shared.filter((_file, index) => index % n === k - 1));
  files = files.filter((file) => every(file) || mine.has(file));
  console.log(`run-tests: share ${k} of ${n}: ${files.length} files`);
}
if (files.length === 0) {
  console.error('run-tests: no test files found under test/');
  process.exit(1);
}
// The longest files start first, so that none of them is left running alone at the end while
// the other cores are idle (test/workers/ sorts last).
const first = files.filter((file) => LONGEST.includes(file.split('\\').join('/')));
files = [...first, ...files.filter((file) => !first.includes(file))];
const concurrency = positiveInteger('WARRANT_TEST_CONCURRENCY', 2 * availableParallelism());
// TypeScript through the tests' own loader (scripts/ts-loader.mjs), lighter than tsx per process
// and per module; WARRANT_TEST_LOADER=tsx runs the files through tsx instead.
const loader = process.env.WARRANT_TEST_LOADER === 'tsx' ? 'tsx' : './scripts/ts-loader.mjs';
const loaders = ['--import', loader, '--import', './test/support/unhandled-rejection-guard.ts'];
const times = process.env.WARRANT_TEST_TIMES;
if (times !== undefined && times !== '') {
  process.exit(await measure(times));
}
const result = spawnSync(
  process.execPath,
  [
    ...loaders,
    '--test',
    `--test-concurrency=${concurrency}`,
    '--test-reporter=spec',
    ...flags,
    ...files,
  ],
  { stdio: 'inherit' },
);
process.exit(result.status ?? 1);

/** Runs each file alone under /usr/bin/time, `concurrency` at a time; returns the exit code. */
async function measure(out) {
  const scratch = mkdtempSync(join(tmpdir(), 'warrant-test-times-'));
  const rows = [];
  const started = Date.now();
  const runOne = (file, index) =>
    new Promise((resolve) => {
      const timing = join(scratch, `${index}.time`);
      const child = spawn(
        '/usr/bin/time',
        [
          '-f',
          '%e %U %S',
          '-o',
          timing,
          process.execPath,
          ...loaders,
          '--test',
          '--test-reporter=spec',
          ...flags,
          file,
        ],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let output = '';
      child.stdout.on('data', (chunk) => (output += chunk));
      child.stderr.on('data', (chunk) => (output += chunk));
      child.on('close', (code) => {
        const [wall, user, sys] = readFileSync(timing, 'utf8').trim().split('\n').at(-1).split(' ');
        const tests = /ℹ tests (\d+)/.exec(output)?.[1] ?? '?';
        rows.push({ wall: +wall, user: +user, sys: +sys, code: code ?? 1, tests, file });
        if (code !== 0) console.log(output);
        console.log(`${wall}s ${user}u ${sys}s exit ${code} tests ${tests} ${file}`);
        resolve();
      });
    });
  let next = 0;
  const lane = async () => {
    while (next < files.length) {
      const index = next++;
      await runOne(files[index], index);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  rmSync(scratch, { recursive: true, force: true });
  rows.sort((a, b) => b.user + b.sys - (a.user + a.sys));
  const line = (r) => `${r.wall} ${r.user} ${r.sys} ${r.code} ${r.tests} ${r.file}`;
  writeFileSync(out, rows.map(line).join('\n') + '\n');
  const sum = (key) => rows.reduce((total, r) => total + (Number(r[key]) || 0), 0);
  const failed = rows.filter((r) => r.code !== 0);
  console.log(
    `run-tests: ${rows.length} files, ${sum('tests')} tests, ${failed.length} failed files, ` +
      `${(sum('user') + sum('sys')).toFixed(1)} s CPU, ${((Date.now() - started) / 1000).toFixed(1)} s wall`,
  );
  for (const r of failed) console.log(`run-tests: failed ${r.file}`);
  return failed.length === 0 ? 0 : 1;
}
