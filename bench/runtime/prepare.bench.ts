// What a prepared effect costs (docs/api.md, "Prepared effects"; API-4 section 30): a 1-step
// in-memory plan whose capability has no `prepare`, and the same with a trivial `prepare`
// (a small effect, returned at once), interleaved in the same rounds. The contract: without
// `prepare`, within 3 % of the commit before; with it, at most 5 µs beyond the `prepare` itself.
// BENCH_BASELINE=<dir> adds the package root at <dir>/src/index.ts (`git archive <commit> src |
// tar -x -C <dir>`, node_modules linked) to the same rounds: the capability without `prepare`
// on the earlier commit. Run: npm run bench -- bench/runtime/prepare.bench.ts
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type * as RootModule from '../../src/index.js';
import { fmt, interleave, machine, median, type Subject } from '../support/measure.js';

type Root = typeof RootModule;

const rounds = Number(process.env.BENCH_ROUNDS ?? 25);
const operations = Number(process.env.BENCH_OPERATIONS ?? 2000);
const baselineDir = process.env.BENCH_BASELINE;
const current = (await import(new URL('../../src/index.ts', import.meta.url).href)) as Root;

const execute = ({ input }: { input: { n: number } }) => ({ n: input.n + 1 });
const prepare = (input: { n: number }) => ({ op: 'increment', n: input.n });

/** A runtime of `root` with one capability (`prepared`: with the trivial `prepare`). */
function subject(root: Root, name: string, prepared: boolean): Subject {
  const runtime = new root.OperatorRuntime();
  const capability = `${name.replace(/\W+/g, '-')}.increment`;
  runtime.use({
    manifest: { name: capability, version: '1.0.0', capabilities: [capability] },
    capabilities: [
      root.createCapability({
        name: capability,
        version: '1.0.0',
        description: 'adds one',
        risk: 'read',
        lifecycleLogging: false,
        inputSchema: { n: { type: 'number', required: true, description: 'n' } },
        ...(prepared && { prepare }),
        execute,
      }),
    ],
  });
  const plan = { version: '1.0' as const, steps: [{ id: 'one', capability, input: { n: 1 } }] };
  return { name, run: () => runtime.executePlan(plan) };
}

const subjects: Subject[] = [
  { name: 'the prepare function alone', run: () => prepare({ n: 1 }) },
  subject(current, 'no prepare', false),
  subject(current, 'trivial prepare', true),
];
if (baselineDir !== undefined) {
  const before = (await import(pathToFileURL(join(baselineDir, 'src/index.ts')).href)) as Root;
  subjects.push(subject(before, 'no prepare, before', false));
}

console.log(`${machine()}; ${rounds} rounds of ${operations} one-step jobs, medians`);
const measured = await interleave(subjects, rounds, operations);
const byName = new Map(measured.map((entry) => [entry.name, median(entry.samples)]));
console.log('\n| subject | µs per job |\n| --- | ---: |');
for (const [name, value] of byName) console.log(`| ${name} | ${fmt(value, 2)} |`);
const without = byName.get('no prepare') as number;
const withPrepare = byName.get('trivial prepare') as number;
const alone = byName.get('the prepare function alone') as number;
console.log(
  `\nwith a trivial prepare: +${fmt(withPrepare - without - alone, 2)} µs a step beyond the prepare itself`,
);
const before = byName.get('no prepare, before');
if (before !== undefined)
  console.log(`without prepare vs before: ${fmt((without / before - 1) * 100, 1)} %`);
