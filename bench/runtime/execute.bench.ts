// Governed overhead: a 1-step and a 10-step in-memory plan vs calling the capability function
// directly, measured in the same run. Run: npm run bench (or node --import tsx <this file>).
// BENCH_BASELINE=<dir> also measures the package root at <dir>/src/index.ts (a checkout of an
// earlier commit, e.g. `git archive <commit> src | tar -x -C <dir>`, with node_modules linked),
// interleaved in the same rounds: before and after on the same machine, in one run.
// BENCH_DIST=1 measures the built packages instead (this checkout's dist/esm/index.js, and the
// baseline's, each built by its own `npm run build`): what users of each commit run.
// BENCH_MAX_JOBS=<n> passes `maxJobs` to every runtime (the memory store's bound; default 1,000
// here, 10,000 at 77123c5): how much of a plan's time is the collector copying kept records.
import { cpus } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type * as RootModule from '../../src/index.js';
import type { ExecutionContext, ExecutionPlan } from '../../src/index.js';
import { fmt, interleave, machine, median, percentile, type Subject } from '../support/measure.js';

type Root = typeof RootModule;

const rounds = Number(process.env.BENCH_ROUNDS ?? 25);
const operations = Number(process.env.BENCH_OPERATIONS ?? 2000);
const baselineDir = process.env.BENCH_BASELINE;
const built = process.env.BENCH_DIST === '1';
const maxJobs =
  process.env.BENCH_MAX_JOBS === undefined ? undefined : Number(process.env.BENCH_MAX_JOBS);
const rootFile = built ? 'dist/esm/index.js' : 'src/index.ts';
// Only the root measured is loaded: the sources or the build, never both.
const current = (await import(new URL(`../../${rootFile}`, import.meta.url).href)) as Root;

const work = ({ input }: { input: { n: number } }) => ({ n: input.n + 1 });

/** A runtime of `root` with the two bench capabilities, under names of its own (`prefix`). */
function benchRuntime(root: Root, prefix: string) {
  const runtime = new root.OperatorRuntime(maxJobs === undefined ? {} : { maxJobs });
  const increment = `${prefix}.increment`;
  const logged = `${prefix}.logged`;
  runtime.use({
    manifest: { name: prefix, version: '1.0.0', capabilities: [increment, logged] },
    capabilities: [
      root.createCapability({
        name: increment,
        version: '1.0.0',
        description: 'adds one',
        risk: 'read',
        lifecycleLogging: false,
        inputSchema: { n: { type: 'number', required: true, description: 'n' } },
        execute: work,
      }),
      root.createCapability({
        name: logged,
        version: '1.0.0',
        description: 'adds one, with default lifecycle logging',
        risk: 'read',
        inputSchema: { n: { type: 'number', required: true, description: 'n' } },
        execute: work,
      }),
    ],
  });
  return { runtime, increment, logged };
}

const runtimes = [{ label: '', ...benchRuntime(current, 'bench') }];
if (baselineDir !== undefined) {
  const root = (await import(pathToFileURL(join(baselineDir, rootFile)).href)) as Root;
  runtimes.push({ label: ' (baseline)', ...benchRuntime(root, 'bench-baseline') });
}

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
  const subjects: Subject[] = [{ name: 'direct', run: () => direct(steps) }];
  for (const { label, runtime, increment, logged } of runtimes) {
    const one = plan(steps, increment);
    const withLogging = plan(steps, logged);
    subjects.push(
      { name: `governed${label}`, run: () => runtime.executePlan(one) },
      { name: `governed+logging${label}`, run: () => runtime.executePlan(withLogging) },
    );
  }
  const results = await interleave(subjects, rounds, Math.max(200, Math.floor(operations / steps)));
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
  `${machine()}, ${cpus().length} cores, ${rounds} interleaved rounds; times in µs per plan (median of rounds; p99 of rounds); ${built ? 'the built packages (dist/esm)' : 'the sources (src/, through tsx)'}${maxJobs === undefined ? '' : `, maxJobs ${maxJobs}`}.\n`,
);
console.log('| steps | subject | median µs | p99 µs | ratio to direct | overhead µs/step |');
console.log('| ---: | --- | ---: | ---: | ---: | ---: |');
for (const row of rows) console.log(row);
for (const { runtime } of runtimes) await runtime.close();
