// HTTP (issue 8 item 5): `POST /api/capabilities/system.echo/execute` on the server of
// `warrant serve`, in a child process on 127.0.0.1, under autocannon (this process) for
// BENCH_HTTP_SECONDS (default 10) at BENCH_HTTP_CONNECTIONS (default 50) connections, with the
// memory and the SQLite store. Baseline, in the same run: a bare Fastify server in a child process
// whose route does the same JSON echo work, ungoverned. Rounds are interleaved (the order rotates
// every round) after a warm-up of each server. Target with the memory store: at least 8,000
// requests/s with p99 under 20 ms. BENCH_HTTP_PROFILE=<dir> runs the servers with --cpu-prof.
//
// Authentication (issue 17): the memory server again with each mode of `warrant serve`, every
// request carrying the same credentials, as a client reusing its token does: `--token`,
// `--callers` (a file of 100 callers, the match last), and JWT signed with HS256
// (`--jwt-secret`) and ES256 (`--jwt-public-key`). A verified JWT is remembered until it
// expires (docs/decisions.md "Authentication modes"), so the rows measure the steady state, not
// one signature check per request. Target: each mode costs at most 10% more server CPU per
// request than `--token`, in the same run.
// BENCH_HTTP_ONLY=<keys> starts only those servers (comma-separated: bare, memory, sqlite,
// token, callers, jwt-hs256, jwt-es256, dist), e.g. BENCH_HTTP_ONLY=token,callers,jwt-hs256,jwt-es256.
// BENCH_HTTP_BASELINE=<dir>: a checkout of other code (e.g. `git archive <commit>` unpacked, with
// node_modules) whose memory and SQLite servers run in the same interleaved rounds, as
// "(baseline)" rows: before and after a change in one run. With BENCH_HTTP_PROFILE each server's
// profile is summarized by request phase (bench/support/profile-phases.ts) after the table.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { Database } from '../../src/stores/sqlite/sqlite-driver.cjs';
import { SignJWT, exportSPKI, generateKeyPair } from 'jose';
import { fmt, machine, median } from '../support/measure.js';
import { phaseTable } from '../support/profile-phases.js';

const seconds = Number(process.env.BENCH_HTTP_SECONDS ?? 10);
const rounds = Number(process.env.BENCH_HTTP_ROUNDS ?? 3);
const connections = Number(process.env.BENCH_HTTP_CONNECTIONS ?? 50);
const warmupSeconds = Math.min(3, seconds);
const profileDir = process.env.BENCH_HTTP_PROFILE;
const fixture = fileURLToPath(new URL('../fixtures/http-server.ts', import.meta.url));
// BENCH_HTTP_DIST=1 adds the built program (`node dist/esm/cli/main.js serve`, run `npm run build`
// first) with the memory store: tsx runs src/ with esbuild's keepNames, whose `__name` wrappers
// cost the governed path a few percent that the published build does not pay.
const distMain = fileURLToPath(new URL('../../dist/esm/cli/main.js', import.meta.url));
const withDist = process.env.BENCH_HTTP_DIST === '1';
const baselineDir = process.env.BENCH_HTTP_BASELINE;
const body = JSON.stringify({ input: { message: 'hello' } });
const only = process.env.BENCH_HTTP_ONLY?.split(',').map((key) => key.trim());
const wanted = (key: string) => only === undefined || only.includes(key);

interface Server {
  readonly name: string;
  readonly store: string;
  readonly child: ChildProcess;
  readonly url: string;
  /** Sent with every request (the credentials of the authentication rows). */
  readonly headers: Readonly<Record<string, string>>;
  /** 2xx answers counted by autocannon (and the check request). */
  ok: number;
  /** Every request answered, warm-up included (the requests a profile covers). */
  served: number;
  readonly runs: autocannon.Result[];
  /** CPU time of the server process per answered request, per run (µs). */
  readonly cpuPerRequest: number[];
  /** Of which user time (all threads), per run (µs). */
  readonly userPerRequest: number[];
  /** CPU time of the server process over the run's wall time, per run (1 = one core). */
  readonly cpuShare: number[];
  /** Time the server's main thread was runnable but waiting for a CPU, over wall time, per run. */
  readonly cpuWait: number[];
}

/** Nanoseconds the main thread of a process has waited for a CPU (Linux schedstat), or NaN. */
function runQueueWait(pid: number | undefined): number {
  try {
    return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[1]);
  } catch {
    return Number.NaN;
  }
}

/** User and system CPU seconds of a process (Linux /proc; clock ticks of 10 ms), or NaN. */
function cpuTimes(pid: number | undefined): { user: number; system: number } {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return { user: Number(fields[11]) / 100, system: Number(fields[12]) / 100 };
  } catch {
    return { user: Number.NaN, system: Number.NaN };
  }
}

/** User + system CPU seconds of a process, or NaN. */
function cpuSeconds(pid: number | undefined): number {
  const { user, system } = cpuTimes(pid);
  return user + system;
}

/** Starts `node <program...>` and waits for its "listening on <url>" line. */
async function start(
  name: string,
  store: string,
  program: string[],
  headers: Record<string, string> = {},
): Promise<Server> {
  const profile =
    profileDir === undefined
      ? []
      : ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, `--cpu-prof-name=${name}.cpuprofile`];
  const child = spawn(process.execPath, [...profile, ...program], {
    stdio: ['ignore', 'inherit', 'pipe'],
  });
  const lines = createInterface({ input: child.stderr as NodeJS.ReadableStream });
  const address = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${name} exited with ${code} before listening`)));
    lines.on('line', (line) => {
      const match = /listening on (http:\/\/\S+)/.exec(line);
      if (match?.[1] !== undefined) resolve(match[1]);
      else process.stderr.write(`${name}: ${line}\n`);
    });
  });
  const path = store === '-' ? '/api/echo' : '/api/capabilities/system.echo/execute';
  return {
    name,
    store,
    child,
    url: `${address}${path}`,
    headers: { 'content-type': 'application/json', ...headers },
    ok: 0,
    served: 0,
    runs: [],
    cpuPerRequest: [],
    userPerRequest: [],
    cpuShare: [],
    cpuWait: [],
  };
}

/** One request, checked: the answer must be the echo, 200. */
async function check(server: Server): Promise<void> {
  const response = await fetch(server.url, { method: 'POST', headers: server.headers, body });
  const answer = (await response.json()) as { result?: { message?: unknown } };
  if (response.status !== 200 || answer.result?.message !== 'hello')
    throw new Error(
      `${server.name}: unexpected answer ${response.status} ${JSON.stringify(answer)}`,
    );
  server.ok++;
  server.served++;
}

async function load(server: Server, duration: number, record = false): Promise<autocannon.Result> {
  const cpuBefore = cpuSeconds(server.child.pid);
  const userBefore = cpuTimes(server.child.pid).user;
  const waitBefore = runQueueWait(server.child.pid);
  const started = process.hrtime.bigint();
  const result = await autocannon({
    url: server.url,
    method: 'POST',
    headers: server.headers,
    body,
    connections,
    duration,
  });
  const wall = Number(process.hrtime.bigint() - started) / 1e9;
  const cpu = cpuSeconds(server.child.pid) - cpuBefore;
  server.ok += result['2xx'];
  server.served += result.requests.total;
  if (record) {
    server.runs.push(result);
    server.cpuPerRequest.push((cpu * 1e6) / result.requests.total);
    const user = cpuTimes(server.child.pid).user - userBefore;
    server.userPerRequest.push((user * 1e6) / result.requests.total);
    server.cpuShare.push(cpu / wall);
    server.cpuWait.push((runQueueWait(server.child.pid) - waitBefore) / 1e9 / wall);
  }
  return result;
}

const directory = mkdtempSync(join(tmpdir(), 'warrant-bench-http-'));
const sqliteFile = join(directory, 'jobs.db');
const servers: Server[] = [];
/** CPU of this process (autocannon) over the measured runs, in cores. */
const loadGenerator = { cores: Number.NaN };
/** The flags and the request headers of each authentication row. */
async function authenticationRows(): Promise<
  [key: string, name: string, flags: string[], token: string][]
> {
  const issuer = ['--jwt-issuer', 'https://id.bench.test', '--jwt-audience', 'warrant-bench'];
  const claims = {
    sub: 'bench-client',
    scope: 'plans:write',
    iss: 'https://id.bench.test',
    aud: 'warrant-bench',
  };
  const token = 'bench-token-0123456789abcdef';
  // 100 callers, the one used last: every entry is compared on every request anyway.
  const callers = Array.from({ length: 100 }, (_, index) => ({
    tokenSha256: createHash('sha256')
      .update(index === 99 ? token : `other-${index}`)
      .digest('hex'),
    caller: { id: `client-${index}`, scopes: ['plans:write'] },
  }));
  const callersFile = join(directory, 'callers.json');
  writeFileSync(callersFile, JSON.stringify({ callers }), { mode: 0o600 });
  const secret = 'a bench secret of at least thirty-two bytes';
  const hs256 = await new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256' })
    .setExpirationTime('2h')
    .sign(new TextEncoder().encode(secret));
  const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
  const keyFile = join(directory, 'es256.pem');
  writeFileSync(keyFile, await exportSPKI(publicKey));
  const es256 = await new SignJWT(claims)
    .setProtectedHeader({ alg: 'ES256' })
    .setExpirationTime('2h')
    .sign(privateKey);
  return [
    ['token', 'warrant-memory --token', ['--token', token], token],
    ['callers', 'warrant-memory --callers', ['--callers', callersFile], token],
    ['jwt-hs256', 'warrant-memory JWT HS256', ['--jwt-secret', secret, ...issuer], hs256],
    ['jwt-es256', 'warrant-memory JWT ES256', ['--jwt-public-key', keyFile, ...issuer], es256],
  ];
}

try {
  const tsx = ['--import', 'tsx', fixture];
  if (wanted('bare')) servers.push(await start('bare-fastify', '-', [...tsx, 'bare']));
  if (wanted('memory'))
    servers.push(await start('warrant-memory', 'memory', [...tsx, 'warrant', 'memory']));
  if (wanted('sqlite'))
    servers.push(
      await start('warrant-sqlite', 'sqlite', [...tsx, 'warrant', `sqlite:${sqliteFile}`]),
    );
  if (baselineDir !== undefined) {
    const before = ['--import', 'tsx', join(baselineDir, 'bench/fixtures/http-server.ts')];
    if (wanted('memory'))
      servers.push(
        await start('warrant-memory (baseline)', 'memory', [...before, 'warrant', 'memory']),
      );
    if (wanted('sqlite'))
      servers.push(
        await start('warrant-sqlite (baseline)', 'sqlite', [
          ...before,
          'warrant',
          `sqlite:${join(directory, 'baseline-jobs.db')}`,
        ]),
      );
  }
  for (const [key, name, flags, token] of await authenticationRows()) {
    if (!wanted(key)) continue;
    const program = [...tsx, 'warrant', 'memory', ...flags];
    servers.push(await start(name, 'memory', program, { authorization: `Bearer ${token}` }));
  }
  if (withDist && wanted('dist')) {
    const serve = [distMain, 'serve', '--store', 'memory', '--port', '0'];
    servers.push(await start('warrant-memory (dist)', 'memory', serve));
  }
  for (const server of servers) {
    await check(server);
    await load(server, warmupSeconds);
    console.error(`http: ${server.name} warmed up`);
  }
  const measuredFrom = process.hrtime.bigint();
  const cpuFrom = process.cpuUsage();
  for (let round = 0; round < rounds; round++) {
    for (let offset = 0; offset < servers.length; offset++) {
      const server = servers[(round + offset) % servers.length] as Server;
      const result = await load(server, seconds, true);
      console.error(
        `http: round ${round + 1} ${server.name}: ${fmt(result.requests.average, 0)} req/s, p99 ${result.latency.p99} ms`,
      );
    }
  }
  const used = process.cpuUsage(cpuFrom);
  loadGenerator.cores =
    (used.user + used.system) / 1e6 / (Number(process.hrtime.bigint() - measuredFrom) / 1e9);
} finally {
  for (const server of servers) {
    const exited = once(server.child, 'exit');
    server.child.kill('SIGTERM');
    await exited;
  }
}

// Every 2xx answer of the SQLite server is a stored job (a request cut off by the end of a run
// may have been stored without being counted).
const named = (name: string) => servers.find((server) => server.name === name);
const sqlite = named('warrant-sqlite');
let stored = 0;
if (sqlite !== undefined) {
  const db = new Database(sqliteFile, { readonly: true });
  stored = (db.prepare('SELECT count(*) AS n FROM jobs').get() as { n: number }).n;
  db.close();
  const runCount = rounds + 1;
  if (stored < sqlite.ok || stored > sqlite.ok + connections * runCount)
    throw new Error(`SQLite server stored ${stored} jobs for ${sqlite.ok} 2xx answers`);
}
rmSync(directory, { recursive: true, force: true });

const base = named('bare-fastify');
const perSecond = (server: Server) => median(server.runs.map((run) => run.requests.average));
const baseRate = base === undefined ? Number.NaN : perSecond(base);
console.log(
  '### HTTP: POST /api/capabilities/system.echo/execute under autocannon, vs a bare Fastify echo\n',
);
console.log(
  `${machine()}, ${cpus().length} cores (server child, autocannon and nothing else of ours share them), ` +
    `${connections} connections, ${rounds} interleaved rounds of ${seconds} s per server after ${warmupSeconds} s of warm-up; ` +
    `medians of the rounds (requests/s: mean per second of a run; latencies: that run's percentiles). ` +
    `autocannon (this process) used ${fmt(loadGenerator.cores, 2)} cores while measuring.` +
    (sqlite === undefined
      ? '\n'
      : ` The SQLite server stored ${stored.toLocaleString('en')} jobs for ${sqlite.ok.toLocaleString('en')} 2xx answers.\n`),
);
console.log(
  '| server | store | requests/s | ratio to bare | p50 ms | p99 ms | non-2xx | errors | server CPU µs/request | server CPU, cores | server waiting for a CPU | requests/s per round |',
);
console.log('| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |');
for (const server of servers) {
  const runs = server.runs;
  const sum = (pick: (run: autocannon.Result) => number) =>
    runs.reduce((total, run) => total + pick(run), 0);
  console.log(
    `| ${server.name} | ${server.store} | ${fmt(perSecond(server), 0)} | ${base === undefined ? '-' : `${fmt(perSecond(server) / baseRate, 2)}x`} | ` +
      `${fmt(median(runs.map((run) => run.latency.p50)), 1)} | ${fmt(median(runs.map((run) => run.latency.p99)), 1)} | ` +
      `${sum((run) => run.non2xx)} | ${sum((run) => run.errors + run.timeouts)} | ` +
      `${fmt(median(server.cpuPerRequest), 0)} | ${fmt(median(server.cpuShare), 2)} | ${fmt(median(server.cpuWait) * 100, 0)}% | ${runs.map((run) => fmt(run.requests.average, 0)).join(', ')} |`,
  );
}
console.log('');
const token = named('warrant-memory --token');
if (token !== undefined) {
  const tokenCpu = median(token.cpuPerRequest);
  for (const server of servers.filter((entry) => /--callers|JWT/.test(entry.name))) {
    const ratio = median(server.cpuPerRequest) / tokenCpu;
    console.log(
      `Server CPU per request of ${server.name} over --token: ${fmt((ratio - 1) * 100, 1)}% (target <= 10%: ${ratio <= 1.1 ? 'met' : 'not met'}).`,
    );
  }
  console.log('');
}
for (const memory of servers.filter((server) => server.store === 'memory')) {
  const p99 = median(memory.runs.map((run) => run.latency.p99));
  const met = perSecond(memory) >= 8000 && p99 < 20;
  console.log(
    `Target for ${memory.name} (>= 8,000 requests/s, p99 < 20 ms): ${met ? 'met' : 'not met'}.`,
  );
}

if (profileDir !== undefined) {
  for (const server of servers) {
    console.log('');
    console.log(
      phaseTable(join(profileDir, `${server.name}.cpuprofile`), server.served, {
        userPerRequest: median(server.userPerRequest),
        systemPerRequest: median(server.cpuPerRequest) - median(server.userPerRequest),
      }),
    );
  }
}
