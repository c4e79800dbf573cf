// Scaling with plan size: full execution of plans of 1 to 10,000 steps, each step referencing
// the previous step's result. Cost per step must stay flat (linear total). Baseline, in the same
// run: calling the capability function once per step directly.
import { OperatorRuntime, createCapability, type ExecutionPlan } from '../../src/index.js';
import { capabilityInventory } from '../../src/capabilities/inventory.js';
import { admitPlan } from '../../src/plan/admission.js';
import { captureSubmission } from '../../src/plan/capture.js';
import { fmt, machine, median } from '../support/measure.js';

const work = ({ input }: { input: { n?: number } }) => ({ n: (input.n ?? 0) + 1 });
const runtime = new OperatorRuntime({ maxJobs: 1 }); // isolate plan size from retained history
runtime.use({
  manifest: { name: 'scale', version: '1', capabilities: ['scale.step'] },
  capabilities: [
    createCapability({
      name: 'scale.step',
      version: '1',
      description: 'd',
      risk: 'read',
      lifecycleLogging: false,
      execute: work,
    }),
  ],
});

function plan(steps: number): ExecutionPlan {
  return {
    version: '1.0',
    steps: Array.from({ length: steps }, (_, index) => ({
      id: `s${index}`,
      capability: 'scale.step',
      input: index === 0 ? { n: 0 } : { n: { $ref: `steps.s${index - 1}.result.n` } },
    })),
  };
}

async function timeIt(run: () => Promise<unknown>, repeats: number): Promise<number> {
  const samples: number[] = [];
  for (let index = 0; index < repeats; index++) {
    const start = process.hrtime.bigint();
    await run();
    samples.push(Number(process.hrtime.bigint() - start) / 1000);
  }
  return median(samples);
}

console.log('### Scaling with plan size (full execution, memory store)\n');
console.log(`${machine()}; medians of repeated runs, each step references the previous one.\n`);
console.log(
  '| steps | direct µs/step | admission only ms | governed total ms | governed µs/step | ratio to direct |',
);
console.log('| ---: | ---: | ---: | ---: | ---: | ---: |');
for (const steps of [1, 10, 100, 1_000, 10_000]) {
  const submitted = plan(steps);
  const repeats = Math.max(5, Math.min(2000, Math.floor(20_000 / steps)));
  await timeIt(() => runtime.executePlan(submitted), Math.ceil(repeats / 4));
  const direct = await timeIt(async () => {
    let last: unknown = { n: 0 };
    for (let index = 0; index < steps; index++) last = await work({ input: last as { n: number } });
    return last;
  }, repeats);
  const inventory = capabilityInventory();
  const admission = await timeIt(
    async () => admitPlan(captureSubmission(submitted, 100_000), (name) => inventory.get(name)),
    repeats,
  );
  const governed = await timeIt(() => runtime.executePlan(submitted), repeats);
  console.log(
    `| ${steps} | ${fmt(direct / steps, 3)} | ${fmt(admission / 1000, 3)} | ${fmt(governed / 1000, 3)} | ${fmt(governed / steps)} | ${fmt(governed / direct, 0)}x |`,
  );
}
await runtime.close();
