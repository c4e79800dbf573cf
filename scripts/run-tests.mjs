// Runs every test/**/*.test.ts file with node:test through tsx. Node 20's runner finds nothing
// when given a directory, so the files are listed explicitly. Extra arguments are passed on
// (for example a single file: `npm test -- test/plan/admission.test.ts`).
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

function findTests(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return findTests(path);
    return entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

const requested = process.argv.slice(2).filter((arg) => !arg.startsWith('-'));
const flags = process.argv.slice(2).filter((arg) => arg.startsWith('-'));
const files = requested.length > 0 ? requested : findTests('test').sort();
if (files.length === 0) {
  console.error('run-tests: no test files found under test/');
  process.exit(1);
}
const result = spawnSync(
  process.execPath,
  [
    '--import',
    'tsx',
    '--import',
    './test/support/unhandled-rejection-guard.ts',
    '--test',
    '--test-reporter=spec',
    ...flags,
    ...files,
  ],
  { stdio: 'inherit' },
);
process.exit(result.status ?? 1);
