// Import and start time (docs/decisions.md, "Light import"), on the BUILT package (run
// `npm run build` first). Every subject is a fresh process, rounds interleaved (the order rotates
// every round), medians reported as ratios to a baseline measured in the same run:
//
// - import: `node -e ''` (the baseline), `import()` of dist/esm/index.js, `require` of
//   dist/cjs/index.js. Wall time from spawn to exit, and the CPU time (user + system) the child
//   reports for itself at exit, which waiting for a CPU on a loaded machine does not inflate.
// - start: a bare Fastify script answering GET /health (the baseline) and `warrant serve --store
//   memory` answering GET /health: wall time from spawn to the first 200.
//
// After the timed rounds, one instrumented run of each subject lists the packages it loaded (a
// module.register resolve hook plus require.cache), which is what to look at when a ratio grows.
//   BENCH_IMPORT_ROUNDS (default 30)
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { median } from './support/measure.js';

const repo = (path: string) => fileURLToPath(new URL(`../${path}`, import.meta.url));
const ESM_ENTRY = pathToFileURL(repo('dist/esm/index.js')).href;
const CJS_ENTRY = repo('dist/cjs/index.js');
const CLI = repo('dist/esm/cli/main.js');
const rounds = Number(process.env.BENCH_IMPORT_ROUNDS ?? 30);
const dir = mkdtempSync(join(tmpdir(), 'warrant-import-bench-'));

// The child's own CPU time, printed at exit; the same line in every import subject.
const CPU = `process.on('exit', () => { const u = process.cpuUsage(); process.stdout.write(String((u.user + u.system) / 1000)); });`;

const BARE = `import Fastify from ${JSON.stringify(pathToFileURL(repo('node_modules/fastify/fastify.js')).href)};
const app = Fastify({ logger: false });
app.get('/health', async () => ({ status: 'ok' }));
const address = await app.listen({ host: '127.0.0.1', port: 0 });
process.stderr.write('listening on ' + address + '\\n');
process.once('SIGTERM', () => app.close());
`;
writeFileSync(join(dir, 'bare.mjs'), BARE);
writeFileSync(
  join(dir, 'hooks.mjs'),
  `import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  appendFileSync(process.env.WARRANT_RESOLVED, resolved.url + '\\n');
  return resolved;
}
`,
);
writeFileSync(
  join(dir, 'register.mjs'),
  `import { register } from 'node:module';
import { createRequire } from 'node:module';
import { appendFileSync } from 'node:fs';
register('./hooks.mjs', import.meta.url);
const require = createRequire(import.meta.url);
process.on('exit', () => appendFileSync(process.env.WARRANT_RESOLVED, Object.keys(require.cache).join('\\n') + '\\n'));
`,
);

interface Sample {
  wallMs: number;
  cpuMs: number | undefined;
}

interface Subject {
  readonly name: string;
  readonly group: 'import' | 'start';
  readonly args: string[];
  /** For servers: the child answers GET /health once it writes "listening on <url>". */
  readonly server?: boolean;
}

const subjects: Subject[] = [
  { name: "node -e ''", group: 'import', args: ['-e', CPU] },
  {
    name: 'import() dist/esm/index.js',
    group: 'import',
    args: ['--input-type=module', '-e', `${CPU} await import(${JSON.stringify(ESM_ENTRY)});`],
  },
  {
    name: 'require dist/cjs/index.js',
    group: 'import',
    args: ['-e', `${CPU} require(${JSON.stringify(CJS_ENTRY)});`],
  },
  {
    name: 'bare Fastify, GET /health',
    group: 'start',
    args: [join(dir, 'bare.mjs')],
    server: true,
  },
  {
    name: 'warrant serve --store memory, GET /health',
    group: 'start',
    args: [CLI, 'serve', '--store', 'memory', '--port', '0'],
    server: true,
  },
];

function get(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}/health`, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

function runOnce(
  subject: Subject,
  extraArgs: string[] = [],
  env: NodeJS.ProcessEnv = {},
): Promise<Sample> {
  return new Promise((resolve, reject) => {
    const start = process.hrtime.bigint();
    const elapsed = () => Number(process.hrtime.bigint() - start) / 1e6;
    const child = spawn(process.execPath, [...extraArgs, ...subject.args], {
      cwd: dir,
      env: { ...process.env, NODE_OPTIONS: '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    let stdout = '';
    let stderr = '';
    let answeredMs: number | undefined;
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      const url = /listening on (http:\/\/[^\s,]+)/.exec(stderr)?.[1];
      if (subject.server === true && url !== undefined && answeredMs === undefined) {
        answeredMs = -1;
        get(url).then(
          (status) => {
            answeredMs = elapsed();
            if (status !== 200) reject(new Error(`${subject.name}: /health answered ${status}`));
            child.kill('SIGTERM');
          },
          (error: unknown) => {
            child.kill('SIGKILL');
            reject(error as Error);
          },
        );
      }
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      const wallMs = subject.server === true ? answeredMs : elapsed();
      if (wallMs === undefined || wallMs < 0 || (subject.server !== true && code !== 0)) {
        reject(new Error(`${subject.name}: exit ${code ?? signal}: ${stderr.trim()}`));
        return;
      }
      const cpu = Number(stdout.trim());
      resolve({ wallMs, cpuMs: stdout.trim() === '' || Number.isNaN(cpu) ? undefined : cpu });
    });
  });
}

async function packagesLoaded(subject: Subject): Promise<string[]> {
  const file = join(dir, 'resolved.txt');
  writeFileSync(file, '');
  await runOnce(subject, ['--import', pathToFileURL(join(dir, 'register.mjs')).href], {
    WARRANT_RESOLVED: file,
  });
  const counts = new Map<string, number>();
  for (const line of new Set(readFileSync(file, 'utf8').split('\n'))) {
    const path = line.startsWith('file:') ? fileURLToPath(line) : line;
    const at = path.lastIndexOf('/node_modules/');
    if (at === -1) continue;
    const [first, second] = path.slice(at + '/node_modules/'.length).split('/');
    const name = first?.startsWith('@') ? `${first}/${second}` : (first as string);
    counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  return [...counts].sort((a, b) => b[1] - a[1]).map(([name, files]) => `${name} (${files})`);
}

const samples = subjects.map(() => [] as Sample[]);
for (const subject of subjects) await runOnce(subject); // warm-up: the file system cache
for (let round = 0; round < rounds; round++) {
  for (let offset = 0; offset < subjects.length; offset++) {
    const at = (round + offset) % subjects.length;
    (samples[at] as Sample[]).push(await runOnce(subjects[at] as Subject));
  }
}

const fmt = (value: number) => value.toFixed(1);
const base = { import: 0, start: 3 } as const;
const lines = [
  `### Import and start (${rounds} interleaved rounds, a fresh process each, Node ${process.versions.node})\n`,
  '| subject | wall ms (median) | ratio to baseline | CPU ms (median) | CPU ratio | packages loaded (files) |',
  '| --- | ---: | ---: | ---: | ---: | --- |',
];
for (const [at, subject] of subjects.entries()) {
  const mine = samples[at] as Sample[];
  const baseline = samples[base[subject.group]] as Sample[];
  const wall = median(mine.map((s) => s.wallMs));
  const cpuValues = mine.flatMap((s) => (s.cpuMs === undefined ? [] : [s.cpuMs]));
  const cpu = cpuValues.length === 0 ? undefined : median(cpuValues);
  const baseCpuValues = baseline.flatMap((s) => (s.cpuMs === undefined ? [] : [s.cpuMs]));
  const baseCpu = baseCpuValues.length === 0 ? undefined : median(baseCpuValues);
  const packages = (await packagesLoaded(subject)).join(', ') || 'none';
  lines.push(
    `| ${subject.name} | ${fmt(wall)} | ${(wall / median(baseline.map((s) => s.wallMs))).toFixed(2)}x | ` +
      `${cpu === undefined ? '-' : fmt(cpu)} | ${cpu === undefined || baseCpu === undefined ? '-' : `${(cpu / baseCpu).toFixed(2)}x`} | ${packages} |`,
  );
}
console.log(lines.join('\n'));
rmSync(dir, { recursive: true, force: true });
