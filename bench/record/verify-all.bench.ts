// `verify --all` at scale (issue 52 item 3): `runtime.verifyStore()` (what `warrant jobs verify
// --all` runs) on a SQLite and a PostgreSQL store of BENCH_VERIFY_JOBS one-step `system.echo`
// jobs (default 100,000), and on the same stores at BENCH_VERIFY_SMALL jobs (default 10,000) on
// the way there: jobs verified per second, the verifying process's CPU time per job, and its peak
// RSS at both sizes (memory flat in the store's size). Each verification runs in a fresh process
// (a fresh runtime opening the store, as the CLI does), timed from its first read on; the median of
// BENCH_ROUNDS (default 3) is shown. Targets: 20,000 jobs/s on SQLite, 10,000 on PostgreSQL.
//
// The stores are filled through the runtime with BENCH_VERIFY_IN_FLIGHT jobs in flight (default
// 64): real chains, real checkpoints. With BENCH_BASELINE=<dir> (`git archive <commit> src | tar
// -x -C <dir>`, `node_modules` linked), the code at <dir>/src verifies the same stores in the same
// rounds, interleaved, and each row gives the ratio. PostgreSQL is the tests' embedded server (or
// WARRANT_TEST_POSTGRES_URL). Run: npm run bench -- bench/record/verify-all.bench.ts
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { fmt, machine, median } from '../support/measure.js';
import type * as Root from '../../src/index.js';

interface Verified {
  /** Milliseconds of the verifyStore call. */
  readonly ms: number;
  /** CPU time of the process (user + system) during it, ms. */
  readonly cpuMs: number;
  /** Resident set before the call and the process's peak (MiB). */
  readonly rssBefore: number;
  readonly peakRss: number;
  readonly jobs: number;
  readonly problems: number;
}

/** The child: opens `option` with the package root under `root`, verifies, prints one line. */
async function verifyChild(root: string, option: string): Promise<void> {
  const url = pathToFileURL(join(root, 'src', 'index.ts')).href;
  const { OperatorRuntime } = (await import(url)) as typeof Root;
  const runtime = new OperatorRuntime({ store: option });
  // Opened (and recovered) before the clock starts: one job read.
  await runtime.listJobs({ limit: 1 });
  const rssBefore = process.memoryUsage.rss();
  const cpu = process.cpuUsage();
  const started = process.hrtime.bigint();
  const verification = await runtime.verifyStore();
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  const used = process.cpuUsage(cpu);
  const peak = process.resourceUsage().maxRSS * 1024;
  await runtime.close();
  const result: Verified = {
    ms,
    cpuMs: (used.user + used.system) / 1000,
    rssBefore: rssBefore / 2 ** 20,
    peakRss: peak / 2 ** 20,
    jobs: verification.jobs,
    problems: verification.problems.length,
  };
  if (!verification.ok) console.error(JSON.stringify(verification.problems.slice(0, 3)));
  console.log(JSON.stringify(result));
}

if (process.argv[2] === '--verify') {
  await verifyChild(process.argv[3] as string, process.argv[4] as string);
} else {
  await main();
}

function runChild(root: string, option: string): Promise<Verified> {
  const self = fileURLToPath(import.meta.url);
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', self, '--verify', root, option], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => (out += chunk));
    child.once('error', reject);
    child.once('exit', (code) => {
      const line = out.trim().split('\n').at(-1) ?? '';
      if (code !== 0 || line === '') reject(new Error(`verify child exited ${code}: ${out}`));
      else resolvePromise(JSON.parse(line) as Verified);
    });
  });
}

async function main(): Promise<void> {
  const { OperatorRuntime } = await import('../../src/index.js');
  const { createSystemModule } = await import('../../src/builtins/system-module.js');
  const { startTestPostgres } = await import('../../test/support/postgres.js');

  const total = Number(process.env.BENCH_VERIFY_JOBS ?? 100_000);
  const small = Math.min(total, Number(process.env.BENCH_VERIFY_SMALL ?? 10_000));
  const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
  const inFlight = Number(process.env.BENCH_VERIFY_IN_FLIGHT ?? 64);
  const baseline = process.env.BENCH_BASELINE;
  const here = resolve(fileURLToPath(new URL('../..', import.meta.url)));
  const codes: { name: string; root: string }[] = [{ name: 'this', root: here }];
  if (baseline !== undefined && baseline !== '')
    codes.push({ name: 'baseline', root: resolve(baseline) });

  new OperatorRuntime().use(createSystemModule());
  const plan = {
    version: '1.0' as const,
    goal: 'verify at scale',
    steps: [{ id: 'echo', capability: 'system.echo', input: { message: 'hello' } }],
  };

  /** Adds jobs until the store holds `count`; the runtime closes, so every event is sealed. */
  async function fill(option: string, from: number, count: number): Promise<number> {
    const runtime = new OperatorRuntime({ store: option });
    const started = process.hrtime.bigint();
    let next = from;
    await Promise.all(
      Array.from({ length: inFlight }, async () => {
        while (next++ < count) await runtime.executePlan(plan);
      }),
    );
    await runtime.close();
    return ((count - from) / Number(process.hrtime.bigint() - started)) * 1e9;
  }

  const postgres = await startTestPostgres();
  const directory = mkdtempSync(join(tmpdir(), 'warrant-bench-verify-'));
  const stores = [
    { name: 'SQLite', option: `sqlite:${join(directory, 'jobs.db')}` },
    { name: 'PostgreSQL', option: await postgres.createDatabase() },
  ];
  const rows: string[] = [];
  try {
    for (const store of stores) {
      let held = 0;
      for (const size of small === total ? [total] : [small, total]) {
        const rate = await fill(store.option, held, size);
        held = size;
        console.error(`verify-all: ${store.name} filled to ${size} (${fmt(rate, 0)} jobs/s)`);
        const samples = codes.map(() => [] as Verified[]);
        for (let round = 0; round < rounds; round++) {
          for (let offset = 0; offset < codes.length; offset++) {
            const at = (round + offset) % codes.length;
            const verified = await runChild((codes[at] as { root: string }).root, store.option);
            if (verified.jobs !== size || verified.problems !== 0)
              throw new Error(`${store.name}: ${JSON.stringify(verified)}`);
            (samples[at] as Verified[]).push(verified);
          }
        }
        const rateOf = (at: number) =>
          median((samples[at] as Verified[]).map((v) => (v.jobs / v.ms) * 1000));
        codes.forEach((code, at) => {
          const taken = samples[at] as Verified[];
          const ratio = at === 0 && codes.length > 1 ? `${fmt(rateOf(0) / rateOf(1), 2)}x` : '-';
          rows.push(
            `| ${store.name} | ${size.toLocaleString('en-US')} | ${code.name} | ${fmt(rateOf(at), 0)} | ${fmt(median(taken.map((v) => (v.cpuMs * 1000) / v.jobs)), 1)} | ${fmt(median(taken.map((v) => v.rssBefore)), 0)} | ${fmt(median(taken.map((v) => v.peakRss)), 0)} | ${ratio} |`,
          );
        });
      }
    }
  } finally {
    await postgres.stop();
    rmSync(directory, { recursive: true, force: true });
  }
  console.log(`\n### verifyStore (verify --all): ${machine()}, ${rounds} rounds, medians\n`);
  console.log(
    '| store | jobs | code | jobs/s | CPU µs/job | RSS before (MiB) | peak RSS (MiB) | vs baseline |',
  );
  console.log('| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: |');
  for (const row of rows) console.log(row);
}
