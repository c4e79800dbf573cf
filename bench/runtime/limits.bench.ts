// What a limit check costs per step (docs/api.md, "Limits"): one-step jobs, one at a time, on
// the SQLite and PostgreSQL stores, with no limit and with one matching limit (per caller, a
// max never reached), interleaved round by round in the same run. PostgreSQL is an embedded
// server started here (or WARRANT_TEST_POSTGRES_URL). Run: npm run bench -- bench/runtime/limits.bench.ts
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OperatorRuntime, createCapability, type LimitDefinition } from '../../src/index.js';
import { startTestPostgres } from '../../test/support/postgres.js';
import { fmt, machine, median } from '../support/measure.js';

const rounds = Number(process.env.BENCH_ROUNDS ?? 7);
const jobsPerRound = Number(process.env.BENCH_OPERATIONS ?? 500);

new OperatorRuntime().use({
  manifest: { name: 'bench-limits', version: '1', capabilities: ['bench.limits.echo'] },
  capabilities: [
    createCapability({
      name: 'bench.limits.echo',
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
  steps: [{ id: 'only', capability: 'bench.limits.echo', input: { n: 1 } }],
};
const caller = { id: 'bench' };
const limits: LimitDefinition[] = [
  { name: 'bench', per: 'caller', max: 1_000_000_000, windowMs: 3_600_000 },
];

/** Microseconds per job for `count` one-step jobs, one at a time. */
async function perJob(runtime: OperatorRuntime, count: number): Promise<number> {
  const start = process.hrtime.bigint();
  for (let index = 0; index < count; index++) {
    const job = await runtime.executePlan(plan, { caller });
    if (job.status !== 'completed') throw new Error(`job ${job.status}: ${job.error ?? ''}`);
  }
  return Number(process.hrtime.bigint() - start) / 1000 / count;
}

async function measure(label: string, store: () => Promise<string> | string): Promise<void> {
  const plain = new OperatorRuntime({ store: await store() });
  const limited = new OperatorRuntime({ store: await store(), limits });
  try {
    await perJob(plain, 100);
    await perJob(limited, 100);
    const off: number[] = [];
    const on: number[] = [];
    // Alternated: which runs first in a round does not favour either.
    for (let round = 0; round < rounds; round++) {
      if (round % 2 === 0) {
        off.push(await perJob(plain, jobsPerRound));
        on.push(await perJob(limited, jobsPerRound));
      } else {
        on.push(await perJob(limited, jobsPerRound));
        off.push(await perJob(plain, jobsPerRound));
      }
    }
    const a = median(off);
    const b = median(on);
    console.log(
      `${label}: no limit ${fmt(a, 1)} µs/job, one limit ${fmt(b, 1)} µs/job, check +${fmt(b - a, 1)} µs/step (${fmt((b / a - 1) * 100, 1)} %)`,
    );
  } finally {
    await Promise.all([plain.close(), limited.close()]);
  }
}

console.log(`${machine()}; ${rounds} rounds of ${jobsPerRound} one-step jobs, medians`);
const directory = mkdtempSync(join(tmpdir(), 'warrant-bench-limits-'));
let files = 0;
try {
  await measure('memory', () => 'memory');
  await measure('SQLite', () => `sqlite:${join(directory, `jobs-${files++}.db`)}`);
  const postgres = await startTestPostgres();
  try {
    await measure('PostgreSQL', () => postgres.createDatabase());
  } finally {
    await postgres.stop();
  }
} finally {
  rmSync(directory, { recursive: true, force: true });
}
