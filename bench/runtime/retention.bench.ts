// What keeping jobs costs the governed hot path: a 1-step plan with nothing kept, with one id
// kept per job, and with the memory store's default 10,000 records, each in its own process
// (V8 sizes its heap per process), interleaved over rounds. The fourth subject keeps nothing
// but starts V8 with a 16 MiB young generation, the size V8 grows it to once anything is kept:
// it separates the cost of that larger young generation from the cost of copying kept objects.
// Run: npm run bench -- bench/runtime/retention.bench.ts (BENCH_ROUNDS, BENCH_OPERATIONS).
import { execFileSync } from 'node:child_process';
import { cpus } from 'node:os';
import { fmt, machine, median } from '../support/measure.js';

const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const plans = Number(process.env.BENCH_OPERATIONS ?? 60_000);

interface Subject {
  readonly name: string;
  readonly keep: string;
  readonly flags: readonly string[];
}
const subjects: Subject[] = [
  { name: 'nothing kept (maxJobs: 1)', keep: 'nothing', flags: [] },
  {
    name: 'nothing kept, young generation 16 MiB',
    keep: 'nothing',
    flags: ['--min-semi-space-size=16'],
  },
  { name: 'one id kept per job (last 10,000)', keep: 'id', flags: [] },
  { name: 'store default: last 10,000 records', keep: 'record', flags: [] },
];
interface Sample {
  readonly wallUs: number;
  readonly cpuUs: number;
  readonly gcPauseUs: number;
}
const samples = subjects.map(() => [] as Sample[]);
for (let round = 0; round < rounds; round++) {
  for (let offset = 0; offset < subjects.length; offset++) {
    const at = (round + offset) % subjects.length;
    const subject = subjects[at] as Subject;
    const out = execFileSync(
      process.execPath,
      [
        ...subject.flags,
        '--import',
        'tsx',
        'bench/fixtures/retention-worker.ts',
        subject.keep,
        String(plans),
      ],
      { encoding: 'utf8', timeout: 300_000 },
    );
    (samples[at] as Sample[]).push(JSON.parse(out.trim().split('\n').at(-1) as string) as Sample);
  }
}
const of = (at: number, key: keyof Sample) => median((samples[at] as Sample[]).map((s) => s[key]));
const base = of(0, 'wallUs');
console.log('### What retention costs (1-step plan, memory store)\n');
console.log(
  `${machine()}, ${cpus().length} cores, ${rounds} interleaved rounds of ${plans} plans, each subject in its own process; medians of rounds.\n`,
);
console.log(
  '| subject | wall µs/plan | ratio to nothing kept | CPU µs/plan (all threads) | collector pauses µs/plan |',
);
console.log('| --- | ---: | ---: | ---: | ---: |');
subjects.forEach((subject, at) => {
  console.log(
    `| ${subject.name} | ${fmt(of(at, 'wallUs'))} | ${fmt(of(at, 'wallUs') / base)}x | ${fmt(of(at, 'cpuUs'))} | ${fmt(of(at, 'gcPauseUs'))} |`,
  );
});
