// Benchmark helpers: interleaved A/B rounds with warm-up, fixed iteration counts, medians and
// p99 of per-operation times (docs/decisions.md, "House rules"). Results are consumed so V8 cannot drop work.

export interface Subject {
  readonly name: string;
  /** Runs one operation; its value is consumed. */
  run(): unknown;
}

export interface Measured {
  readonly name: string;
  /** Per-operation time of each round, in microseconds. */
  readonly samples: number[];
}

let sink = 0;

function consume(value: unknown): void {
  if (value !== undefined && value !== null) sink ^= 1;
}

async function round(subject: Subject, operations: number): Promise<number> {
  const start = process.hrtime.bigint();
  for (let index = 0; index < operations; index++) {
    const value = subject.run();
    consume(value instanceof Promise ? await value : value);
  }
  return Number(process.hrtime.bigint() - start) / 1000 / operations;
}

/** Runs every subject `rounds` times, `operations` each, rotating the order every round. */
export async function interleave(
  subjects: readonly Subject[],
  rounds: number,
  operations: number,
): Promise<Measured[]> {
  for (const subject of subjects) await round(subject, Math.max(1, Math.floor(operations / 2)));
  const samples = subjects.map(() => [] as number[]);
  for (let index = 0; index < rounds; index++) {
    for (let offset = 0; offset < subjects.length; offset++) {
      const at = (index + offset) % subjects.length;
      (samples[at] as number[]).push(await round(subjects[at] as Subject, operations));
    }
  }
  if (sink === 2) console.log('unreachable');
  return subjects.map((subject, at) => ({ name: subject.name, samples: samples[at] as number[] }));
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

export function machine(): string {
  return `Node ${process.version}, ${process.platform}/${process.arch}`;
}

export function fmt(value: number, digits = 2): string {
  return value.toFixed(digits);
}
