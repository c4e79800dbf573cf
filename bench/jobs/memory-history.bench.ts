// Scaling with history: 1,000,000 executed one-step jobs through a memory store bounded by
// maxJobs 10,000. Resident memory must stay bounded: it is sampled as the history grows and
// compared with the first sample after warm-up (the baseline of this run).
import { OperatorRuntime, createCapability } from '../../src/index.js';
import { fmt, machine } from '../support/measure.js';

const total = Number(process.env.BENCH_HISTORY_JOBS ?? 1_000_000);
const runtime = new OperatorRuntime({ maxJobs: 10_000 });
runtime.use({
  manifest: { name: 'history', version: '1', capabilities: ['history.step'] },
  capabilities: [
    createCapability({
      name: 'history.step',
      version: '1',
      description: 'd',
      risk: 'read',
      lifecycleLogging: false,
      execute: () => ({ ok: true }),
    }),
  ],
});
const plan = {
  version: '1.0' as const,
  steps: [{ id: 's', capability: 'history.step', input: { n: 1 } }],
};

const rows: string[] = [];
let baseline = 0;
const started = process.hrtime.bigint();
for (let done = 1; done <= total; done++) {
  await runtime.executePlan(plan);
  if (done % (total / 10) === 0 || done === 20_000) {
    globalThis.gc?.();
    const rss = process.memoryUsage().rss / 1024 / 1024;
    if (done === 20_000) baseline = rss;
    const kept = (await runtime.listJobs()).length;
    rows.push(
      `| ${done.toLocaleString('en')} | ${kept.toLocaleString('en')} | ${fmt(rss, 0)} | ${baseline === 0 ? '-' : `${fmt(rss / baseline, 2)}x`} |`,
    );
  }
}
const seconds = Number(process.hrtime.bigint() - started) / 1e9;
console.log('### Memory store history (maxJobs 10,000)\n');
console.log(
  `${machine()}; ${total.toLocaleString('en')} one-step jobs in ${fmt(seconds, 1)} s (${fmt(total / seconds, 0)} jobs/s). RSS after a forced GC where available; ratio to the sample at 20,000 jobs.\n`,
);
console.log('| jobs executed | jobs kept | RSS MiB | ratio to 20,000 |');
console.log('| ---: | ---: | ---: | ---: |');
for (const row of rows) console.log(row);
await runtime.close();
