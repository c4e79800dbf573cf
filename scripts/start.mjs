// The main job of the quick start: builds if needed, then runs examples/plans/hello.json with the
// `warrant` program on the embedded SQLite store (./.warrant/jobs.db), with approvals on. Its
// third step is a write, which the default policy with approvals stops for a human decision:
// the CLI exits 3 with the job awaiting approval, the expected outcome here, and this script
// prints the command that approves it and exits 0. Anything else (exit 2: refused, bad usage;
// a crash) is passed on. It ends with the command that serves the audit console on the same store
// and modules, and the console's address for this job (docs/guide/http.md, "Audit console"): the
// server prints the console's address with its operator token; opened first, it lets that tab
// read the job and approve it.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

if (!existsSync('dist/esm/cli/main.js')) {
  const build = spawnSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit' });
  if (build.status !== 0) process.exit(build.status ?? 1);
}
const options = ['--fs-root', 'examples/data'];

/** The audit console on this job: `warrant serve` with the run's store and modules, then its URL. */
function printConsole(id, also) {
  console.log(`\nSee it in the audit console${also === undefined ? '' : ` (${also})`}:\n`);
  console.log(`  npm run warrant -- serve ${options.join(' ')} --approvals`);
  console.log(`\nIt prints the console's address with a token for this run`);
  console.log(`(http://127.0.0.1:3333/#token=...): open it, then this job in the same tab:\n`);
  console.log(`  http://127.0.0.1:3333/#/jobs/${id}`);
}
const run = spawnSync(
  process.execPath,
  [
    'dist/esm/cli/main.js',
    'run',
    'examples/plans/hello.json',
    ...options,
    '--approvals',
    ...process.argv.slice(2),
  ],
  { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' },
);
// The program's own approve command names `warrant`; here it is `npm run warrant --`.
const stderr = (run.stderr ?? '').split('\n');
const at = stderr.findIndex((line) => line.endsWith('awaits approval; to approve it:'));
process.stderr.write(`${stderr.slice(0, at < 0 ? undefined : at).join('\n')}\n`);
process.stdout.write(run.stdout ?? '');
const id = (run.stdout ?? '').trim().split('\n').pop();
if (run.status === 3 && at >= 0) {
  const command = (stderr[at + 1] ?? '')
    .trim()
    .replace(/^warrant /, 'npm run warrant -- ')
    .replace('<approver>', 'reviewer');
  console.log(`\nThe write step awaits approval, as intended: reads are allowed, writes and`);
  console.log(`destructive work wait for a person other than the one who ran the plan.`);
  console.log(`Approve exactly this write (as the caller "reviewer"):\n\n  ${command}\n`);
  console.log(`Audit trail of this job:  npm run warrant -- jobs show ${id}`);
  printConsole(id, 'or approve it there');
  process.exit(0);
}
if (run.status === 0 || run.status === 1) {
  console.log(`\nAudit trail of this job:  npm run warrant -- jobs show ${id}`);
  printConsole(id);
  process.exit(0);
}
process.exit(run.status ?? 1);
