// docs/decisions.md, "Light import": importing the BUILT package root, ESM or CommonJS, and
// running a plan on the memory store load no store driver, no HTTP stack, no JWT library and no
// MCP SDK; each loads only when its feature is used. Each build is loaded in a child process that
// records every module it resolves. `npm test` builds first (pretest); run `npm run build` before
// running this file alone.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';

const repo = (path: string) => fileURLToPath(new URL(`../../${path}`, import.meta.url));
const ESM_ENTRY = repo('dist/esm/index.js');
const CJS_ENTRY = repo('dist/cjs/index.js');

// Records, from the loader hooks' thread, every module the ESM loader resolves (CommonJS modules
// a CommonJS package requires do not pass there; the child adds require.cache's keys for those).
const HOOKS = `import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  appendFileSync(process.env.WARRANT_RESOLVED, resolved.url + '\\n');
  return resolved;
}
`;
const REGISTER = `import { register } from 'node:module';
register('./hooks.mjs', import.meta.url);
`;

// The same work in both builds: load the root, run a one-step plan on the memory store.
const WORK = `
  const runtime = new root.OperatorRuntime();
  runtime.use({
    manifest: { name: 'light', version: '1.0.0', capabilities: ['light.echo'] },
    capabilities: [
      root.createCapability({
        name: 'light.echo',
        version: '1.0.0',
        description: 'Echo',
        risk: 'read',
        inputSchema: {},
        execute: () => 'ok',
      }),
    ],
  });
  const job = await runtime.executePlan({ version: '1.0', steps: [{ id: 'one', capability: 'light.echo', input: {} }] });
  if (job.status !== 'completed') throw new Error('plan ' + job.status);
  await runtime.close();
  console.log(JSON.stringify(Object.keys(require.cache)));
`;

let dir: string;

function packageOf(path: string): string | undefined {
  const at = path.lastIndexOf('/node_modules/');
  if (at === -1) return undefined;
  const [first, second] = path.slice(at + '/node_modules/'.length).split('/');
  return first?.startsWith('@') ? `${first}/${second}` : first;
}

function packagesLoadedBy(build: 'esm' | 'cjs'): Set<string> {
  const resolvedFile = join(dir, `${build}.resolved`);
  writeFileSync(resolvedFile, '');
  const args =
    build === 'esm'
      ? [
          '--import',
          pathToFileURL(join(dir, 'register.mjs')).href,
          '--input-type=module',
          '-e',
          `import { createRequire } from 'node:module';
           const require = createRequire(import.meta.url);
           const root = await import(${JSON.stringify(pathToFileURL(ESM_ENTRY).href)});
           ${WORK}`,
        ]
      : ['-e', `(async () => { const root = require(${JSON.stringify(CJS_ENTRY)}); ${WORK} })()`];
  const stdout = execFileSync(process.execPath, args, {
    encoding: 'utf8',
    env: { ...process.env, WARRANT_RESOLVED: resolvedFile, NODE_OPTIONS: '' },
    timeout: 60_000,
  });
  const required = JSON.parse(stdout.trim().split('\n').pop() as string) as string[];
  const resolved = readFileSync(resolvedFile, 'utf8')
    .split('\n')
    .filter((url) => url.startsWith('file:'))
    .map((url) => fileURLToPath(url));
  const loaded = new Set<string>();
  for (const path of [...required, ...resolved]) {
    const name = packageOf(path);
    if (name !== undefined) loaded.add(name);
  }
  return loaded;
}

/** Packages an ESM import of these files loads, and nothing more. */
function packagesLoadedByImport(files: string[]): Set<string> {
  const resolvedFile = join(dir, 'files.resolved');
  writeFileSync(resolvedFile, '');
  const imports = files.map((file) => `await import(${JSON.stringify(pathToFileURL(file).href)});`);
  execFileSync(
    process.execPath,
    [
      '--import',
      pathToFileURL(join(dir, 'register.mjs')).href,
      '--input-type=module',
      '-e',
      imports.join('\n'),
    ],
    { env: { ...process.env, WARRANT_RESOLVED: resolvedFile, NODE_OPTIONS: '' }, timeout: 60_000 },
  );
  const loaded = new Set<string>();
  for (const url of readFileSync(resolvedFile, 'utf8').split('\n')) {
    const name = url.startsWith('file:') ? packageOf(fileURLToPath(url)) : undefined;
    if (name !== undefined) loaded.add(name);
  }
  return loaded;
}

/** Packages the `warrant` executable loads to run these arguments (which must exit 0). */
function packagesLoadedByCommand(args: string[]): Set<string> {
  const resolvedFile = join(dir, 'command.resolved');
  writeFileSync(resolvedFile, '');
  execFileSync(
    process.execPath,
    [
      '--import',
      pathToFileURL(join(dir, 'register.mjs')).href,
      repo('dist/esm/cli/main.js'),
      ...args,
    ],
    {
      env: { ...process.env, WARRANT_RESOLVED: resolvedFile, NODE_OPTIONS: '' },
      timeout: 60_000,
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  const loaded = new Set<string>();
  for (const url of readFileSync(resolvedFile, 'utf8').split('\n')) {
    const name = url.startsWith('file:') ? packageOf(fileURLToPath(url)) : undefined;
    if (name !== undefined) loaded.add(name);
  }
  return loaded;
}

function assertNotLoaded(loaded: Set<string>, forbidden: (name: string) => boolean, build: string) {
  const found = [...loaded].filter(forbidden).sort();
  assert.deepEqual(found, [], `${build} loaded ${found.join(', ')}`);
}

const STORES_HTTP_JWT = new Set(['better-sqlite3', 'bindings', 'pg', 'pg-pool', 'fastify', 'jose']);
const isStoreHttpOrJwt = (name: string) => STORES_HTTP_JWT.has(name);
const isMcpOrZod = (name: string) => name.startsWith('@modelcontextprotocol/') || name === 'zod';

describe('importing the package root (docs/decisions.md, "Light import")', () => {
  const loaded: Partial<Record<'esm' | 'cjs', Set<string>>> = {};

  before(() => {
    for (const entry of [ESM_ENTRY, CJS_ENTRY]) {
      assert.ok(existsSync(entry), `${entry} is missing: run \`npm run build\` first`);
    }
    dir = mkdtempSync(join(tmpdir(), 'warrant-light-'));
    writeFileSync(join(dir, 'hooks.mjs'), HOOKS);
    writeFileSync(join(dir, 'register.mjs'), REGISTER);
    loaded.esm = packagesLoadedBy('esm');
    loaded.cjs = packagesLoadedBy('cjs');
  });

  after(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  test('the recorder sees what the root does load', () => {
    // @opentelemetry/api and @standard-schema/spec are not required to load; this checks that the
    // recorder works at all: the package's own files resolve through it.
    for (const build of ['esm', 'cjs'] as const) assert.ok(loaded[build], build);
    const resolved = readFileSync(join(dir, 'esm.resolved'), 'utf8');
    // The build joins the modules into a few files (docs/decisions.md, "Build").
    assert.match(resolved, /\/dist\/esm\/chunks\/chunk-\w+\.js/);
  });

  test('loads no store driver (better-sqlite3, pg), no fastify and no jose, ESM and CommonJS', () => {
    assertNotLoaded(loaded.esm as Set<string>, isStoreHttpOrJwt, 'ESM root');
    assertNotLoaded(loaded.cjs as Set<string>, isStoreHttpOrJwt, 'CommonJS root');
  });

  test('the HTTP server and `warrant serve` load jose only for JWT mode, and the MCP SDKs only when used', () => {
    const serverOnly = packagesLoadedByImport([
      repo('dist/esm/http/server.js'),
      repo('dist/esm/cli/commands/serve.js'),
    ]);
    assert.ok(serverOnly.has('fastify'), 'the recorder sees fastify');
    assertNotLoaded(serverOnly, (name) => name === 'jose', 'the HTTP server');
    // The MCP server SDK (with zod) loads with the first request to /mcp, the client SDK with the
    // first call of an --mcp-server tool (test/http/mcp-route.test.ts, test/mcp/outbound.test.ts).
    assertNotLoaded(serverOnly, isMcpOrZod, 'the HTTP server and `warrant serve`');
    const run = packagesLoadedByImport([repo('dist/esm/cli/commands/run.js')]);
    assertNotLoaded(run, isMcpOrZod, '`warrant run`');
  });

  test('the `warrant` executable loads a command only when it runs: no HTTP stack for `jobs`, `run` or `approvals`', () => {
    for (const args of [['--help'], ['jobs', '--help'], ['run', '--help'], ['approvals', '--help']])
      assertNotLoaded(packagesLoadedByCommand(args), isStoreHttpOrJwt, `warrant ${args.join(' ')}`);
    assert.ok(
      packagesLoadedByCommand(['serve', '--help']).has('fastify'),
      'the recorder sees fastify',
    );
  });

  test('loads no DBOS Transact: the root, the SQLite store and the programs load it only for a PostgreSQL queue', () => {
    // docs/api.md, "Workers": startWorker() and submitPlan with queue: { engine: 'dbos' } load it.
    const isDbos = (name: string) => name.startsWith('@dbos-inc/');
    assertNotLoaded(loaded.esm as Set<string>, isDbos, 'ESM root');
    assertNotLoaded(loaded.cjs as Set<string>, isDbos, 'CommonJS root');
    const programs = packagesLoadedByImport([
      repo('dist/esm/stores/sqlite/sqlite-store.js'),
      repo('dist/esm/cli/commands/serve.js'),
      repo('dist/esm/cli/commands/worker.js'),
      repo('dist/esm/cli/commands/run.js'),
    ]);
    assertNotLoaded(programs, isDbos, 'the SQLite store, serve, worker and run');
  });

  test('loads no safe-regex2: only plan bounds with a pattern do (docs/api.md, "Bounds")', () => {
    const isSafeRegex = (name: string) => name === 'safe-regex2' || name === 'ret';
    assertNotLoaded(loaded.esm as Set<string>, isSafeRegex, 'ESM root');
    assertNotLoaded(loaded.cjs as Set<string>, isSafeRegex, 'CommonJS root');
  });

  test('loads no MCP SDK and no zod, ESM and CommonJS', () => {
    assertNotLoaded(loaded.esm as Set<string>, isMcpOrZod, 'ESM root');
    assertNotLoaded(loaded.cjs as Set<string>, isMcpOrZod, 'CommonJS root');
  });

  test('loads no Cedar engine; cedarAuthorizer() loads it (docs/api.md, "Policy as code: Cedar")', () => {
    const isCedar = (name: string) => name.startsWith('@cedar-policy/');
    assertNotLoaded(loaded.esm as Set<string>, isCedar, 'ESM root');
    assertNotLoaded(loaded.cjs as Set<string>, isCedar, 'CommonJS root');
    for (const [entry, load] of [
      [CJS_ENTRY, 'const root = require(ENTRY);'],
      [ESM_ENTRY, 'const root = await import(require("node:url").pathToFileURL(ENTRY).href);'],
    ] as const) {
      const stdout = execFileSync(
        process.execPath,
        [
          '-e',
          `(async () => { const ENTRY = ${JSON.stringify(entry)}; ${load}
           const before = Object.keys(require.cache).some((path) => path.includes('@cedar-policy'));
           root.cedarAuthorizer({ policies: 'permit(principal, action, resource);' });
           const after = Object.keys(require.cache).some((path) => path.includes('@cedar-policy'));
           console.log(JSON.stringify([before, after])); })()`,
        ],
        { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' }, timeout: 60_000 },
      );
      assert.deepEqual(JSON.parse(stdout.trim()), [false, true], entry);
    }
  });

  test('loads no package at all on import; @opentelemetry/api loads with the first job', () => {
    assert.deepEqual([...packagesLoadedByImport([ESM_ENTRY])], [], 'ESM root import');
    const cached = execFileSync(
      process.execPath,
      [
        '-e',
        `require(${JSON.stringify(CJS_ENTRY)}); console.log(JSON.stringify(Object.keys(require.cache)))`,
      ],
      { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' }, timeout: 60_000 },
    );
    const packages = (JSON.parse(cached.trim()) as string[]).flatMap(
      (path) => packageOf(path) ?? [],
    );
    assert.deepEqual(packages, [], 'CommonJS root require');
    for (const build of ['esm', 'cjs'] as const) {
      assert.ok(
        loaded[build]?.has('@opentelemetry/api'),
        `${build}: a job loads the telemetry API`,
      );
    }
  });
});
