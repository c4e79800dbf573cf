// Governed overhead: a 1-step and a 10-step in-memory plan vs calling the capability function
// directly, measured in the same run. Run: npm run bench (or node --import tsx <this file>).
import { cpus } from 'node:os';
import {
  OperatorRuntime,
  createCapability,
  type ExecutionContext,
  type ExecutionPlan,
} from '../../src/index.js';
import { fmt, interleave, machine, median, percentile } from '../support/measure.js';

const rounds = Number(process.env.BENCH_ROUNDS ?? 25);
const operations = Number(process.env.BENCH_OPERATIONS ?? 2000);

const work = ({ input }: { input: { n: number } }) => ({ n: input.n + 1 });
const runtime = new OperatorRuntime();
runtime.use({
  manifest: { name: 'bench', version: '1.0.0', capabilities: ['bench.increment', 'bench.logged'] },
  capabilities: [
    createCapability({
      name: 'bench.increment',
      version: '1.0.0',
      description: 'adds one',
      risk: 'read',
      lifecycleLogging: false,
      inputSchema: { n: { type: 'number', required: true, description: 'n' } },
      execute: work,
    }),
    createCapability({
      name: 'bench.logged',
      version: '1.0.0',
      description: 'adds one, with default lifecycle logging',
      risk: 'read',
      inputSchema: { n: { type: 'number', required: true, description: 'n' } },
      execute: work,
    }),
  ],
});

function plan(steps: number, capability: string): ExecutionPlan {
  return {
    version: '1.0',
    steps: Array.from({ length: steps }, (_, index) => ({
      id: `s${index}`,
      capability,
      input: { n: index },
    })),
  };
}

const context = {} as ExecutionContext;
async function direct(steps: number): Promise<unknown> {
  let last: unknown;
  for (let index = 0; index < steps; index++)
    last = await work({ input: { n: index }, context } as never);
  return last;
}

const rows: string[] = [];
for (const steps of [1, 10]) {
  const one = plan(steps, 'bench.increment');
  const logged = plan(steps, 'bench.logged');
  const results = await interleave(
    [
      { name: 'direct', run: () => direct(steps) },
      { name: 'governed', run: () => runtime.executePlan(one) },
      { name: 'governed+logging', run: () => runtime.executePlan(logged) },
    ],
    rounds,
    Math.max(200, Math.floor(operations / steps)),
  );
  const base = median(results[0]?.samples ?? []);
  for (const result of results) {
    const med = median(result.samples);
    const overheadPerStep = (med - base) / steps;
    rows.push(
      `| ${steps} | ${result.name} | ${fmt(med)} | ${fmt(percentile(result.samples, 99))} | ${fmt(med / base, 1)}x | ${result.name === 'direct' ? '-' : fmt(overheadPerStep)} |`,
    );
  }
}

console.log(`### Governed overhead (in-memory store)\n`);
console.log(
  `${machine()}, ${cpus().length} cores, ${rounds} interleaved rounds; times in µs per plan (median of rounds; p99 of rounds).\n`,
);
console.log('| steps | subject | median µs | p99 µs | ratio to direct | overhead µs/step |');
console.log('| ---: | --- | ---: | ---: | ---: | ---: |');
for (const row of rows) console.log(row);
await runtime.close();
