// `warrant jobs cancel <id>` (docs/guide/cli.md, "Commands"): the real executable cancels a job
// awaiting approval in a SQLite store as the caller of --caller; another caller is refused (exit
// 1).
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import { OperatorRuntime } from '../../../src/index.js';
import { register } from '../../support/runtime-fixtures.js';

const bin = resolve('dist/esm/cli/main.js');
const directory = mkdtempSync(join(tmpdir(), 'warrant-jobs-cancel-'));
after(() => rmSync(directory, { recursive: true, force: true }));

function warrant(args: string[]) {
  assert.ok(existsSync(bin), 'dist/esm/cli/main.js is missing: run `npm run build` first');
  const child = spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', timeout: 30_000 });
  return { code: child.status, stdout: child.stdout, stderr: child.stderr };
}

describe('warrant jobs cancel', () => {
  it('cancels as --caller; refuses another caller; 1 for an unknown job', async () => {
    const store = `sqlite:${join(directory, 'jobs.db')}`;
    const runtime = new OperatorRuntime({
      store,
      approvals: { approver: { canApprove: () => true } },
    });
    let jobId: string;
    try {
      const [write] = register(runtime, { risk: 'write', execute: () => 'written' }) as [string];
      const job = await runtime.executePlan(
        { version: '1.0', steps: [{ id: 'w', capability: write, input: {} }] },
        { caller: { id: 'alice' } },
      );
      assert.equal(job.status, 'awaiting_approval');
      jobId = job.id;
    } finally {
      await runtime.close();
    }
    const refused = warrant([
      'jobs',
      'cancel',
      jobId,
      '--caller',
      '{"id":"mallory"}',
      '--store',
      store,
    ]);
    assert.equal(refused.code, 1, refused.stderr);
    assert.match(refused.stderr, /may not cancel/);
    // The refusal says who may: the submitter, or a caller holding the scope warrant:cancel.
    assert.match(refused.stderr, /warrant:cancel/);
    const done = warrant([
      'jobs',
      'cancel',
      jobId,
      '--reason',
      'no',
      '--caller',
      '{"id":"alice"}',
      '--store',
      store,
    ]);
    assert.equal(done.code, 0, done.stderr);
    assert.equal(done.stdout, `job ${jobId}: cancelled\n`);
    const unknown = warrant([
      'jobs',
      'cancel',
      'job_nope',
      '--caller',
      '{"id":"alice"}',
      '--store',
      store,
    ]);
    assert.equal(unknown.code, 1);
  });

  it('prints what the cancel did: cancelled once a job running in another process settles; a finished job is left as it was', async () => {
    const store = `sqlite:${join(directory, 'running.db')}`;
    const runtime = new OperatorRuntime({ store });
    try {
      let started!: () => void;
      const running = new Promise<void>((resolve) => (started = resolve));
      const [held] = register(runtime, {
        execute: ({ context }) =>
          new Promise((_resolve, reject) => {
            started();
            context.signal.addEventListener('abort', () => reject(context.signal.reason as Error));
          }),
      }) as [string];
      const [quick] = register(runtime, { execute: () => 'done' }) as [string];
      const finished = await runtime.executePlan(
        { version: '1.0', steps: [{ id: 'q', capability: quick, input: {} }] },
        { caller: { id: 'alice' } },
      );
      const job = runtime.executePlan(
        { version: '1.0', steps: [{ id: 'h', capability: held, input: {} }] },
        { caller: { id: 'alice' } },
      );
      await running;
      const [listed] = await runtime.listJobs({ status: 'executing' });
      assert.ok(listed !== undefined);
      // Asynchronous: this process's runtime must poll the store for the cancel meanwhile.
      const child = spawn(
        process.execPath,
        [bin, 'jobs', 'cancel', listed.id, '--caller', '{"id":"alice"}', '--store', store],
        { stdio: ['ignore', 'pipe', 'pipe'], timeout: 30_000 },
      );
      let stdout = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      assert.equal(code, 0);
      assert.equal(stdout, `job ${listed.id}: cancelled\n`);
      assert.equal((await job).status, 'cancelled');

      const again = warrant([
        'jobs',
        'cancel',
        finished.id,
        '--caller',
        '{"id":"alice"}',
        '--store',
        store,
      ]);
      assert.equal(again.code, 0, again.stderr);
      assert.equal(again.stdout, `job ${finished.id}: already completed: nothing to cancel\n`);
    } finally {
      await runtime.close();
    }
  });
});
