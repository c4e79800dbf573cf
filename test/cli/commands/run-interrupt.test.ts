// Ctrl-C on `warrant run` (docs/guide/cli.md, "Exit codes"): a real child process gets SIGINT while
// a step runs; the step's signal aborts, the job is recorded cancelled, and the command exits 130.
// A second SIGINT exits at once, 130.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import { OperatorRuntime } from '../../../src/index.js';
import { Output } from '../../support/wait.js';

const bin = resolve('dist/esm/cli/main.js');
const module = resolve('test/cli/fixtures/wait-module.mjs');
const directory = mkdtempSync(join(tmpdir(), 'warrant-run-interrupt-'));
after(() => rmSync(directory, { recursive: true, force: true }));

/** Runs `warrant run` on a plan of two `capability` steps; sends SIGINT once or twice once the step runs. */
async function interrupted(name: string, signals: 1 | 2, capability = 'fixture.wait') {
  assert.ok(existsSync(bin), 'dist/esm/cli/main.js is missing: run `npm run build` first');
  const plan = join(directory, `${name}.json`);
  const store = `sqlite:${join(directory, `${name}.db`)}`;
  writeFileSync(
    plan,
    JSON.stringify({
      version: '1.0',
      goal: 'wait for Ctrl-C',
      steps: [
        { id: 'wait', capability, input: {} },
        { id: 'after', capability, input: {} },
      ],
    }),
  );
  const child = spawn(process.execPath, [bin, 'run', plan, '--module', module, '--store', store], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stderr = new Output(child.stderr);
  const stdout = new Output(child.stdout);
  const exited = new Promise<number | null>((done) => child.once('exit', done));
  // Bounds every wait below: a child still running then is killed (and exits with no code).
  const killer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  try {
    // Once the step is entered (a child that exited before is answered by its code below).
    await stderr.match('fixture.wait entered', { timeoutMs: 60_000 }).catch(() => undefined);
    child.kill('SIGINT');
    if (signals === 2) {
      // Signals sent together may arrive as one: the second once the first was handled.
      await stderr.match('cancelling the job', { timeoutMs: 60_000 }).catch(() => undefined);
      child.kill('SIGINT');
    }
    const code = await exited;
    return { code, stderr: stderr.text, stdout: stdout.text, store };
  } finally {
    clearTimeout(killer);
  }
}

describe('warrant run: Ctrl-C', () => {
  it('cancels the job and exits 130', async () => {
    const { code, stderr, stdout, store } = await interrupted('once', 1);
    assert.equal(code, 130, stderr);
    assert.match(stderr, /fixture\.wait aborted: Job cancelled: interrupted \(Ctrl-C\)/);
    const jobId = stdout.trim();
    const runtime = new OperatorRuntime({ store });
    try {
      const job = await runtime.getJob(jobId);
      assert.equal(job?.status, 'cancelled');
      assert.deepEqual(
        job?.steps.map((step) => step.status),
        ['cancelled', 'skipped'],
      );
      assert.equal(job?.events.at(-1)?.type, 'job.cancelled');
    } finally {
      await runtime.close();
    }
  });

  it('exits at once, 130, on a second Ctrl-C, even while a step ignores its signal', async () => {
    const { code, stderr } = await interrupted('twice', 2, 'fixture.stubborn');
    assert.equal(code, 130, stderr);
    // The step holds the first Ctrl-C for 120 s, writing a line when it ends: it never did.
    assert.doesNotMatch(stderr, /fixture\.stubborn done/);
  });
});
