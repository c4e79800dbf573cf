// `warrant jobs` and the main job of the README's quick start, through the real executable on the SQLite store.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { OperatorRuntime, createCapability } from '../../../src/index.js';
import { uniqueName } from '../../support/runtime-fixtures.js';
import { copyExamples } from '../../support/examples-copy.js';

const bin = resolve('dist/esm/cli/main.js');

function warrant(args: string[], cwd: string, env: NodeJS.ProcessEnv = {}) {
  const child = spawnSync(process.execPath, [bin, ...args], {
    cwd,
    env: { ...process.env, WARRANT_STORE: '', ...env },
    encoding: 'utf8',
    timeout: 60_000,
    maxBuffer: 64 * 1024 * 1024,
  });
  return { code: child.status, stdout: child.stdout, stderr: child.stderr };
}

describe('the main job and warrant jobs', () => {
  it('runs examples/plans/hello.json on the default SQLite store and shows its audit trail', () => {
    const cwd = mkdtempSync(join(tmpdir(), 'warrant-main-job-'));
    copyExamples(cwd);
    const run = warrant(['run', 'examples/plans/hello.json', '--fs-root', 'examples/data'], cwd);
    assert.equal(run.code, 1, 'the write step is denied on purpose');
    assert.ok(existsSync(join(cwd, '.warrant/jobs.db')), 'the default store is ./.warrant/jobs.db');
    assert.match(run.stderr, /read-note\s+fs\.read\s+allow\s+completed/);
    assert.match(run.stderr, /echo\s+system\.echo\s+allow\s+completed/);
    assert.match(run.stderr, /write-copy\s+fs\.write\s+deny\s+failed/);
    // The denial's reason does not say what to do: a hint names the two ways on.
    assert.match(
      run.stderr,
      /\nhint: the default policy denies writes and destructive work \(step write-copy\): add --approvals .*, or --policy <file\.cedar> /,
    );
    assert.equal(existsSync(join(cwd, 'examples/data/copy.txt')), false);
    const id = run.stdout.trim();

    const list = warrant(['jobs'], cwd);
    assert.equal(list.code, 0);
    assert.match(list.stdout, new RegExp(`${id}\\s+failed\\s+3`));

    const show = warrant(['jobs', 'show', id], cwd);
    assert.equal(show.code, 0);
    assert.match(show.stdout, /Write capability requires explicit approval\./);
    assert.match(show.stdout, /capability\.denied/);

    const json = JSON.parse(warrant(['jobs', 'show', id, '--json'], cwd).stdout) as {
      steps: { status: string }[];
    };
    assert.deepEqual(
      json.steps.map((step) => step.status),
      ['completed', 'completed', 'failed'],
    );

    const filtered = warrant(['jobs', 'list', '--status', 'completed', '--json'], cwd);
    assert.deepEqual(JSON.parse(filtered.stdout), []);
  });

  it('exits 1 for an unknown job and 2 for bad usage', () => {
    const cwd = mkdtempSync(join(tmpdir(), 'warrant-jobs-'));
    const store = `sqlite:${join(cwd, 'jobs.db')}`;
    const missing = warrant(['jobs', 'show', 'nope', '--store', store], cwd);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /no job "nope"/);
    assert.equal(warrant(['jobs', 'show', '--store', store], cwd).code, 2);
    assert.equal(warrant(['jobs', 'frobnicate', '--store', store], cwd).code, 2);
    assert.equal(warrant(['jobs', '--limit', 'x', '--store', store], cwd).code, 2);
  });

  it('lists 50 jobs by default and at most 1,000; a larger or malformed --limit is exit 2, one line', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'warrant-jobs-limit-'));
    const store = `sqlite:${join(cwd, 'jobs.db')}`;
    const name = uniqueName('limit.echo');
    const runtime = new OperatorRuntime({ store }).use({
      manifest: { name: uniqueName('limit-module'), version: '1', capabilities: [name] },
      capabilities: [
        createCapability({
          name,
          version: '1',
          description: 'd',
          risk: 'read',
          execute: () => 'ok',
        }),
      ],
    });
    const plan = { version: '1.0' as const, steps: [{ id: 'only', capability: name }] };
    await Promise.all(Array.from({ length: 1001 }, () => runtime.executePlan(plan)));
    await runtime.close();

    const count = (args: string[]) => {
      const list = warrant(['jobs', '--json', '--store', store, ...args], cwd);
      assert.equal(list.code, 0, list.stderr);
      return (JSON.parse(list.stdout) as unknown[]).length;
    };
    assert.equal(count([]), 50);
    assert.equal(count(['--limit', '1000']), 1000);
    assert.equal(count(['--limit', '0']), 0);
    assert.equal(count(['--limit', '7']), 7);
    for (const limit of ['1001', '99999999999', '-1', '1.5', 'abc', '', '1e3']) {
      const refused = warrant(['jobs', `--limit=${limit}`, '--store', store], cwd);
      assert.equal(refused.code, 2, `--limit=${limit}: ${refused.stderr}`);
      assert.equal(refused.stderr.trim().split('\n').length, 1, refused.stderr);
      assert.match(
        refused.stderr,
        /^warrant jobs: --limit must be an integer from 0 to 1000, got /,
      );
    }
  });

  it('reads the store from WARRANT_STORE when --store is not given (--store wins), and shows inputs and results', () => {
    const cwd = mkdtempSync(join(tmpdir(), 'warrant-jobs-env-'));
    copyExamples(cwd);
    const store = { WARRANT_STORE: `sqlite:${join(cwd, 'from-env.db')}` };
    const run = warrant(
      ['run', 'examples/plans/hello.json', '--fs-root', 'examples/data'],
      cwd,
      store,
    );
    assert.equal(run.code, 1, run.stderr);
    assert.ok(existsSync(join(cwd, 'from-env.db')), 'run opened the store of WARRANT_STORE');
    assert.equal(existsSync(join(cwd, '.warrant/jobs.db')), false);
    const id = run.stdout.trim();
    const list = warrant(['jobs', '--json'], cwd, store);
    assert.deepEqual(
      (JSON.parse(list.stdout) as { id: string }[]).map((job) => job.id),
      [id],
    );
    const flag = warrant(['jobs', '--json', '--store', 'memory'], cwd, store);
    assert.deepEqual(JSON.parse(flag.stdout), [], '--store wins over WARRANT_STORE');

    const show = warrant(['jobs', 'show', id], cwd, store);
    assert.equal(show.code, 0, show.stderr);
    assert.match(
      show.stdout,
      /\ninputs and results:\n {2}read-note:\n {4}input \{"path":"note\.txt"\}\n {4}result \{"path":"note\.txt","size":\d+,"content":/,
    );
    assert.match(
      show.stdout,
      /\n {2}echo:\n {4}input \{"message":\{"\$ref":"steps\.read-note\.result\.content"\}\}\n {4}resolved input \{"message":"[^"]*"\}\n {4}result \{"message":/,
    );
  });
});
