// runtime.planSchema() for 200 capabilities (issue 48: under 50 ms, cached until the
// registry changes). 150 field-record capabilities of 5 fields and 50 zod ones of 3, the mix a
// program serves. Measured in one run: the first call (every branch built), a call after the
// registry grew by one (the whole schema rebuilt from the kept branches), the cached call, and
// `include`-filtered calls; the baseline is runtime.listCapabilities() of the same 200, which
// builds one descriptor per capability. Cold builds are repeated on 200 fresh capabilities per
// round (the inventory is process-global and only grows). Run:
// npm run bench -- bench/plan/plan-schema.bench.ts
import { z } from 'zod';
import {
  OperatorRuntime,
  createCapability,
  type Capability,
  type CapabilityDescriptor,
} from '../../src/index.js';
import { fmt, interleave, machine, median } from '../support/measure.js';

const rounds = Number(process.env.BENCH_ROUNDS ?? 7);
const CAPABILITIES = 200;
const runtime = new OperatorRuntime({ planVersions: ['1.0', '2.0'] });
let registered = 0;

/** Registers `count` fresh capabilities; resolves their names. */
function registerFresh(count: number): Set<string> {
  const capabilities: Capability[] = [];
  for (let index = 0; index < count; index++) {
    const name = `bench.schema.${registered++}`;
    const inputSchema =
      index % 4 === 3
        ? z.object({
            query: z.string().min(1),
            limit: z.number().int().optional(),
            tags: z.array(z.string()),
          })
        : {
            id: { type: 'string' as const, required: true, description: 'The id' },
            count: { type: 'number' as const, required: false, description: 'How many' },
            body: { type: 'object' as const, required: false, description: 'The body' },
            tags: { type: 'array' as const, required: false, description: 'Tags' },
            dry: { type: 'boolean' as const, required: false, description: 'Dry run' },
          };
    capabilities.push(
      createCapability({
        name,
        version: '1.0.0',
        description: `Benchmark capability ${index}`,
        risk: index % 3 === 0 ? 'write' : 'read',
        lifecycleLogging: false,
        inputSchema,
        execute: () => 'ok',
      }) as Capability,
    );
  }
  runtime.use({
    manifest: {
      name: `bench-schema-${registered}`,
      version: '1',
      capabilities: capabilities.map((c) => c.name),
    },
    capabilities,
  });
  return new Set(capabilities.map((capability) => capability.name));
}

const gc = (globalThis as { gc?: () => void }).gc;

/** One timed call, after a collection (run-bench passes --expose-gc), so no earlier garbage counts. */
function ms(run: () => unknown): number {
  gc?.();
  const start = process.hrtime.bigint();
  run();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

console.log('### runtime.planSchema() for 200 capabilities\n');
console.log(
  `${machine()}; ${rounds} rounds, medians; baseline runtime.listCapabilities() of the same capabilities.\n`,
);

// The default schema of exactly 200 capabilities.
registerFresh(CAPABILITIES);
const first = ms(() => runtime.planSchema());
const bytes = JSON.stringify(runtime.planSchema()).length;
const [cached, baseline] = await interleave(
  [
    { name: 'cached', run: () => runtime.planSchema() },
    { name: 'listCapabilities', run: () => runtime.listCapabilities() },
  ],
  rounds,
  200,
);

// Cold builds again and again: 200 capabilities never seen, selected by include.
const cold: number[] = [];
const warm: number[] = [];
const listed: number[] = [];
const grown: number[] = [];
for (let round = 0; round < rounds; round++) {
  const fresh = registerFresh(CAPABILITIES);
  const include = (descriptor: CapabilityDescriptor) => fresh.has(descriptor.name);
  cold.push(ms(() => runtime.planSchema({ include })));
  warm.push(ms(() => runtime.planSchema({ include })));
  listed.push(ms(() => runtime.listCapabilities()));
  // The registry grew: the default schema (every capability so far, their branches kept) is
  // rebuilt once.
  grown.push(ms(() => runtime.planSchema()));
}
const base = median(baseline?.samples ?? []) / 1000;
const coldMs = median(cold);
console.log('| call | ms | ratio to listCapabilities() |');
console.log('| --- | ---: | ---: |');
console.log(
  `| first call, default (200 branches built) | ${fmt(first, 2)} | ${fmt(first / base, 1)}x |`,
);
console.log(
  `| cached, default | ${fmt(median(cached?.samples ?? []) / 1000, 3)} | ${fmt(median(cached?.samples ?? []) / 1000 / base, 2)}x |`,
);
console.log(`| listCapabilities() (baseline) | ${fmt(base, 3)} | 1x |`);
console.log(
  `| cold, include of 200 fresh (median of ${rounds}) | ${fmt(coldMs, 2)} | ${fmt(coldMs / median(listed), 1)}x (its round's listCapabilities(), ${registered} registered) |`,
);
console.log(
  `| warm branches, include of the same 200 | ${fmt(median(warm), 2)} | ${fmt(median(warm) / median(listed), 1)}x |`,
);
console.log(
  `| default after the registry grew (rebuilt from kept branches, 400 to ${registered} registered) | ${fmt(median(grown), 2)} | - |`,
);
console.log(
  `\nSchema of 200 capabilities: ${fmt(bytes / 1024, 0)} KiB of JSON. Target: under 50 ms.`,
);
await runtime.close();
