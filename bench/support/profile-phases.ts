// Where a request's time goes, from a `--cpu-prof` profile of an HTTP server (the servers of
// execute.bench.ts under BENCH_HTTP_PROFILE=<dir>): each sample is put in the phase of the
// innermost frame a rule below matches (so a digest computed while recording a step is "record",
// a hash Node computes for Warrant's record too), idle time and module loading are left out.
// The profile samples wall time: a server preempted in a system call (a socket write wakes the
// client, which may take the CPU at once on a machine with few cores) is charged for the wait.
// So system calls are not read from the profile: with the CPU µs per request measured from
// /proc in the same run, the user-space phases share the user time (all threads: the GC's
// helpers too) in their profile proportions and the kernel's row is the system time.
//   node --import tsx bench/http/profile-phases.ts <file.cpuprofile> <requests> [user µs/request system µs/request]
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string };
  readonly children?: readonly number[];
}
interface Profile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}
type Frame = { readonly name: string; readonly url: string };

const IDLE = 'idle';
const KERNEL = 'kernel (system CPU: sockets, epoll, file writes, page faults)';
const STARTUP = 'module loading (start-up)';
type Rule = readonly [phase: string, test: (frame: Frame) => boolean];
/** Where the sample itself is (the innermost frame that matches wins). */
const LEAF_RULES: readonly Rule[] = [
  [IDLE, (f) => f.name === '(idle)'],
  ['garbage collection', (f) => f.name === '(garbage collector)'],
  [KERNEL, (f) => f.name === 'writev' || f.name === 'writevGeneric'],
  [
    STARTUP,
    (f) =>
      /internal\/modules\/|esm\/hooks/.test(f.url) ||
      f.name === 'readFileUtf8' ||
      f.name === 'compileFunction',
  ],
];
/** Otherwise, whose code asked for it (the innermost frame that matches wins): Node's own work
 * (a hash, an AbortSignal, a timer) counts for the code that called it. */
const CODE_RULES: readonly Rule[] = [
  ['record (values, digests)', (f) => /\/src\/(jobs\/recorded-value|json\/)(?!answer)/.test(f.url)],
  ['job (transitions, store)', (f) => /\/src\/jobs\//.test(f.url)],
  ['admission (capture, checks)', (f) => /\/src\/(plan|policy|limits)\//.test(f.url)],
  ['capability (system.echo)', (f) => /\/src\/(builtins|capabilities)\//.test(f.url)],
  ['executor, runtime', (f) => /\/src\/(runtime|events|notifications|callers)\//.test(f.url)],
  [
    'body parse (depth, JSON, keys)',
    (f) => /parse-json-body|json-depth|content-type-parser|secure-json-parse/.test(f.url),
  ],
  [
    'answer encoding',
    (f) => /\/src\/json\/answer|fast-json-stringify/.test(f.url) || f.name === 'serialize',
  ],
  ['authentication, request gate', (f) => /\/src\/http\/(request-gate|auth\/)/.test(f.url)],
  ['trace context', (f) => /trace-context|@opentelemetry/.test(f.url)],
  ['route handler', (f) => /\/src\/http\/routes\//.test(f.url)],
  ['server hooks (server.ts)', (f) => /\/src\/http\/server/.test(f.url)],
  ['other Warrant code', (f) => /\/src\//.test(f.url)],
  ['bare route (bench fixture)', (f) => /bench\/fixtures/.test(f.url)],
  [
    'Fastify',
    (f) => /node_modules\/(fastify|find-my-way|avvio|@fastify|light-my-request)/.test(f.url),
  ],
];
const NODE = 'Node: HTTP parser, streams, ticks';
const OTHER = 'other (V8, natives)';

export interface PhaseRow {
  readonly phase: string;
  readonly share: number;
  readonly microseconds: number;
}

/** The phases of a profile's busy time (idle and module loading left out), largest first; the
 * kernel's row is `systemPerRequest` when given, else the profile's time in socket writes. */
export function profilePhases(
  file: string,
  requests: number,
  cpu?: { readonly userPerRequest: number; readonly systemPerRequest: number },
): { readonly busyPerRequest: number; readonly rows: readonly PhaseRow[] } {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes)
    for (const child of node.children ?? []) parent.set(child, node.id);
  const sampled = new Map<number, number>();
  profile.samples.forEach((id, index) =>
    sampled.set(id, (sampled.get(id) ?? 0) + (profile.timeDeltas[index] ?? 0)),
  );
  const frames = (id: number): Frame[] => {
    const stack: Frame[] = [];
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const { functionName, url } = (byId.get(at) as ProfileNode).callFrame;
      stack.push({ name: functionName, url });
    }
    return stack;
  };
  const match = (stack: readonly Frame[], rules: readonly Rule[]): string | undefined => {
    for (const frame of stack) for (const [phase, test] of rules) if (test(frame)) return phase;
    return undefined;
  };
  const classify = (id: number): string => {
    const stack = frames(id);
    return (
      match(stack, LEAF_RULES) ??
      match(stack, CODE_RULES) ??
      (stack.some((frame) => frame.url.startsWith('node:')) ? NODE : OTHER)
    );
  };
  const totals = new Map<string, number>();
  for (const [id, time] of sampled) {
    const phase = classify(id);
    totals.set(phase, (totals.get(phase) ?? 0) + time);
  }
  totals.delete(IDLE);
  totals.delete(STARTUP);
  const busy = [...totals.values()].reduce((sum, time) => sum + time, 0);
  const kernel = totals.get(KERNEL) ?? 0;
  const user = busy - kernel;
  const userScale = cpu === undefined ? user / requests : cpu.userPerRequest;
  const rows: PhaseRow[] = [...totals]
    .filter(([phase]) => phase !== KERNEL)
    .map(([phase, time]) => ({
      phase,
      share: time / user,
      microseconds: (time / user) * userScale,
    }));
  rows.push({
    phase: KERNEL,
    share: Number.NaN,
    microseconds: cpu === undefined ? kernel / requests : cpu.systemPerRequest,
  });
  rows.sort((a, b) => b.microseconds - a.microseconds);
  return { busyPerRequest: busy / requests, rows };
}

/** The phases as a Markdown table. */
export function phaseTable(
  file: string,
  requests: number,
  cpu?: { readonly userPerRequest: number; readonly systemPerRequest: number },
): string {
  const { busyPerRequest, rows } = profilePhases(file, requests, cpu);
  const measured =
    cpu === undefined
      ? 'µs from the profile alone (wall time: preemption in system calls included)'
      : `user-space phases scaled to ${cpu.userPerRequest.toFixed(1)} µs of user CPU a request, the kernel's row ${cpu.systemPerRequest.toFixed(1)} µs of system CPU (/proc, same run)`;
  return [
    `Profile ${file}: ${requests.toLocaleString('en')} requests, ${busyPerRequest.toFixed(1)} µs of sampled busy time a request; ${measured}.`,
    '',
    '| phase | share of user time | µs/request |',
    '| --- | ---: | ---: |',
    ...rows.map(
      (row) =>
        `| ${row.phase} | ${Number.isNaN(row.share) ? '-' : `${(row.share * 100).toFixed(1)}%`} | ${row.microseconds.toFixed(1)} |`,
    ),
  ].join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [file, requests, user, system] = process.argv.slice(2);
  if (file === undefined || requests === undefined) {
    process.stderr.write(
      'usage: profile-phases.ts <file.cpuprofile> <requests> [user µs/request system µs/request]\n',
    );
    process.exitCode = 2;
  } else {
    const cpu =
      user === undefined || system === undefined
        ? undefined
        : { userPerRequest: Number(user), systemPerRequest: Number(system) };
    console.log(phaseTable(file, Number(requests), cpu));
  }
}
