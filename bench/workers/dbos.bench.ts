// Queued one-step jobs through workers (docs/api.md, "Workers"), against bare DBOS Transact
// workflows doing the same step without Warrant, in the same run on one embedded PostgreSQL:
// jobs per second with 2 and 4 worker processes (BENCH_WORKERS; a backlog of JOBS queued at
// once, timed until the last one ended, both read from the database every 20 ms), and the
// latency from submit to completed at a steady offered rate, from the timestamps each engine
// records. Beside them, the CPU each side spends a job during the backlog (Linux: from /proc),
// PostgreSQL's processes, the workers and this submitting process: on a shared 2-core machine
// jobs a second move by 10-30 % between runs, CPU a job much less.
// Run: npm run bench bench/workers/dbos.bench.ts (BENCH_JOBS, BENCH_ROUNDS, BENCH_WORKERS).
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { resolve } from 'node:path';
import { DBOSClient } from '@dbos-inc/dbos-sdk';
import pg from 'pg';
import { OperatorRuntime, createCapability } from '../../src/index.js';
import { startTestPostgres } from '../../test/support/postgres.js';
import { fmt, machine, median, percentile } from '../support/measure.js';

const JOBS = Number(process.env.BENCH_JOBS ?? 300);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const RATE = 40; // offered jobs per second for the latency part
const LATENCY_JOBS = 120;
// Worker processes per row (BENCH_WORKERS, comma-separated; issue 52 asks 2 and 4).
const WORKER_COUNTS = (process.env.BENCH_WORKERS ?? '2,4').split(',').map(Number);
const WORKER = resolve(import.meta.dirname, '../fixtures/dbos-worker.ts');

const postgres = await startTestPostgres();
const children: ChildProcess[] = [];
// Workers never outlive the benchmark, whatever ends it.
process.on('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Clock ticks a second of /proc's CPU times. */
const TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK']).toString()) || 100;
  } catch {
    return 100;
  }
})();

/** Fields 4 on of /proc/<pid>/stat (after the command in parentheses), or undefined. */
function statOf(pid: number): string[] | undefined {
  try {
    const line = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return line.slice(line.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** CPU seconds of `pid` (user and system), with those of its children it reaped when `reaped`. */
function cpuOf(pid: number, reaped = false): number {
  const fields = statOf(pid);
  if (fields === undefined) return 0;
  // Fields 14-17: utime, stime, cutime, cstime (rest[11] to rest[14]).
  const own = Number(fields[11]) + Number(fields[12]);
  return (own + (reaped ? Number(fields[13]) + Number(fields[14]) : 0)) / TICKS;
}

/** CPU seconds so far of the embedded PostgreSQL (a child of this process) and its processes. */
function postgresCpu(): number {
  let entries: string[];
  try {
    entries = readdirSync('/proc').filter((entry) => /^\d+$/.test(entry));
  } catch {
    return Number.NaN;
  }
  const parents = new Map<number, number>();
  for (const entry of entries) {
    const fields = statOf(Number(entry));
    if (fields !== undefined) parents.set(Number(entry), Number(fields[1]));
  }
  const server = [...parents].find(
    ([pid, parent]) =>
      parent === process.pid &&
      readFileSync(`/proc/${pid}/comm`, 'utf8').trim().startsWith('postgres'),
  )?.[0];
  if (server === undefined) return Number.NaN; // an external server (WARRANT_TEST_POSTGRES_URL)
  let total = cpuOf(server, true);
  for (const [pid, parent] of parents) if (parent === server) total += cpuOf(pid);
  return total;
}

/** CPU seconds so far of PostgreSQL, the workers and this process. */
function cpuNow(): { postgres: number; workers: number; submitter: number } {
  const usage = process.cpuUsage();
  return {
    postgres: postgresCpu(),
    workers: children.reduce((sum, child) => sum + cpuOf(child.pid ?? 0), 0),
    submitter: (usage.user + usage.system) / 1e6,
  };
}

async function workers(mode: 'bare' | 'warrant', url: string, count: number): Promise<void> {
  for (let index = 0; index < count; index++) {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', WORKER, mode, url, `${mode}-${index}`],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    children.push(child);
    await new Promise<void>((done, fail) => {
      const timer = setTimeout(() => fail(new Error('worker did not start')), 120_000);
      child.stdout?.on('data', (chunk: Buffer) => {
        if (chunk.toString().includes('ready')) {
          clearTimeout(timer);
          done();
        }
      });
    });
  }
}

function stopWorkers(): void {
  for (const child of children.splice(0)) child.kill('SIGKILL');
}

interface Subject {
  /** Queues one job; resolves its id. */
  submit(n: number): Promise<string>;
  /** How many of `ids` ended (read from the database, as often for both variants). */
  ended(ids: readonly string[]): Promise<number>;
  /** Each job's milliseconds from submitted to ended, from the timestamps its engine recorded. */
  latencies(ids: readonly string[]): Promise<number[]>;
  close(): Promise<void>;
}

async function bareSubject(url: string): Promise<Subject> {
  const client = await DBOSClient.create({
    systemDatabaseUrl: url,
    systemDatabaseSchemaName: 'bench_dbos',
  });
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  let seq = 0;
  return {
    async submit(n) {
      const id = `bare-${process.pid}-${seq++}`;
      await client.enqueue(
        { queueName: 'bench', workflowName: 'bench.echo', workflowID: id },
        { n },
      );
      return id;
    },
    async ended(ids) {
      const { rows } = await db.query<{ count: string }>(
        `SELECT count(*) FROM bench_dbos.workflow_status WHERE status = 'SUCCESS' AND workflow_uuid = ANY($1)`,
        [ids],
      );
      return Number(rows[0]?.count ?? 0);
    },
    async latencies(ids) {
      const { rows } = await db.query<{ ms: string }>(
        `SELECT updated_at - created_at AS ms FROM bench_dbos.workflow_status WHERE workflow_uuid = ANY($1)`,
        [ids],
      );
      return rows.map((row) => Number(row.ms));
    },
    async close() {
      await db.end();
      await client.destroy();
    },
  };
}

let registered = false;

async function connected(url: string): Promise<pg.Client> {
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  return db;
}

async function warrantSubject(url: string): Promise<Subject> {
  const runtime = new OperatorRuntime({ store: url, queue: { engine: 'dbos' } });
  // The inventory is the process's: the capability is registered once, for every round.
  if (!registered) registered = true;
  else return subjectOf(runtime, await connected(url));
  runtime.use({
    manifest: { name: 'bench-workers', version: '1', capabilities: ['bench.workers.echo'] },
    capabilities: [
      createCapability({
        name: 'bench.workers.echo',
        version: '1',
        description: 'returns its input',
        risk: 'read',
        lifecycleLogging: false,
        execute: ({ input }) => input,
      }),
    ],
  });
  return subjectOf(runtime, await connected(url));
}

function subjectOf(runtime: OperatorRuntime, db: pg.Client): Subject {
  return {
    async submit(n) {
      const { jobId } = await runtime.submitPlan({
        version: '1.0',
        steps: [{ id: 'only', capability: 'bench.workers.echo', input: { n } }],
      });
      return jobId;
    },
    async ended(ids) {
      const { rows } = await db.query<{ count: string }>(
        `SELECT count(*) FROM warrant_jobs WHERE status = 'completed' AND id = ANY($1)`,
        [ids],
      );
      return Number(rows[0]?.count ?? 0);
    },
    async latencies(ids) {
      const times: number[] = [];
      for (const id of ids) {
        const job = await runtime.getJob(id);
        times.push(Date.parse(job?.completedAt ?? '') - Date.parse(job?.createdAt ?? ''));
      }
      return times;
    },
    async close() {
      await db.end();
      await runtime.close();
    },
  };
}

/** Resolves once every one of `ids` ended, polling every 20 ms. */
async function allEnded(subject: Subject, ids: readonly string[]): Promise<void> {
  const deadline = Date.now() + 300_000;
  while ((await subject.ended(ids)) < ids.length) {
    if (Date.now() > deadline) throw new Error('jobs never ended');
    await sleep(20);
  }
}

/** CPU milliseconds a job, by side, of one throughput round. */
interface CpuPerJob {
  readonly postgres: number;
  readonly workers: number;
  readonly submitter: number;
}

/** Jobs per second: JOBS queued at once, until the last ended; and the CPU each side spent. */
async function throughput(subject: Subject): Promise<{ perSecond: number; cpu: CpuPerJob }> {
  const before = cpuNow();
  const start = performance.now();
  const ids: string[] = [];
  for (let n = 0; n < JOBS; n++) ids.push(await subject.submit(n));
  await allEnded(subject, ids);
  const perSecond = JOBS / ((performance.now() - start) / 1000);
  const after = cpuNow();
  const perJob = (side: keyof CpuPerJob) => ((after[side] - before[side]) * 1000) / JOBS;
  return {
    perSecond,
    cpu: {
      postgres: perJob('postgres'),
      workers: perJob('workers'),
      submitter: perJob('submitter'),
    },
  };
}

/** Submit-to-ended milliseconds at RATE jobs per second. */
async function latency(subject: Subject): Promise<number[]> {
  const ids: string[] = [];
  for (let n = 0; n < LATENCY_JOBS; n++) {
    ids.push(await subject.submit(n));
    await sleep(1000 / RATE);
  }
  await allEnded(subject, ids);
  return subject.latencies(ids);
}

const rows: string[] = [];
const cpuRows: string[] = [];
for (const count of WORKER_COUNTS) {
  const perSecond: Record<'bare' | 'warrant', number[]> = { bare: [], warrant: [] };
  const latencies: Record<'bare' | 'warrant', number[]> = { bare: [], warrant: [] };
  const cpu: Record<'bare' | 'warrant', CpuPerJob[]> = { bare: [], warrant: [] };
  for (let round = 0; round < ROUNDS; round++) {
    for (const mode of round % 2 === 0
      ? (['bare', 'warrant'] as const)
      : (['warrant', 'bare'] as const)) {
      const url = await postgres.createDatabase();
      await workers(mode, url, count);
      const subject = mode === 'bare' ? await bareSubject(url) : await warrantSubject(url);
      await throughput(subject); // warm-up: the first jobs pay for connections and caches
      const measured = await throughput(subject);
      perSecond[mode].push(measured.perSecond);
      cpu[mode].push(measured.cpu);
      latencies[mode].push(...(await latency(subject)));
      await subject.close();
      stopWorkers();
    }
  }
  const ratio = median(perSecond.warrant) / median(perSecond.bare);
  rows.push(
    `| ${count} | ${fmt(median(perSecond.bare), 0)} | ${fmt(median(perSecond.warrant), 0)} | ${fmt(ratio)}x | ` +
      `${fmt(percentile(latencies.bare, 50), 0)} / ${fmt(percentile(latencies.bare, 99), 0)} | ` +
      `${fmt(percentile(latencies.warrant, 50), 0)} / ${fmt(percentile(latencies.warrant, 99), 0)} |`,
  );
  const side = (mode: 'bare' | 'warrant', key: keyof CpuPerJob) =>
    fmt(median(cpu[mode].map((round) => round[key])), 1);
  cpuRows.push(
    `| ${count} | ${side('bare', 'postgres')} / ${side('warrant', 'postgres')} | ` +
      `${side('bare', 'workers')} / ${side('warrant', 'workers')} | ` +
      `${side('bare', 'submitter')} / ${side('warrant', 'submitter')} |`,
  );
}
await postgres.stop();

console.log(`\n### Workers on DBOS: queued one-step jobs (${machine()}, ${cpus().length} cores)\n`);
console.log(
  `${JOBS} jobs queued at once per round, ${ROUNDS} rounds per variant alternating; latency at ${RATE} jobs/s offered, ms.\n`,
);
console.log(
  '| workers | bare DBOS jobs/s | Warrant jobs/s | ratio | bare p50 / p99 | Warrant p50 / p99 |',
);
console.log(
  '| ------- | ---------------- | -------------- | ----- | -------------- | ----------------- |',
);
for (const row of rows) console.log(row);
console.log('\nCPU ms a job during the backlog (medians of the rounds), bare DBOS / Warrant:\n');
console.log('| workers | PostgreSQL | workers | submitter |');
console.log('| ------- | ---------- | ------- | --------- |');
for (const row of cpuRows) console.log(row);
process.exit(0);
