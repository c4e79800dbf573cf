// Telemetry cost (docs/api.md, "OpenTelemetry"): a 1-step and a 10-step in-memory plan with no
// tracer provider registered ("off") and with one registered ("on": BasicTracerProvider, a
// SimpleSpanProcessor and an exporter that drops every span, plus an AsyncLocalStorage context
// manager), interleaved in the same rounds. Run: node --import tsx bench/runtime/telemetry.bench.ts
// BENCH_BASELINE=<dir> also measures the package root at <dir>/src/index.ts (a checkout from
// before telemetry, e.g. `git archive <commit> src | tar -x -C <dir>`, with node_modules linked):
// the plain baseline, with no telemetry code at all, in the same run.
// BENCH_SUBJECT=baseline|off|on with BENCH_STEPS and BENCH_OPERATIONS runs only that subject's
// plans (after 2,000 warm-up plans) and prints nothing: for counting instructions, e.g.
// `valgrind --tool=cachegrind --cache-sim=no node --import tsx <this file>`, at two operation
// counts, the difference being the cost of the extra plans.
import { cpus } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  SimpleSpanProcessor,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';
import * as current from '../../src/index.js';
import type { ExecutionPlan } from '../../src/index.js';
import { fmt, interleave, machine, median, percentile, type Subject } from '../support/measure.js';

type Root = typeof current;

const rounds = Number(process.env.BENCH_ROUNDS ?? 25);
const operations = Number(process.env.BENCH_OPERATIONS ?? 2000);
const baselineDir = process.env.BENCH_BASELINE;

const dropAll: SpanExporter = {
  export: (_spans, done) => done({ code: 0 }),
  shutdown: () => Promise.resolve(),
};
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(dropAll)] });
const contextManager = new AsyncLocalStorageContextManager();

/** Registers the provider and context manager, or neither; switches only when asked to change. */
let registered = false;
function telemetry(on: boolean): void {
  if (on === registered) return;
  if (on) {
    context.setGlobalContextManager(contextManager.enable());
    trace.setGlobalTracerProvider(provider);
  } else {
    trace.disable();
    context.disable();
  }
  registered = on;
}

/** A runtime of `root` with one read capability, under a name of its own (`prefix`). */
function benchRuntime(root: Root, prefix: string) {
  const runtime = new root.OperatorRuntime();
  const name = `${prefix}.increment`;
  runtime.use({
    manifest: { name: prefix, version: '1.0.0', capabilities: [name] },
    capabilities: [
      root.createCapability({
        name,
        version: '1.0.0',
        description: 'adds one',
        risk: 'read',
        lifecycleLogging: false,
        inputSchema: { n: { type: 'number', required: true, description: 'n' } },
        execute: ({ input }: { input: { n: number } }) => ({ n: input.n + 1 }),
      }),
    ],
  });
  return { runtime, name };
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

const measured = benchRuntime(current, 'bench-telemetry');
const baseline =
  baselineDir === undefined
    ? undefined
    : benchRuntime(
        (await import(pathToFileURL(join(baselineDir, 'src/index.ts')).href)) as Root,
        'bench-telemetry-baseline',
      );

const only = process.env.BENCH_SUBJECT;
if (only !== undefined) {
  const runtime = only === 'baseline' ? baseline?.runtime : measured.runtime;
  if (runtime === undefined || !['baseline', 'off', 'on'].includes(only))
    throw new Error('BENCH_SUBJECT is baseline (with BENCH_BASELINE), off or on');
  telemetry(only === 'on');
  const steps = Number(process.env.BENCH_STEPS ?? 1);
  const name = only === 'baseline' ? (baseline?.name as string) : measured.name;
  const counted = plan(steps, name);
  for (let index = 0; index < 2000; index++) await runtime.executePlan(counted);
  for (let index = 0; index < operations; index++) await runtime.executePlan(counted);
  telemetry(false);
  await provider.shutdown();
  process.exit(0);
}

const rows: string[] = [];
for (const steps of [1, 10]) {
  const subjects: Subject[] = [];
  if (baseline !== undefined) {
    const before = plan(steps, baseline.name);
    subjects.push({
      name: 'baseline (no telemetry code)',
      run: () => {
        telemetry(false);
        return baseline.runtime.executePlan(before);
      },
    });
  }
  const after = plan(steps, measured.name);
  subjects.push(
    {
      name: 'off (no provider)',
      run: () => {
        telemetry(false);
        return measured.runtime.executePlan(after);
      },
    },
    {
      name: 'on (provider, exporter drops spans)',
      run: () => {
        telemetry(true);
        return measured.runtime.executePlan(after);
      },
    },
  );
  const results = await interleave(subjects, rounds, Math.max(200, Math.floor(operations / steps)));
  const base = median(results[0]?.samples ?? []);
  for (const result of results) {
    const med = median(result.samples);
    rows.push(
      `| ${steps} | ${result.name} | ${fmt(med)} | ${fmt(percentile(result.samples, 99))} | ${fmt(med / base, 2)}x |`,
    );
  }
}
telemetry(false);

console.log(`### Telemetry off and on (in-memory store)\n`);
console.log(
  `${machine()}, ${cpus().length} cores, ${rounds} interleaved rounds; times in µs per plan (median of rounds; p99 of rounds); ratio to the first row of each plan size.\n`,
);
console.log('| steps | subject | median µs | p99 µs | ratio |');
console.log('| ---: | --- | ---: | ---: | ---: |');
for (const row of rows) console.log(row);
await measured.runtime.close();
await baseline?.runtime.close();
await provider.shutdown();
