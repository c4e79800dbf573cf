// `warrant worker` as a real child process (the built program, dist/esm/cli/main.js, as users
// run it; `npm test`'s pretest builds it), for the worker tests (test/cli/commands/worker.test.ts,
// test/workers/worker-crash.test.ts): started on a PostgreSQL store under an id, resolved once it
// takes jobs (bounded); every child is killed at the end of the file. The built program starts
// with less work than src/cli/main.ts through tsx, and the crash test starts 23 of them.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { after } from 'node:test';
import { Output } from './wait.js';

const ROOT = resolve(import.meta.dirname, '../..');
const MAIN = resolve(ROOT, 'dist/esm/cli/main.js');
const children: ChildProcessWithoutNullStreams[] = [];
after(() => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
});

export interface WorkerChild {
  readonly child: ChildProcessWithoutNullStreams;
  output(): string;
  /** SIGTERM (running jobs finish), SIGKILL after 20 s; resolves once it exited. */
  stop(): Promise<void>;
}

/** `warrant worker --store <url> --worker-id <id> <args>`, with `env` added to its environment. */
export async function startWorkerChild(
  url: string,
  id: string,
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<WorkerChild> {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run \`npm run build\` first`);
  const child = spawn(
    process.execPath,
    [MAIN, 'worker', '--store', url, '--worker-id', id, ...args],
    { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, ...env } },
  );
  children.push(child);
  const output = new Output(child.stdout, child.stderr);
  await output.match('running (version', { timeoutMs: 60_000, what: `worker ${id} to start` });
  return {
    child,
    output: () => output.text,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
