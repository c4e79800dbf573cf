// Scaling with history, SQLite (issue 8 item 3): `getJob` and `listJobs({ limit: 50 })`, with
// and without filters, through `OperatorRuntime({ store: 'sqlite:<file>' })` on a database of
// 1,000,000 jobs (BENCH_SQLITE_JOBS), against the same operations on a 1,000-job database
// measured in the same run (interleaved rounds). Target: under 1 ms median at 1,000,000.
//
// Building the database: the first BENCH_SQLITE_TEMPLATES jobs (default 2,000) are executed by
// the real runtime (memory store) and written by SqliteJobStore#create itself, one transaction per
// job. The rest are copies of those rows under fresh random ids (within one plan shape, the id and
// the timestamps are all that differ between jobs), inserted in large transactions through a
// second connection: a million jobs through `create` one at a time takes 6 to 11 minutes on this
// machine (350-670 µs a job). Copies are checked against their template through the runtime before
// anything is measured. BENCH_SQLITE_TEMPLATES=BENCH_SQLITE_JOBS writes every job through the store.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Database } from '../../src/stores/sqlite/sqlite-driver.cjs';
import {
  OperatorRuntime,
  createCapability,
  type Job,
  type JobListFilter,
} from '../../src/index.js';
import { SqliteJobStore } from '../../src/stores/sqlite/sqlite-store.js';
import { fmt, machine, median, percentile } from '../support/measure.js';

const total = Number(process.env.BENCH_SQLITE_JOBS ?? 1_000_000);
const baselineJobs = Number(process.env.BENCH_SQLITE_BASELINE_JOBS ?? 1_000);
const templateCount = Number(process.env.BENCH_SQLITE_TEMPLATES ?? 2_000);
const rounds = Number(process.env.BENCH_ROUNDS ?? 25);
const operations = Number(process.env.BENCH_OPERATIONS ?? 100);

// The mix of the history: 0.1% of jobs use a rare capability, 10% a write capability that the
// default authorizer denies (failed jobs), the rest a read capability; 100 distinct goals.
const READ = 'bench.sqlite.read';
const WRITE = 'bench.sqlite.write';
const RARE = 'bench.sqlite.rare';
function capabilityOf(index: number): string {
  if (index % 1000 === 0) return RARE;
  return index % 10 === 5 ? WRITE : READ;
}
const goalOf = (index: number): string => `batch ${index % 100}`;

const executor = new OperatorRuntime({ maxJobs: 1 });
const schema = { n: { type: 'number' as const, required: true, description: 'n' } };
executor.use({
  manifest: { name: 'bench-sqlite', version: '1', capabilities: [READ, WRITE, RARE] },
  capabilities: [READ, WRITE, RARE].map((name) =>
    createCapability<{ n: number }, { n: number; doubled: number }>({
      name,
      version: '1',
      description: 'returns a small result',
      risk: name === WRITE ? 'write' : 'read',
      lifecycleLogging: false,
      inputSchema: schema,
      execute: ({ input }) => ({ n: input.n, doubled: input.n * 2 }),
    }),
  ),
});

function executeJob(index: number): Promise<Job> {
  return executor.executePlan({
    version: '1.0',
    goal: goalOf(index),
    steps: [{ id: 'only', capability: capabilityOf(index), input: { n: index } }],
  });
}

interface JobRow {
  id: string;
  status: string;
  goal: string;
  created_at: string;
  updated_at: string;
  fixed: string;
  state: string;
}
interface StepRow {
  position: number;
  capability: string;
  status: string;
  fixed: string;
  state: string;
}
interface EventRow {
  position: number;
  event: string;
}
interface Template {
  job: JobRow;
  steps: StepRow[];
  events: EventRow[];
}

interface Built {
  file: string;
  /** Ids to look up: evenly spread over the whole history. */
  ids: string[];
  /** A copied id and the id of its template, for the check. */
  copies: [string, string][];
  seconds: number;
}

/** Builds a database of `count` jobs in `directory` (see the header). */
async function build(directory: string, name: string, count: number): Promise<Built> {
  const file = join(directory, `${name}.db`);
  const started = process.hrtime.bigint();
  const sampleEvery = Math.max(1, Math.floor(count / 10_000));
  const ids: string[] = [];
  const templateIds: string[] = [];
  const store = new SqliteJobStore(file);
  const direct = Math.min(count, templateCount);
  for (let index = 0; index < direct; index++) {
    const job = await executeJob(index);
    await store.create(job);
    templateIds.push(job.id);
    if (index % sampleEvery === 0) ids.push(job.id);
  }
  store.close();

  const copies: [string, string][] = [];
  if (count > direct) {
    const db = new Database(file);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    const jobOf = db.prepare(
      'SELECT seq, id, status, goal, created_at, updated_at, fixed, state FROM jobs WHERE id = ?',
    );
    const stepsOf = db.prepare(
      'SELECT position, capability, status, fixed, state FROM job_steps WHERE job_seq = ? ORDER BY position',
    );
    const eventsOf = db.prepare(
      'SELECT position, event FROM job_events WHERE job_seq = ? ORDER BY position',
    );
    const templates: Template[] = templateIds.map((id) => {
      const row = jobOf.get(id) as JobRow & { seq: number };
      return {
        job: row,
        steps: stepsOf.all(row.seq) as StepRow[],
        events: eventsOf.all(row.seq) as EventRow[],
      };
    });
    const insertJob = db.prepare(
      'INSERT INTO jobs (id, status, goal, created_at, updated_at, fixed, state) VALUES (?, ?, ?, ?, ?, ?, ?)',
    );
    const insertStep = db.prepare(
      'INSERT INTO job_steps (job_seq, position, capability, status, fixed, state) VALUES (?, ?, ?, ?, ?, ?)',
    );
    const insertEvent = db.prepare(
      'INSERT INTO job_events (job_seq, position, event) VALUES (?, ?, ?)',
    );
    const copy = db.transaction((from: number, to: number) => {
      for (let index = from; index < to; index++) {
        const template = templates[index % templates.length] as Template;
        const old = template.job.id;
        const id = randomUUID();
        const swap = (text: string) => text.replaceAll(old, id);
        const { job } = template;
        const seq = insertJob.run(
          id,
          job.status,
          job.goal,
          job.created_at,
          job.updated_at,
          swap(job.fixed),
          swap(job.state),
        ).lastInsertRowid;
        for (const step of template.steps)
          insertStep.run(
            seq,
            step.position,
            step.capability,
            step.status,
            swap(step.fixed),
            swap(step.state),
          );
        for (const event of template.events)
          insertEvent.run(seq, event.position, swap(event.event));
        if (index % sampleEvery === 0) ids.push(id);
        if (copies.length < 50 && index % 997 === 0) copies.push([id, old]);
      }
    });
    const chunk = 100_000;
    for (let from = direct; from < count; from += chunk) {
      copy(from, Math.min(count, from + chunk));
      console.error(`sqlite-history: ${name}: ${Math.min(count, from + chunk)} jobs`);
    }
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.close();
  }
  return { file, ids, copies, seconds: Number(process.hrtime.bigint() - started) / 1e9 };
}

interface Operation {
  readonly name: string;
  run(runtime: OperatorRuntime, ids: readonly string[], index: number): Promise<unknown>;
}

const list = (filter: JobListFilter): Operation['run'] => {
  return (runtime) => runtime.listJobs(filter);
};
const operationsMeasured: Operation[] = [
  {
    name: 'getJob(random id)',
    run: (runtime, ids, index) => runtime.getJob(ids[index % ids.length] as string),
  },
  { name: 'listJobs({ limit: 50 })', run: list({ limit: 50 }) },
  {
    name: "listJobs({ status: 'failed', limit: 50 }) (10%)",
    run: list({ status: 'failed', limit: 50 }),
  },
  {
    name: `listJobs({ capability: '${WRITE}', limit: 50 }) (10%)`,
    run: list({ capability: WRITE, limit: 50 }),
  },
  {
    name: `listJobs({ capability: '${RARE}', limit: 50 }) (0.1%)`,
    run: list({ capability: RARE, limit: 50 }),
  },
  {
    name: "listJobs({ goal: 'batch 7', limit: 50 }) (1%)",
    run: list({ goal: 'batch 7', limit: 50 }),
  },
];

function shuffled<T>(values: readonly T[]): T[] {
  const result = [...values];
  for (let index = result.length - 1; index > 0; index--) {
    const other = Math.floor(Math.random() * (index + 1));
    [result[index], result[other]] = [result[other] as T, result[index] as T];
  }
  return result;
}

const directory = mkdtempSync(join(tmpdir(), 'warrant-bench-sqlite-history-'));
try {
  const small = await build(directory, 'baseline', baselineJobs);
  const large = await build(directory, 'large', total);
  console.error(`sqlite-history: built ${total} jobs in ${fmt(large.seconds, 1)} s`);
  const subjects = [
    { jobs: baselineJobs, built: small },
    { jobs: total, built: large },
  ].map(({ jobs, built }) => ({
    jobs,
    built,
    ids: shuffled(built.ids),
    runtime: new OperatorRuntime({ store: `sqlite:${built.file}` }),
  }));

  // Copies must read back exactly as their template does, apart from the id.
  for (const { runtime, built } of subjects) {
    for (const [id, templateId] of built.copies) {
      const copy = await runtime.getJob(id);
      const template = await runtime.getJob(templateId);
      assert.deepEqual(copy, JSON.parse(JSON.stringify(template).replaceAll(templateId, id)));
    }
  }

  // Per-operation times, interleaved: each round runs every (operation, database) pair in an
  // order rotated every round, after a warm-up of each pair.
  const pairs = operationsMeasured.flatMap((operation) =>
    subjects.map((subject) => ({ operation, subject, samples: [] as number[], returned: 0 })),
  );
  let cursor = 0;
  for (const pair of pairs) {
    for (let index = 0; index < operations; index++)
      await pair.operation.run(pair.subject.runtime, pair.subject.ids, cursor++);
  }
  for (let round = 0; round < rounds; round++) {
    for (let offset = 0; offset < pairs.length; offset++) {
      const pair = pairs[(round + offset) % pairs.length] as (typeof pairs)[number];
      for (let index = 0; index < operations; index++) {
        const start = process.hrtime.bigint();
        const value = await pair.operation.run(pair.subject.runtime, pair.subject.ids, cursor++);
        pair.samples.push(Number(process.hrtime.bigint() - start) / 1000);
        pair.returned = Array.isArray(value) ? value.length : value === undefined ? 0 : 1;
      }
    }
  }

  const size = (file: string) => statSync(file).size / 1024 / 1024;
  console.log(`### SQLite history: getJob and listJobs at ${total.toLocaleString('en')} jobs\n`);
  console.log(
    `${machine()}, ${cpus().length} cores, ${rounds} interleaved rounds of ${operations} operations per row; ` +
      `times in µs per operation (median and p99 of every operation); ratio = median / median at ${baselineJobs.toLocaleString('en')} jobs. ` +
      `Database files: ${fmt(size(small.file), 1)} MiB and ${fmt(size(large.file), 0)} MiB; ` +
      `${total.toLocaleString('en')} jobs built in ${fmt(large.seconds, 0)} s (${Math.min(total, templateCount).toLocaleString('en')} through SqliteJobStore#create, the rest copied from them).\n`,
  );
  console.log(
    `| operation | jobs stored | jobs returned | median µs | p99 µs | ratio to ${baselineJobs.toLocaleString('en')} jobs |`,
  );
  console.log('| --- | ---: | ---: | ---: | ---: | ---: |');
  for (let at = 0; at < pairs.length; at += subjects.length) {
    const base = median((pairs[at] as (typeof pairs)[number]).samples);
    for (const pair of pairs.slice(at, at + subjects.length)) {
      const med = median(pair.samples);
      console.log(
        `| ${pair.operation.name} | ${pair.subject.jobs.toLocaleString('en')} | ${pair.returned} | ${fmt(med, 1)} | ${fmt(percentile(pair.samples, 99), 1)} | ${fmt(med / base, 2)}x |`,
      );
    }
  }
  for (const { runtime } of subjects) await runtime.close();
} finally {
  await executor.close();
  rmSync(directory, { recursive: true, force: true });
}
