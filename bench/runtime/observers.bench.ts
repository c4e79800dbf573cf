// Observers and authorizers (issue 8 item 6): a governed 1-step in-memory plan with 0, 1 and 10
// `runtime.subscribe('*', handler)` observers, under a synchronous authorizer and under one that
// returns a Promise, vs calling the capability function directly, measured in the same run
// (interleaved rounds). Run: npm run bench (or node --import tsx <this file>).
import { cpus } from 'node:os';
import {
  OperatorRuntime,
  createCapability,
  type CapabilityAuthorizationDecision,
  type ExecutionContext,
  type ExecutionPlan,
  type RuntimeEvent,
} from '../../src/index.js';
import { fmt, interleave, machine, median, percentile, type Subject } from '../support/measure.js';

const rounds = Number(process.env.BENCH_ROUNDS ?? 25);
const operations = Number(process.env.BENCH_OPERATIONS ?? 2000);

const work = ({ input }: { input: { n: number } }) => ({ n: input.n + 1 });
const ALLOW: CapabilityAuthorizationDecision = Object.freeze({ decision: 'allow' });

// One runtime per authorizer (the authorizer is a runtime option); both keep the default memory
// store bound (10,000 jobs), as bench/runtime/execute.bench.ts does.
const runtimes = {
  sync: new OperatorRuntime({ authorizer: { authorize: () => ALLOW } }),
  async: new OperatorRuntime({ authorizer: { authorize: async () => ALLOW } }),
};
runtimes.sync.use({
  manifest: { name: 'bench-observers', version: '1.0.0', capabilities: ['bench.observed'] },
  capabilities: [
    createCapability({
      name: 'bench.observed',
      version: '1.0.0',
      description: 'adds one',
      risk: 'read',
      lifecycleLogging: false,
      inputSchema: { n: { type: 'number', required: true, description: 'n' } },
      execute: work,
    }),
  ],
});
const plan: ExecutionPlan = {
  version: '1.0',
  steps: [{ id: 's0', capability: 'bench.observed', input: { n: 1 } }],
};

let delivered = 0;
const syncHandler = (event: RuntimeEvent): void => {
  if (event.jobId !== '') delivered++;
};
const asyncHandler = async (event: RuntimeEvent): Promise<void> => {
  if (event.jobId !== '') delivered++;
};

/**
 * Subscriptions per runtime, adjusted lazily by the subject about to run (subjects sharing a
 * runtime run in turn, never concurrently): one comparison per plan when nothing changes.
 */
const active = new Map<OperatorRuntime, { key: string; stops: (() => void)[] }>();
function observe(
  runtime: OperatorRuntime,
  count: number,
  handler: (event: RuntimeEvent) => void | Promise<void>,
): void {
  const key = `${count}:${handler.name}`;
  const current = active.get(runtime);
  if (current?.key === key) return;
  for (const stop of current?.stops ?? []) stop();
  const stops = Array.from({ length: count }, () => runtime.subscribe('*', handler));
  active.set(runtime, { key, stops });
}

const context = {} as ExecutionContext;
// As in execute.bench.ts: the direct call awaits the capability, as the executor must.
async function direct(): Promise<unknown> {
  return await work({ input: { n: 1 }, context } as never);
}
interface Row {
  readonly authorizer: string;
  readonly subscribers: string;
  readonly subject: Subject;
}
const rows: Row[] = [
  {
    authorizer: '-',
    subscribers: 'direct call',
    subject: { name: 'direct', run: direct },
  },
];
for (const kind of ['sync', 'async'] as const) {
  const runtime = runtimes[kind];
  for (const count of [0, 1, 10]) {
    rows.push({
      authorizer: kind,
      subscribers: String(count),
      subject: {
        name: `${kind}/${count}`,
        run: () => {
          observe(runtime, count, syncHandler);
          return runtime.executePlan(plan);
        },
      },
    });
  }
}
rows.push({
  authorizer: 'sync',
  subscribers: '10 async handlers',
  subject: {
    name: 'sync/10 async',
    run: () => {
      observe(runtimes.sync, 10, asyncHandler);
      return runtimes.sync.executePlan(plan);
    },
  },
});

const results = await interleave(
  rows.map((row) => row.subject),
  rounds,
  operations,
);
const medians = results.map((result) => median(result.samples));
const base = medians[0] as number;
const noObserver = (authorizer: string) =>
  medians[
    rows.findIndex((row) => row.authorizer === authorizer && row.subscribers === '0')
  ] as number;

console.log('### Observers and authorizers (1-step plan, in-memory store)\n');
console.log(
  `${machine()}, ${cpus().length} cores, ${rounds} interleaved rounds of ${operations} plans; times in µs per plan ` +
    `(median of rounds; p99 of rounds). Observers subscribe to '*': 5 events per plan each. ` +
    `${delivered.toLocaleString('en')} events delivered in all.\n`,
);
console.log(
  '| authorizer | subscribers | median µs | p99 µs | ratio to direct | µs over 0 subscribers, same authorizer |',
);
console.log('| --- | --- | ---: | ---: | ---: | ---: |');
rows.forEach((row, index) => {
  const result = results[index];
  if (result === undefined) return;
  const med = medians[index] as number;
  const extra = row.authorizer === '-' ? '-' : fmt(med - noObserver(row.authorizer));
  console.log(
    `| ${row.authorizer} | ${row.subscribers} | ${fmt(med)} | ${fmt(percentile(result.samples, 99))} | ${fmt(med / base, 1)}x | ${extra} |`,
  );
});
const asyncCost = noObserver('async') - noObserver('sync');
console.log(
  `\nAsync authorizer (a Promise of { decision: 'allow' }) over a synchronous one: ${fmt(asyncCost)} µs per step.`,
);
await runtimes.sync.close();
await runtimes.async.close();
