// `warrant jobs verify` and the decisions of `warrant jobs show`, through the real executable on
// SQLite (run `npm run build` first).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { Database } from '../../../src/jobs/stores/sqlite-driver.cjs';
import { copyExamples } from '../../support/examples-copy.js';

const bin = resolve('dist/esm/cli/main.js');

function warrant(args: string[], cwd: string, env: NodeJS.ProcessEnv = {}) {
  const child = spawnSync(process.execPath, [bin, ...args], {
    cwd,
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, WARRANT_AUDIT_KEY: '', ...env },
  });
  return { code: child.status, stdout: child.stdout, stderr: child.stderr };
}

const SHA = /sha256:[0-9a-f]{64}/;

describe('warrant jobs verify and the decisions of warrant jobs show', () => {
  it('shows each decision, reason and digest; verifies one job or all, exit 1 naming what is broken', () => {
    const cwd = mkdtempSync(join(tmpdir(), 'warrant-jobs-verify-'));
    const store = `sqlite:${join(cwd, 'jobs.db')}`;
    let plans = 0;
    const plan = (steps: string) => {
      const file = join(cwd, `plan-${++plans}.json`);
      writeFileSync(file, JSON.stringify({ version: '1.0', steps: JSON.parse(steps) as unknown }));
      return warrant(['run', file, '--store', store, '--json'], cwd);
    };
    const ok = plan('[{"id":"say","capability":"system.echo","input":{"message":"hi"}}]');
    assert.equal(ok.code, 0, ok.stderr);
    const done = (JSON.parse(ok.stdout) as { id: string }).id;
    const other = (
      JSON.parse(
        plan('[{"id":"again","capability":"system.echo","input":{"message":"yo"}}]').stdout,
      ) as { id: string }
    ).id;

    const show = warrant(['jobs', 'show', done, '--store', store], cwd);
    assert.equal(show.code, 0);
    assert.match(
      show.stdout,
      /decisions:\n {2}say: allow at \S+, capability version \S+\n {4}input sha256:[0-9a-f]{64}, result sha256:[0-9a-f]{64}/,
    );
    const json = JSON.parse(
      warrant(['jobs', 'show', done, '--store', store, '--json'], cwd).stdout,
    ) as {
      steps: { decision: { outcome: string; inputDigest: string } }[];
      events: { data?: { resultDigest?: string } }[];
    };
    assert.equal(json.steps[0]?.decision.outcome, 'allow');
    assert.match(json.steps[0]?.decision.inputDigest ?? '', SHA);
    assert.match(json.events[3]?.data?.resultDigest ?? '', SHA);

    copyExamples(cwd);
    const hello = warrant(
      ['run', 'examples/plans/hello.json', '--fs-root', 'examples/data', '--store', store],
      cwd,
    );
    const denied = warrant(['jobs', 'show', hello.stdout.trim(), '--store', store], cwd);
    assert.match(
      denied.stdout,
      /\n {2}write-copy: deny \(Write capability requires explicit approval\.\) at \S+, capability version \S+\n {4}input sha256:[0-9a-f]{64}\n/,
    );

    const intact = warrant(['jobs', 'verify', done, '--store', store], cwd);
    assert.equal(intact.code, 0);
    assert.equal(intact.stdout, `job ${done}: intact (5 events)\n`);
    const all = warrant(['jobs', 'verify', '--all', '--store', store], cwd);
    assert.equal(all.code, 0);
    // The store's checkpoints too (docs/api.md, "Store checkpoints"): each run sealed its job.
    assert.match(
      all.stdout,
      /^3 jobs verified: 3 intact, 0 not\n3 checkpoints sealing 18 events\nhead: 3 sha256:[0-9a-f]{64}\n$/,
    );

    const db = new Database(join(cwd, 'jobs.db'));
    db.prepare(
      `UPDATE job_steps SET state = replace(state, '"hi"', '"bye"') WHERE job_seq = (SELECT seq FROM jobs WHERE id = ?)`,
    ).run(done);
    db.close();
    const broken = warrant(['jobs', 'verify', done, '--store', store], cwd);
    assert.equal(broken.code, 1);
    assert.equal(
      broken.stdout,
      `job ${done}: NOT INTACT: the result of step say does not match its digest, event 3, step say\n`,
    );
    const brokenAll = warrant(['jobs', 'verify', '--all', '--store', store, '--json'], cwd);
    assert.equal(brokenAll.code, 1);
    const answer = JSON.parse(brokenAll.stdout) as Record<string, unknown>;
    assert.deepEqual(
      { jobs: answer.jobs, intact: answer.intact, broken: answer.broken },
      {
        jobs: 3,
        intact: 2,
        broken: [
          {
            id: done,
            ok: false,
            reason: 'the result of step say does not match its digest',
            eventIndex: 3,
            stepId: 'say',
          },
        ],
      },
    );
    assert.equal(warrant(['jobs', 'verify', other, '--store', store, '--json'], cwd).code, 0);

    const keyed = warrant(['jobs', 'verify', other, '--store', store], cwd, {
      WARRANT_AUDIT_KEY: 'k',
    });
    assert.equal(keyed.code, 1, 'an unkeyed chain is refused when a key is set');
    assert.match(keyed.stdout, /NOT INTACT: event 0 is not keyed/);

    const missing = warrant(['jobs', 'verify', 'nope', '--store', store], cwd);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /no job "nope"/);
    assert.equal(warrant(['jobs', 'verify', '--store', store], cwd).code, 2);
    assert.equal(warrant(['jobs', 'verify', done, '--all', '--store', store], cwd).code, 2);
  });
});
