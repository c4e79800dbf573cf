// The main job of the quick start: builds if needed, then runs examples/plans/hello.json with the
// `warrant` program on the embedded SQLite store (./.warrant/jobs.db). Its third step is a write
// that the default policy denies, so the job ends "failed" on purpose (the CLI exits 1); that is
// the expected outcome here and this script exits 0. Anything else (exit 2: refused, bad usage;
// a crash) is passed on.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

if (!existsSync('dist/esm/cli/main.js')) {
  const build = spawnSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit' });
  if (build.status !== 0) process.exit(build.status ?? 1);
}
const run = spawnSync(
  process.execPath,
  [
    'dist/esm/cli/main.js',
    'run',
    'examples/plans/hello.json',
    '--fs-root',
    'examples/data',
    ...process.argv.slice(2),
  ],
  { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' },
);
process.stdout.write(run.stdout ?? '');
if (run.status === 0 || run.status === 1) {
  const id = (run.stdout ?? '').trim().split('\n').pop();
  console.log(`\nThe write step was denied by the default policy, as intended: reads are allowed,`);
  console.log(`writes and destructive work need an authorizer that approves them.`);
  console.log(`Audit trail of this job:  npm run warrant -- jobs show ${id}`);
  process.exit(0);
}
process.exit(run.status ?? 1);
