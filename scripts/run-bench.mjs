// Runs every benchmark under bench/ (each .ts file outside bench/support and bench/fixtures,
// e.g. bench/stores.ts, bench/runtime/execute.bench.ts) in its own process (one workload per
// process, as better-sqlite3's benchmark does) and prints their markdown tables. Never part of
// `npm test`. Arguments name files to run instead of all of them.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

function find(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      return entry.name === 'support' || entry.name === 'fixtures' ? [] : find(path);
    }
    return entry.name.endsWith('.ts') && !entry.name.startsWith('.') ? [path] : [];
  });
}

const only = process.argv.slice(2);
const files = (only.length > 0 ? only : find('bench')).sort();
let failed = 0;
for (const file of files) {
  console.log(`\n<!-- ${file} -->`);
  const result = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', file], {
    stdio: 'inherit',
  });
  if (result.status !== 0) failed++;
}
process.exit(failed === 0 ? 0 : 1);
