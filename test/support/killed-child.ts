// A runtime in a child process (test/runtime/fixtures/recovery-child.ts) SIGKILLed once nothing
// moves any more, leaving its jobs to recovery (test/runtime/recovery*.test.ts).
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { after } from 'node:test';
import pg from 'pg';
import type { ExecutionPlan } from '../../src/index.js';
import { waitFor } from './wait.js';
import { TS_LOADER } from './ts-loader.js';

const ROOT = resolve(import.meta.dirname, '../..');
const CHILD = resolve(ROOT, 'test/runtime/fixtures/recovery-child.ts');
const children: ChildProcessWithoutNullStreams[] = [];
after(() => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
});

export interface Killed {
  readonly jobIds: string[];
}

/**
 * Runs the child on `store` with these plans; once it is ready (nothing moves), SIGKILLs it and
 * resolves the ids of its jobs. Every wait is bounded (30 s).
 */
export async function runAndKill(
  store: string,
  plans: readonly ExecutionPlan[],
  mode?: string,
  env: Record<string, string> = {},
): Promise<Killed> {
  const args = [...TS_LOADER, CHILD, store, JSON.stringify(plans.map((plan) => ({ plan })))];
  if (mode !== undefined) args.push(mode);
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, WARRANT_TEST_HANG: '1', ...env },
  });
  children.push(child);
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const jobIds: string[] = [];
  await new Promise<void>((ready, failed) => {
    const timer = setTimeout(() => failed(new Error(`child not ready in 30 s: ${stderr}`)), 30_000);
    createInterface({ input: child.stdout }).on('line', (line) => {
      const parsed = JSON.parse(line) as { jobId?: string; ready?: boolean };
      if (parsed.jobId !== undefined) jobIds.push(parsed.jobId);
      if (parsed.ready === true) {
        clearTimeout(timer);
        ready();
      }
    });
    void exited.then(() => {
      clearTimeout(timer);
      failed(new Error(`child exited: ${stderr}`));
    });
  });
  child.kill('SIGKILL');
  await exited;
  if (!store.startsWith('sqlite:')) await ownerSessionEnded(store);
  return { jobIds };
}

/**
 * Waits (at most 10 s) until PostgreSQL has ended the killed child's sessions: its owner lock
 * (an advisory lock held by its session) is released only once the server notices the closed
 * connection, and a runtime recovering before that sees a live owner and, rightly, takes nothing.
 */
export async function ownerSessionEnded(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await waitFor(
      async () => {
        const { rows } = await client.query<{ held: number }>(
          `SELECT count(*)::int AS held FROM pg_locks
           WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
        );
        return rows[0]?.held === 0;
      },
      { timeoutMs: 10_000, what: 'the killed owner to lose its lock' },
    );
  } finally {
    await client.end();
  }
}
