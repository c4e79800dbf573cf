// Durable throughput (issues 4 and 8): one-step jobs per second on the memory, SQLite and
// PostgreSQL stores, measured in one run, the memory store and raw driver loops (the same
// statements and commits per job, no Warrant: bench/fixtures/raw-stores.ts) as baselines. Sequential (one job
// at a time: the latency of a durable job) and 16 jobs in flight (what a server sees); then
// PostgreSQL shared by three processes. PostgreSQL is an embedded server started here (or
// WARRANT_TEST_POSTGRES_URL). Run: npm run bench -- bench/stores.ts
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { OperatorRuntime, createCapability } from '../src/index.js';
import { startTestPostgres } from '../test/support/postgres.js';
import {
  postgresColumns,
  rawPostgres,
  rawSqlite,
  sqliteColumns,
  sqliteSchema,
} from './fixtures/raw-stores.js';
import { fmt, machine, median, percentile } from './support/measure.js';

const rounds = Number(process.env.BENCH_ROUNDS ?? 7);
const jobsPerRound = Number(process.env.BENCH_OPERATIONS ?? 1000);
const processJobs = Number(process.env.BENCH_PROCESS_JOBS ?? 2000);

new OperatorRuntime().use({
  manifest: { name: 'bench-stores', version: '1', capabilities: ['bench.stores.echo'] },
  capabilities: [
    createCapability({
      name: 'bench.stores.echo',
      version: '1',
      description: 'returns its input',
      risk: 'read',
      lifecycleLogging: false,
      execute: ({ input }) => input,
    }),
  ],
});
const plan = {
  version: '1.0' as const,
  goal: 'throughput',
  steps: [{ id: 'only', capability: 'bench.stores.echo', input: { n: 1 } }],
};

/**
 * Milliseconds to run `count` one-step jobs with `inFlight` at a time; each job's latency (from
 * its executePlan call to its settled job, in ms) is appended to `latencies`.
 */
async function drive(
  runtime: OperatorRuntime,
  count: number,
  inFlight: number,
  latencies: number[] = [],
): Promise<number> {
  const start = process.hrtime.bigint();
  let next = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next++ < count) {
        const began = process.hrtime.bigint();
        await runtime.executePlan(plan);
        latencies.push(Number(process.hrtime.bigint() - began) / 1e6);
      }
    }),
  );
  return Number(process.hrtime.bigint() - start) / 1e6;
}

const postgres = await startTestPostgres();
const directory = mkdtempSync(join(tmpdir(), 'warrant-bench-stores-'));
const sqliteFile = join(directory, 'jobs.db');
const postgresUrl = await postgres.createDatabase();
const stores: { name: string; option: string }[] = [
  { name: 'memory', option: 'memory' },
  { name: 'sqlite', option: `sqlite:${sqliteFile}` },
  { name: 'postgres', option: postgresUrl },
];

/** A measured subject: writes `count` jobs with `inFlight` at a time, appending latencies. */
interface Subject {
  readonly name: string;
  /** The subject whose jobs/s each row is divided by (itself for a baseline). */
  readonly baseline: string;
  drive(count: number, inFlight: number, latencies: number[]): Promise<number>;
}

const rows: string[] = [];
for (const inFlight of [1, 16]) {
  const runtimes = stores.map((store) => new OperatorRuntime({ store: store.option }));
  for (const runtime of runtimes) await drive(runtime, 200, inFlight);
  // The raw loops write the columns of a job the store recorded (bench/fixtures/raw-stores.ts).
  const rawFile = join(directory, `raw-${inFlight}.db`);
  const rawLite = rawSqlite(rawFile, sqliteSchema(sqliteFile), sqliteColumns(sqliteFile));
  const rawPg = rawPostgres(postgresUrl, await postgresColumns(postgresUrl));
  await rawPg.run(200, inFlight);
  const subjects: Subject[] = stores.map((store, index) => ({
    name: store.name,
    baseline:
      store.name === 'sqlite'
        ? 'raw better-sqlite3'
        : store.name === 'postgres'
          ? 'raw pg'
          : store.name,
    drive: (count, jobs, latencies) =>
      drive(runtimes[index] as OperatorRuntime, count, jobs, latencies),
  }));
  subjects.push({
    name: 'raw pg',
    baseline: 'raw pg',
    drive: async (count, jobs) => {
      const start = process.hrtime.bigint();
      await rawPg.run(count, jobs);
      return Number(process.hrtime.bigint() - start) / 1e6;
    },
  });
  // The raw SQLite loop is synchronous, one job at a time in both phases (interleaved with the
  // others in the same rounds): the baseline of both SQLite rows.
  subjects.push({
    name: 'raw better-sqlite3',
    baseline: 'raw better-sqlite3',
    drive: async (count) => {
      const start = process.hrtime.bigint();
      rawLite.run(count);
      return Number(process.hrtime.bigint() - start) / 1e6;
    },
  });
  console.error(`stores: ${inFlight} in flight, warmed up`);
  const samples = subjects.map(() => [] as number[]);
  const latencies = subjects.map(() => [] as number[]);
  // PostgreSQL at one job at a time is latency-bound: fewer jobs per round keep the run short.
  const count = (index: number) =>
    /postgres|pg/.test(subjects[index]?.name ?? '') && inFlight === 1
      ? jobsPerRound / 4
      : jobsPerRound;
  for (let round = 0; round < rounds; round++) {
    for (let offset = 0; offset < subjects.length; offset++) {
      const at = (round + offset) % subjects.length;
      const ms = await (subjects[at] as Subject).drive(
        count(at),
        inFlight,
        latencies[at] as number[],
      );
      (samples[at] as number[]).push((count(at) / ms) * 1000);
    }
  }
  const rate = (name: string) =>
    median(samples[subjects.findIndex((subject) => subject.name === name)] as number[]);
  const memory = rate('memory');
  subjects.forEach((subject, index) => {
    const perSecond = median(samples[index] as number[]);
    const jobLatencies = latencies[index] as number[];
    const latency =
      jobLatencies.length === 0
        ? '- | -'
        : `${fmt(median(jobLatencies), 3)} | ${fmt(percentile(jobLatencies, 99), 3)}`;
    const baseline =
      subject.baseline === subject.name
        ? '-'
        : `${subject.baseline}${subject.baseline === 'raw better-sqlite3' ? ', 1 at a time' : ''}`;
    const shown = subject.name === 'raw better-sqlite3' ? `1 (${inFlight} phase)` : `${inFlight}`;
    rows.push(
      `| ${subject.name} | ${shown} | ${fmt(perSecond, 0)} | ${latency} | ${fmt(perSecond / memory, 3)} | ${baseline} | ${baseline === '-' ? '-' : `${fmt(perSecond / rate(subject.baseline), 2)}x`} |`,
    );
  });
  for (const runtime of runtimes) await runtime.close();
  rawLite.close();
  await rawPg.close();
}

/** Runs `processes` workers together on one store; jobs per second over all of them. */
async function shared(option: string, processes: number): Promise<number> {
  const children = Array.from({ length: processes }, () =>
    spawn(
      process.execPath,
      ['--import', 'tsx', 'bench/fixtures/throughput-worker.ts', option, String(processJobs), '16'],
      { stdio: ['pipe', 'pipe', 'inherit'] },
    ),
  );
  const exited = children.map((child) => once(child, 'exit'));
  const lines = children.map((child) => {
    child.stdout.setEncoding('utf8');
    let buffer = '';
    // Lines that arrive before anyone asks are queued, never dropped.
    const waiting: ((line: string) => void)[] = [];
    const queued: string[] = [];
    child.stdout.on('data', (chunk: string) => {
      buffer += chunk;
      let newline = buffer.indexOf('\n');
      while (newline !== -1) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        const waiter = waiting.shift();
        if (waiter === undefined) queued.push(line);
        else waiter(line);
        newline = buffer.indexOf('\n');
      }
    });
    return () =>
      new Promise<string>((resolve) => {
        const line = queued.shift();
        if (line === undefined) waiting.push(resolve);
        else resolve(line);
      });
  });
  const ready = lines.map((next) => next());
  await Promise.all(ready);
  const done = lines.map((next) => next());
  const start = process.hrtime.bigint();
  // Ending stdin with the go lets each worker exit once it is done.
  for (const child of children) child.stdin.end('go\n');
  await Promise.all(done);
  const wall = Number(process.hrtime.bigint() - start) / 1e6;
  await Promise.all(exited);
  return ((processJobs * processes) / wall) * 1000;
}

const processRows: string[] = [];
const sharedSamples = new Map<string, number[]>();
for (let round = 0; round < 3; round++) {
  for (const processes of [1, 3]) {
    const option = await postgres.createDatabase();
    const key = `${processes}`;
    console.error(`stores: postgres shared by ${processes} process(es), run ${round + 1}`);
    sharedSamples.set(key, [...(sharedSamples.get(key) ?? []), await shared(option, processes)]);
  }
}
const single = median(sharedSamples.get('1') as number[]);
for (const processes of [1, 3]) {
  const perSecond = median(sharedSamples.get(`${processes}`) as number[]);
  processRows.push(
    `| postgres | 16 | ${processes} | ${fmt(perSecond, 0)} | ${fmt((1000 / perSecond) * processes, 3)} | ${fmt(perSecond / single, 2)} |`,
  );
}
await postgres.stop();

console.log('### Durable throughput: one-step jobs per second\n');
console.log(
  `${machine()}, ${cpus().length} cores; ${rounds} interleaved rounds of ${jobsPerRound} jobs per store (PostgreSQL one at a time: ${jobsPerRound / 4}); median jobs/s of the rounds; latency of each job over all rounds. Ratios: to the memory store and to the raw driver loop (bench/fixtures/raw-stores.ts: the same statements and commits per job, no Warrant; raw better-sqlite3 one job at a time, measured in the rounds of each phase, for both SQLite rows; raw pg at the same number in flight on a pool of 4) in the same rounds (first table), to one PostgreSQL process (second table).\n`,
);
console.log(
  '| store | in flight | jobs/s | job latency median ms | job latency p99 ms | ratio to memory | baseline | ratio to baseline |',
);
console.log('| --- | ---: | ---: | ---: | ---: | ---: | --- | ---: |');
for (const row of rows) console.log(row);
console.log(
  `\nPostgreSQL shared by processes (${processJobs} jobs per process, 16 in flight each, median of 3 runs; ms per job is per process):\n`,
);
console.log('| store | in flight | processes | jobs/s (all) | ms per job | ratio to 1 process |');
console.log('| --- | ---: | ---: | ---: | ---: | ---: |');
for (const row of processRows) console.log(row);
