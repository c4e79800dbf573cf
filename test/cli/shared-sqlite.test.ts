// Several processes on one SQLite file (docs/guide/stores.md, "Several processes on one SQLite
// file"): processes running jobs at the same time on one file all record them, intact; a process
// whose audit key differs from the file's says so in one line at start.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';

const bin = resolve('dist/esm/cli/main.js');

function withoutKey(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.WARRANT_AUDIT_KEY;
  return env;
}

function warrant(args: string[], env: NodeJS.ProcessEnv = withoutKey()) {
  const child = spawnSync(process.execPath, [bin, ...args], {
    encoding: 'utf8',
    timeout: 60_000,
    env,
  });
  return { code: child.status, stdout: child.stdout, stderr: child.stderr };
}

/** `warrant run` as a child process, settled with its exit code and stderr. */
function runAsync(args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [bin, 'run', ...args], {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: withoutKey(),
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      fail(new Error('warrant run did not end in 60 s'));
    }, 60_000);
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', fail);
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ code, stderr });
    });
  });
}

function planFile(dir: string, steps: number): string {
  const file = join(dir, 'plan.json');
  writeFileSync(
    file,
    JSON.stringify({
      version: '1.0',
      steps: Array.from({ length: steps }, (_, index) => ({
        id: `echo-${index}`,
        capability: 'system.echo',
        input: { message: `m${index}` },
      })),
    }),
  );
  return file;
}

describe('several processes on one SQLite file', () => {
  it('processes running jobs at the same time all record them, intact', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'warrant-shared-'));
    const store = `sqlite:${join(dir, 'jobs.db')}`;
    const plan = planFile(dir, 20);
    // The schema is created once, first, as the first process of a deployment would.
    assert.equal(warrant(['run', plan, '--store', store]).code, 0);
    const runs = await Promise.all(
      Array.from({ length: 4 }, () => runAsync([plan, '--store', store])),
    );
    for (const run of runs) assert.equal(run.code, 0, run.stderr);
    const jobs = JSON.parse(warrant(['jobs', '--json', '--store', store]).stdout) as {
      status: string;
      steps: unknown[];
    }[];
    assert.equal(jobs.length, 5);
    for (const job of jobs) {
      assert.equal(job.status, 'completed');
      assert.equal(job.steps.length, 20);
    }
    const verified = warrant(['jobs', 'verify', '--all', '--store', store]);
    assert.equal(verified.code, 0, verified.stdout);
    assert.match(verified.stdout, /5 jobs verified: 5 intact, 0 not/);
  });

  it('a process with another audit key than the file says so at start', () => {
    const dir = mkdtempSync(join(tmpdir(), 'warrant-shared-key-'));
    const store = `sqlite:${join(dir, 'jobs.db')}`;
    const plan = planFile(dir, 1);
    const keyed = { ...withoutKey(), WARRANT_AUDIT_KEY: 'key-one' };
    const first = warrant(['run', plan, '--store', store], keyed);
    assert.equal(first.code, 0, first.stderr);
    assert.doesNotMatch(first.stderr, /another audit key/);
    const same = warrant(['run', plan, '--store', store], keyed);
    assert.doesNotMatch(same.stderr, /another audit key/);
    for (const env of [withoutKey(), { ...withoutKey(), WARRANT_AUDIT_KEY: 'key-two' }]) {
      const other = warrant(['run', plan, '--store', store], env);
      assert.equal(other.code, 0, other.stderr);
      assert.match(
        other.stderr,
        /^warrant: sqlite:.* was written with another audit key than this process's/m,
      );
    }
  });
});
