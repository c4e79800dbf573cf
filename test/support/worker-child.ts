// `warrant worker` as a real child process (the CLI through tsx), for the worker tests
// (test/cli/commands/worker.test.ts, test/workers/worker-crash.test.ts): started on a PostgreSQL
// store under an id, resolved once it takes jobs (bounded); every child is killed at the end of
// the file.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { resolve } from 'node:path';
import { after } from 'node:test';

const ROOT = resolve(import.meta.dirname, '../..');
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
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      resolve(ROOT, 'src/cli/main.ts'),
      'worker',
      '--store',
      url,
      '--worker-id',
      id,
      ...args,
    ],
    { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, ...env } },
  );
  children.push(child);
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const deadline = Date.now() + 60_000;
  while (!output.includes('running (version')) {
    if (child.exitCode !== null || Date.now() > deadline)
      throw new Error(`worker ${id} did not start:\n${output}`);
    await new Promise((r) => setTimeout(r, 25));
  }
  return {
    child,
    output: () => output,
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
