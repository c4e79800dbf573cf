// Package verification (spec §9.3): pack the package, install the tarball into a throwaway
// consumer project, and check it the way users load it. One line per check; exit 1 on any
// failure. Installs with --ignore-scripts: the checks load only the package root (never the
// SQLite store), so native dependencies need not be compiled again for the throwaway project.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const EXPECTED_VERSION = '0.2.0';
const ROOT_EXPORTS = [
  'LifecycleLoggingMiddleware',
  'OperatorRuntime',
  'TimeoutMiddleware',
  'createCapability',
  'isPlanAdmissionError',
  'operatorRuntime',
];
const DEEP_IMPORTS = [
  'warrant/dist/esm/index.js',
  'warrant/dist/cjs/index.js',
  'warrant/src/index.ts',
  'warrant/dist/esm/plan/admission.js',
];
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
let failures = 0;

function check(name, ok, detail = '') {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${name}${detail ? ` (${detail})` : ''}`);
  if (!ok) failures++;
}

function node(cwd, args) {
  return spawnSync(process.execPath, args, { cwd, encoding: 'utf8' });
}

if (!existsSync('dist/esm/index.js') || !existsSync('dist/cjs/index.js')) {
  execFileSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit' });
}
const work = mkdtempSync(join(tmpdir(), 'warrant-verify-'));
try {
  const [packed] = JSON.parse(
    execFileSync(npm, ['pack', '--json', '--pack-destination', work], { encoding: 'utf8' }),
  );
  const tarball = join(work, packed.filename);
  const files = packed.files.map((file) => file.path).sort();
  const allowed = (path) =>
    ['README.md', 'LICENSE', 'package.json'].includes(path) ||
    /^dist\/(esm|cjs)\/.+\.(js|d\.ts)$/.test(path) ||
    path === 'dist/cjs/package.json';
  const strays = files.filter((path) => !allowed(path));
  check(
    'tarball holds only build output, README.md, LICENSE and package.json',
    strays.length === 0,
    strays.slice(0, 5).join(', '),
  );
  for (const required of [
    'README.md',
    'LICENSE',
    'package.json',
    'dist/esm/index.js',
    'dist/esm/index.d.ts',
    'dist/cjs/index.js',
    'dist/cjs/index.d.ts',
    'dist/cjs/package.json',
  ]) {
    check(`tarball contains ${required}`, files.includes(required));
  }
  check(
    'tarball has no source, tests or database files',
    !files.some((path) => /^(src|test|bench|tools)\/|\.db$/.test(path)),
  );

  const consumer = join(work, 'consumer');
  execFileSync('mkdir', ['-p', consumer]);
  writeFileSync(
    join(consumer, 'package.json'),
    JSON.stringify({ name: 'warrant-consumer', version: '1.0.0', private: true }),
  );
  execFileSync(
    npm,
    ['install', tarball, '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'],
    { cwd: consumer, stdio: 'inherit' },
  );

  const installed = JSON.parse(
    readFileSync(join(consumer, 'node_modules/warrant/package.json'), 'utf8'),
  );
  check(
    `installed version is ${EXPECTED_VERSION}`,
    installed.version === EXPECTED_VERSION,
    installed.version,
  );
  const versionViaExports = node(consumer, [
    '-e',
    "console.log(require('warrant/package.json').version)",
  ]);
  check(
    'warrant/package.json is exported',
    versionViaExports.stdout.trim() === EXPECTED_VERSION,
    versionViaExports.stderr.trim().split('\n')[0],
  );

  const esm = node(consumer, [
    '--input-type=module',
    '-e',
    "const m = await import('warrant'); console.log(JSON.stringify(Object.keys(m).sort()))",
  ]);
  const esmKeys = esm.status === 0 ? JSON.parse(esm.stdout) : [];
  check('ESM import of the root works', esm.status === 0, esm.stderr.trim().split('\n')[0]);
  const cjs = node(consumer, [
    '-e',
    "console.log(JSON.stringify(Object.keys(require('warrant')).sort()))",
  ]);
  const cjsKeys = cjs.status === 0 ? JSON.parse(cjs.stdout) : [];
  check('CJS require of the root works', cjs.status === 0, cjs.stderr.trim().split('\n')[0]);
  for (const name of ROOT_EXPORTS) {
    check(`root exports ${name} (ESM and CJS)`, esmKeys.includes(name) && cjsKeys.includes(name));
  }
  check(
    'ESM and CJS roots export the same names',
    JSON.stringify(esmKeys) === JSON.stringify(cjsKeys),
    `${esmKeys.length} vs ${cjsKeys.length}`,
  );
  const runs = node(consumer, [
    '--input-type=module',
    '-e',
    "import { OperatorRuntime, createCapability } from 'warrant'; const r = new OperatorRuntime(); r.use({ manifest: { name: 'm', version: '1', capabilities: ['c'] }, capabilities: [createCapability({ name: 'c', version: '1', description: 'd', risk: 'read', execute: () => 42 })] }); const job = await r.executePlan({ version: '1.0', steps: [{ id: 's', capability: 'c' }] }); console.log(job.result);",
  ]);
  check(
    'the installed package executes a plan',
    runs.stdout.trim() === '42',
    runs.stderr.trim().split('\n')[0],
  );

  for (const specifier of DEEP_IMPORTS) {
    const viaImport = node(consumer, ['--input-type=module', '-e', `await import('${specifier}')`]);
    check(
      `import('${specifier}') is refused by the exports map`,
      viaImport.status !== 0 && viaImport.stderr.includes('ERR_PACKAGE_PATH_NOT_EXPORTED'),
    );
    const viaRequire = node(consumer, ['-e', `require('${specifier}')`]);
    check(
      `require('${specifier}') is refused by the exports map`,
      viaRequire.status !== 0 && viaRequire.stderr.includes('ERR_PACKAGE_PATH_NOT_EXPORTED'),
    );
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
if (failures > 0) {
  console.error(`verify:package: ${failures} check(s) failed`);
  process.exit(1);
}
console.log(`verify:package: all checks passed for ${resolve('.')}`);
