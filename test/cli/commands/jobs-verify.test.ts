// `warrant jobs verify` and the decisions of `warrant jobs show`, through the real executable on
// SQLite (run `npm run build` first).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { Database } from '../../../src/stores/sqlite/sqlite-driver.cjs';
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
    // The store's checkpoints too (docs/api.md, "Store checkpoints"): its chain origin, then
    // each run sealed its job.
    assert.match(
      all.stdout,
      /^3 jobs verified: 3 intact, 0 not\n4 checkpoints sealing 18 events\nhead: 4 sha256:[0-9a-f]{64}\n$/,
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

  it('verify --all: a job copied with no hashes is not intact, exit 1; jobs recorded before the chain are counted apart', () => {
    const cwd = mkdtempSync(join(tmpdir(), 'warrant-jobs-forged-'));
    const file = join(cwd, 'jobs.db');
    const store = `sqlite:${file}`;
    const plan = join(cwd, 'plan.json');
    writeFileSync(
      plan,
      JSON.stringify({
        version: '1.0',
        goal: 'pay 10',
        steps: [{ id: 'say', capability: 'system.echo', input: { message: 'pay 10' } }],
      }),
    );
    const key = { WARRANT_AUDIT_KEY: 'the audit key' };
    const run = warrant(['run', plan, '--store', store, '--json'], cwd, key);
    assert.equal(run.code, 0, run.stderr);
    const id = (JSON.parse(run.stdout) as { id: string }).id;
    // The attack of issue 45, without the key: the job's rows copied under a new id, its goal and
    // result edited, its events' hashes left NULL.
    const forged = `${id}-copy`;
    const db = new Database(file);
    const seq = '(SELECT seq FROM jobs WHERE id = ?)';
    db.prepare(
      `INSERT INTO jobs (id, status, goal, created_at, updated_at, fixed, state)
       SELECT ?, status, '"pay 1000"', created_at, updated_at, fixed,
         replace(state, 'pay 10', 'pay 1000') FROM jobs WHERE id = ?`,
    ).run(forged, id);
    db.prepare(
      `INSERT INTO job_steps (job_seq, position, capability, status, fixed, state, decision)
       SELECT ${seq}, position, capability, status, replace(fixed, 'pay 10', 'pay 1000'),
         replace(state, 'pay 10', 'pay 1000'), decision FROM job_steps WHERE job_seq = ${seq}`,
    ).run(forged, id);
    db.prepare(
      `INSERT INTO job_events (job_seq, position, event, hash)
       SELECT ${seq}, position, replace(replace(event, ?, ?), 'pay 10', 'pay 1000'), NULL
       FROM job_events WHERE job_seq = ${seq}`,
    ).run(forged, id, forged, id);
    db.close();
    const all = warrant(['jobs', 'verify', '--all', '--store', store], cwd, key);
    assert.equal(all.code, 1, all.stdout);
    assert.match(
      all.stdout,
      new RegExp(
        `^job ${forged}: NOT INTACT: no chain: its events carry no hash, and it was not recorded before the chain \\(the store has kept chains since checkpoint 1\\): not written by Warrant \\(copied or forged\\), or its hashes were removed\n2 jobs verified: 1 intact, 1 not\n`,
      ),
    );
    const json = JSON.parse(
      warrant(['jobs', 'verify', '--all', '--store', store, '--json'], cwd, key).stdout,
    ) as { intact: number; unchained: number; broken: { id: string }[] };
    assert.deepEqual(
      [json.intact, json.unchained, json.broken.map((job) => job.id)],
      [1, 0, [forged]],
    );

    // A file from before the chain (schema version 2: no checkpoints, no hashes) opens, and its
    // job is counted as recorded before the chain: not intact, not broken.
    const legacyCwd = mkdtempSync(join(tmpdir(), 'warrant-jobs-legacy-'));
    const legacyFile = join(legacyCwd, 'jobs.db');
    const legacy = `sqlite:${legacyFile}`;
    assert.equal(warrant(['run', plan, '--store', legacy], legacyCwd).code, 0);
    const old = new Database(legacyFile);
    old.exec(`DROP TRIGGER job_events_unsealed;
      DROP TABLE checkpoint_entries; DROP TABLE checkpoint_approvals; DROP TABLE checkpoints;
      DROP TABLE checkpoint_unsealed; DROP TABLE IF EXISTS chain_origin;
      ALTER TABLE job_steps DROP COLUMN decision; ALTER TABLE job_events DROP COLUMN hash;
      UPDATE schema_version SET version = 2;`);
    old.close();
    const migrated = warrant(['jobs', 'verify', '--all', '--store', legacy], legacyCwd);
    assert.equal(migrated.code, 0, migrated.stdout);
    assert.match(
      migrated.stdout,
      /^1 jobs verified: 0 intact, 0 not, 1 recorded before the event chain \(schema version 1 or 2\): nothing to check them with\n1 checkpoints sealing 0 events\nhead: 1 sha256:[0-9a-f]{64}\n$/,
    );
  });

  it('a keyed record checked without WARRANT_AUDIT_KEY: the key is missing (exit 2), not NOT INTACT', () => {
    const cwd = mkdtempSync(join(tmpdir(), 'warrant-jobs-nokey-'));
    const store = `sqlite:${join(cwd, 'jobs.db')}`;
    const plan = join(cwd, 'plan.json');
    writeFileSync(
      plan,
      JSON.stringify({
        version: '1.0',
        steps: [{ id: 'say', capability: 'system.echo', input: { message: 'hi' } }],
      }),
    );
    const key = { WARRANT_AUDIT_KEY: 'the audit key' };
    const run = warrant(['run', plan, '--store', store, '--json'], cwd, key);
    assert.equal(run.code, 0, run.stderr);
    const id = (JSON.parse(run.stdout) as { id: string }).id;
    const missingKey =
      /is keyed \(hmac-sha256\) and WARRANT_AUDIT_KEY is not set: set it to the store's audit key to verify \(a missing key, not a sign of tampering\)\n$/;
    for (const args of [
      ['jobs', 'verify', id, '--store', store],
      ['jobs', 'verify', '--all', '--store', store],
    ]) {
      const verified = warrant(args, cwd);
      assert.equal(verified.code, 2, `${args.join(' ')}: ${verified.stdout}`);
      assert.doesNotMatch(verified.stdout, /NOT INTACT/);
      assert.match(verified.stderr, missingKey);
    }
    const bundle = join(cwd, 'bundle.json');
    const exported = warrant(['jobs', 'export', id, '--store', store], cwd, key);
    assert.equal(exported.code, 0, exported.stderr);
    writeFileSync(bundle, exported.stdout);
    const evidence = warrant(['evidence', 'verify', bundle], cwd);
    assert.equal(evidence.code, 2, evidence.stdout);
    assert.match(evidence.stderr, missingKey);
    assert.equal(warrant(['evidence', 'verify', bundle], cwd, key).code, 0);
    assert.equal(warrant(['jobs', 'verify', id, '--store', store], cwd, key).code, 0);
  });
});
