// Runs every benchmark under bench/ (each .ts file outside bench/support, bench/fixtures and any
// node_modules, such as bench/peers/node_modules; e.g. bench/stores.ts,
// bench/runtime/execute.bench.ts) in its own process (one workload per process, as
// better-sqlite3's benchmark does) and prints their markdown tables. Never part of `npm test`.
// Arguments name files to run instead of all of them.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

function find(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      // bench/peers/node_modules: the peers' own packages (bench/peers/peers.bench.ts).
      return ['support', 'fixtures', 'node_modules'].includes(entry.name) ? [] : find(path);
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
