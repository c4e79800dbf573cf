// Package verification (docs/api.md, docs/decisions.md, "House rules"): pack the package, install the tarball into
// a throwaway consumer project, and load it the way users do, from an ESM ("type": "module") and
// a CommonJS ("type": "commonjs") package. Prints one line per check and exits 1 on any failure.
//
// Install choice: `npm install <tarball> --ignore-scripts --prefer-offline`, never `--offline`.
// The tarball's own dependencies (fastify, the MCP SDK, later better-sqlite3 and pg) must come
// from the registry when the cache lacks them, as on a fresh CI runner, so --offline would fail
// there. --ignore-scripts is safe because the checks load only the package root, which opens no
// store and needs no native addon (docs/decisions.md, "House rules": no side effects at import); it also keeps third-party
// install scripts from running on CI. If the root ever needs a compiled addon at import, the
// "loads the root" checks below fail, which is the signal we want.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const EXPECTED_VERSION = '0.2.0';
// The values the installed package exposes must be exactly those of this checkout's own build:
// test/contract/exports.test.ts holds docs/api.md's list and checks dist/ against it on every
// `npm test`, so a second hand-kept list here could only drift from it.
const ROOT_EXPORTS = Object.keys(await import(pathToFileURL(join(ROOT, 'dist/esm/index.js')).href));
const DEEP_IMPORTS = [
  'warrant/dist/esm/index.js',
  'warrant/dist/cjs/index.js',
  'warrant/src/index.ts',
  'warrant/dist/esm/plan/admission.js',
];
const NPM_TIMEOUT_MS = 10 * 60_000;

let failures = 0;
function check(name, ok, detail = '') {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${name}${!ok && detail ? ` (${detail})` : ''}`);
  if (!ok) failures++;
}

function firstLine(text) {
  const [line = ''] = String(text ?? '')
    .trim()
    .split('\n');
  return line;
}

// Under `npm run`, npm_execpath is npm's own CLI script (yarn and pnpm set theirs, hence the name
// test). Running it with this Node avoids PATH lookups and the Windows .cmd shim, which
// child_process refuses to spawn without a shell.
function npm(args, options = {}) {
  const execPath = process.env.npm_execpath;
  const viaNode = execPath !== undefined && /npm-cli\.c?js$/.test(execPath);
  const env = {
    ...process.env,
    npm_config_update_notifier: 'false',
    npm_config_fund: 'false',
    npm_config_audit: 'false',
  };
  const spawnOptions = {
    cwd: ROOT,
    encoding: 'utf8',
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: NPM_TIMEOUT_MS,
    maxBuffer: 64 * 1024 * 1024,
    ...options,
  };
  return viaNode
    ? spawnSync(process.execPath, [execPath, ...args], spawnOptions)
    : spawnSync('npm', args, { ...spawnOptions, shell: process.platform === 'win32' });
}

function abort(message, result) {
  check(message, false, firstLine(result?.stderr) || result?.error?.message || '');
  if (result?.stderr) process.stderr.write(result.stderr);
  return finish();
}

function runNode(cwd, file) {
  return spawnSync(process.execPath, [file], {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 60_000,
  });
}

// Child scripts print one JSON object; a crash becomes a failed check with its first stderr line.
function runChild(cwd, file, label) {
  const result = runNode(cwd, file);
  if (result.status !== 0) {
    check(`${label} runs`, false, firstLine(result.stderr) || `exit ${result.status}`);
    return undefined;
  }
  try {
    return JSON.parse(result.stdout.trim().split('\n').pop());
  } catch {
    check(`${label} reports its results`, false, firstLine(result.stdout));
    return undefined;
  }
}

const ESM_CHECKS = `
import { createRequire } from 'node:module';
const out = { deep: {} };
const root = await import('warrant');
out.keys = Object.keys(root).sort();
out.resolved = import.meta.resolve('warrant');
const manifest = await import('warrant/package.json', { with: { type: 'json' } });
out.version = manifest.default.version;
for (const specifier of ${JSON.stringify(DEEP_IMPORTS)}) {
  try { await import(specifier); out.deep[specifier] = 'loaded'; }
  catch (error) { out.deep[specifier] = error.code ?? String(error); }
}
const cjs = createRequire(import.meta.url)('warrant');
const name = 'verify.shared.' + process.pid;
new cjs.OperatorRuntime().use({
  manifest: { name: 'verify', version: '1', capabilities: [name] },
  capabilities: [cjs.createCapability({ name, version: '1', description: 'd', risk: 'read', execute: () => 42 })],
});
const runtime = new root.OperatorRuntime();
const job = await runtime.executePlan({ version: '1.0', steps: [{ id: 's', capability: name }] });
out.result = job.result;
try { await runtime.executePlan({ version: '1.0', steps: [] }); out.guard = 'not rejected'; }
catch (error) { out.guard = root.isPlanAdmissionError(error) && cjs.isPlanAdmissionError(error); }
await runtime.close();
console.log(JSON.stringify(out));
`;

const CJS_CHECKS = `
const out = { deep: {} };
const root = require('warrant');
out.keys = Object.keys(root).sort();
out.resolved = require.resolve('warrant');
out.version = require('warrant/package.json').version;
for (const specifier of ${JSON.stringify(DEEP_IMPORTS)}) {
  try { require(specifier); out.deep[specifier] = 'loaded'; }
  catch (error) { out.deep[specifier] = error.code ?? String(error); }
}
const name = 'verify.cjs.' + process.pid;
const runtime = new root.OperatorRuntime();
runtime.use({
  manifest: { name: 'verify', version: '1', capabilities: [name] },
  capabilities: [root.createCapability({ name, version: '1', description: 'd', risk: 'read', execute: () => 42 })],
});
runtime.executePlan({ version: '1.0', steps: [{ id: 's', capability: name }] }).then(async (job) => {
  out.result = job.result;
  await runtime.close();
  console.log(JSON.stringify(out));
});
`;

const work = mkdtempSync(join(tmpdir(), 'warrant-verify-'));
function cleanUp() {
  rmSync(work, { recursive: true, force: true });
}
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    cleanUp();
    process.exit(130);
  });
}

function finish() {
  cleanUp();
  if (failures > 0) {
    console.log(`verify:package: ${failures} check(s) failed`);
    process.exit(1);
  }
  console.log('verify:package: all checks passed');
  process.exit(0);
}

// 1. Build only when dist is missing (CI runs `npm run build` or `npm test` before this).
if (!existsSync(join(ROOT, 'dist/esm/index.js')) || !existsSync(join(ROOT, 'dist/cjs/index.js'))) {
  const build = npm(['run', 'build'], { stdio: ['ignore', 'inherit', 'inherit'] });
  if (build.status !== 0) abort('npm run build succeeds', build);
}

// 2. Pack. --ignore-scripts keeps lifecycle output out of the JSON on stdout.
const pack = npm(['pack', '--json', '--ignore-scripts', '--pack-destination', work]);
if (pack.status !== 0) abort('npm pack succeeds', pack);
let packed;
try {
  packed = JSON.parse(pack.stdout.slice(pack.stdout.indexOf('[')))[0];
} catch {
  abort('npm pack --json prints a manifest', pack);
}
check(
  `packed package is warrant@${EXPECTED_VERSION}`,
  packed.name === 'warrant' && packed.version === EXPECTED_VERSION,
  `${packed.name}@${packed.version}`,
);
const files = packed.files.map((file) => file.path).sort();
// The audit console's static files, copied next to the module that serves them, which the build
// puts in a chunk (scripts/build.mjs).
const CONSOLE_FILES = ['index.html', 'app.js', 'app.css'].map((file) => `dist/esm/chunks/${file}`);
const isAllowed = (path) =>
  [
    'README.md',
    'SECURITY.md',
    'LICENSE',
    'package.json',
    'dist/cjs/package.json',
    ...CONSOLE_FILES,
  ].includes(path) ||
  /^dist\/(esm|cjs)\/.+\.(c?js|d\.c?ts)$/.test(path) ||
  // The guide, which the program's --help points at (docs/guide/README.md).
  /^docs\/guide\/[\w-]+\.md$/.test(path);
const strays = files.filter((path) => !isAllowed(path));
check(
  'tarball holds only dist/ build output, the guide, README.md, SECURITY.md, LICENSE and package.json',
  strays.length === 0,
  `${strays.length} other file(s): ${strays.slice(0, 5).join(', ')}`,
);
for (const required of [
  'README.md',
  'docs/guide/README.md',
  'SECURITY.md',
  'LICENSE',
  'package.json',
  'dist/cjs/package.json',
  ...CONSOLE_FILES,
]) {
  check(`tarball contains ${required}`, files.includes(required));
}
const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
// Every file package.json points at (conditions nest, so walk the values).
const targetsOf = (value) =>
  typeof value === 'string' ? [value] : Object.values(value ?? {}).flatMap(targetsOf);
const targets = new Set(
  [manifest.main, manifest.module, manifest.types, manifest.bin, manifest.exports]
    .flatMap(targetsOf)
    .map((target) => target.replace(/^\.\//, '')),
);
const missingTargets = [...targets].filter((target) => !files.includes(target));
check(
  'every main/module/types/bin/exports target of package.json is in the tarball',
  missingTargets.length === 0,
  missingTargets.join(', '),
);

// 3. A throwaway consumer: one install, two packages below it with opposite "type" fields.
const consumer = join(work, 'consumer');
mkdirSync(consumer);
writeFileSync(
  join(consumer, 'package.json'),
  JSON.stringify({ name: 'warrant-consumer', version: '1.0.0', private: true }, null, 2),
);
const install = npm(
  [
    'install',
    join(work, packed.filename),
    '--prefix',
    consumer,
    '--ignore-scripts',
    '--prefer-offline',
    '--no-audit',
    '--no-fund',
    '--loglevel=error',
  ],
  { cwd: consumer },
);
if (install.status !== 0)
  abort('npm install of the tarball in a throwaway project succeeds', install);
check('npm install of the tarball in a throwaway project succeeds', true);

const installed = JSON.parse(
  readFileSync(join(consumer, 'node_modules/warrant/package.json'), 'utf8'),
);
check(
  `installed version is exactly ${EXPECTED_VERSION}`,
  installed.version === EXPECTED_VERSION,
  installed.version,
);

for (const [kind, source] of [
  ['module', ESM_CHECKS],
  ['commonjs', CJS_CHECKS],
]) {
  const dir = join(consumer, kind);
  mkdirSync(dir);
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: kind, private: true }));
  writeFileSync(join(dir, 'check.js'), source);
}

const expectedKeys = [...ROOT_EXPORTS].sort();
const esm = runChild(join(consumer, 'module'), 'check.js', 'ESM consumer ("type": "module")');
if (esm !== undefined) {
  check(
    `ESM import('warrant') exposes exactly ${expectedKeys.join(', ')}`,
    JSON.stringify(esm.keys) === JSON.stringify(expectedKeys),
    esm.keys.join(', '),
  );
  check(
    "ESM import('warrant') resolves to dist/esm/index.js",
    /\/node_modules\/warrant\/dist\/esm\/index\.js$/.test(esm.resolved),
    esm.resolved,
  );
  check(
    `ESM import('warrant/package.json') has version ${EXPECTED_VERSION}`,
    esm.version === EXPECTED_VERSION,
    esm.version,
  );
  for (const specifier of DEEP_IMPORTS) {
    check(
      `ESM import('${specifier}') is refused with ERR_PACKAGE_PATH_NOT_EXPORTED`,
      esm.deep[specifier] === 'ERR_PACKAGE_PATH_NOT_EXPORTED',
      esm.deep[specifier],
    );
  }
  check(
    'ESM and CJS builds share one inventory and execute a plan',
    esm.result === 42,
    String(esm.result),
  );
  check('both builds recognise a PlanAdmissionError', esm.guard === true, String(esm.guard));
}
const cjs = runChild(join(consumer, 'commonjs'), 'check.js', 'CJS consumer ("type": "commonjs")');
if (cjs !== undefined) {
  check(
    `CJS require('warrant') exposes exactly ${expectedKeys.join(', ')}`,
    JSON.stringify(cjs.keys) === JSON.stringify(expectedKeys),
    cjs.keys.join(', '),
  );
  check(
    "CJS require('warrant') resolves to dist/cjs/index.js",
    /[\\/]node_modules[\\/]warrant[\\/]dist[\\/]cjs[\\/]index\.js$/.test(cjs.resolved),
    cjs.resolved,
  );
  check(
    `CJS require('warrant/package.json') has version ${EXPECTED_VERSION}`,
    cjs.version === EXPECTED_VERSION,
    cjs.version,
  );
  for (const specifier of DEEP_IMPORTS) {
    check(
      `CJS require('${specifier}') is refused with ERR_PACKAGE_PATH_NOT_EXPORTED`,
      cjs.deep[specifier] === 'ERR_PACKAGE_PATH_NOT_EXPORTED',
      cjs.deep[specifier],
    );
  }
  check('CJS build executes a plan', cjs.result === 42, String(cjs.result));
}

finish();
