// `warrant jobs export`, `warrant evidence verify` and `warrant jobs verify --all --since`,
// through the real executable on SQLite (run `npm run build` first).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { Database } from '../../../src/stores/sqlite/sqlite-driver.cjs';

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

function setUp() {
  const cwd = mkdtempSync(join(tmpdir(), 'warrant-evidence-cli-'));
  const store = `sqlite:${join(cwd, 'jobs.db')}`;
  writeFileSync(
    join(cwd, 'plan.json'),
    JSON.stringify({
      version: '1.0',
      steps: [{ id: 'say', capability: 'system.echo', input: { message: 'hi' } }],
    }),
  );
  const run = () => {
    const ran = warrant(['run', 'plan.json', '--store', store, '--json'], cwd);
    assert.equal(ran.code, 0, ran.stderr);
    return (JSON.parse(ran.stdout) as { id: string }).id;
  };
  return { cwd, store, run };
}

describe('warrant jobs export and warrant evidence verify', () => {
  it('exports a signed bundle that verifies offline; a changed byte or another key fails, naming the part', () => {
    const { cwd, store, run } = setUp();
    const id = run();
    const pair = generateKeyPairSync('ed25519');
    writeFileSync(
      join(cwd, 'signing.pem'),
      pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    );
    writeFileSync(
      join(cwd, 'public.pem'),
      pair.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    );
    const other = generateKeyPairSync('ed25519').publicKey;
    writeFileSync(join(cwd, 'other.pem'), other.export({ type: 'spki', format: 'pem' }).toString());

    const exported = warrant(
      ['jobs', 'export', id, '--signing-key', 'signing.pem', '--store', store],
      cwd,
    );
    assert.equal(exported.code, 0, exported.stderr);
    writeFileSync(join(cwd, 'bundle.json'), exported.stdout);
    const ok = warrant(['evidence', 'verify', 'bundle.json', '--public-key', 'public.pem'], cwd);
    assert.equal(ok.code, 0, ok.stdout + ok.stderr);
    assert.equal(
      ok.stdout,
      `evidence bundle.json: intact (job ${id}; chain recomputed; checkpoint verified; signature verified)\n`,
    );

    const edited = exported.stdout.replace('"hi"', '"ho"');
    assert.notEqual(edited, exported.stdout);
    writeFileSync(join(cwd, 'edited.json'), edited);
    const broken = warrant(
      ['evidence', 'verify', 'edited.json', '--public-key', 'public.pem'],
      cwd,
    );
    assert.equal(broken.code, 1);
    assert.match(broken.stdout, /^evidence edited\.json: NOT INTACT: job: /m);

    const stranger = warrant(
      ['evidence', 'verify', 'bundle.json', '--public-key', 'other.pem'],
      cwd,
    );
    assert.equal(stranger.code, 1);
    assert.match(stranger.stdout, /NOT INTACT: signature: the signature does not match this key/);

    const json = warrant(['evidence', 'verify', 'bundle.json', '--json'], cwd);
    assert.equal(json.code, 0);
    assert.equal(
      (JSON.parse(json.stdout) as { signature: string }).signature,
      'not checked (no public key)',
    );

    // Bad usage: exit 2, one line.
    assert.equal(warrant(['evidence', 'verify', 'missing.json'], cwd).code, 2);
    assert.equal(
      warrant(['evidence', 'verify', 'plan.json', '--public-key', 'plan.json'], cwd).code,
      2,
    );
    assert.equal(warrant(['evidence', 'check', 'bundle.json'], cwd).code, 2);
    const badKey = warrant(
      ['jobs', 'export', id, '--signing-key', 'public.pem', '--store', store],
      cwd,
    );
    assert.equal(badKey.code, 2);
    assert.match(badKey.stderr, /--signing-key: The private key is not a PEM key/);
    assert.equal(warrant(['jobs', 'export', 'nope', '--store', store], cwd).code, 1);
    assert.equal(warrant(['jobs', 'export', '--store', store], cwd).code, 2);
  });

  it('verify --all reports a deleted job, and --since a rollback of the whole store', () => {
    const { cwd, store, run } = setUp();
    const first = run();
    const early = warrant(['jobs', 'verify', '--all', '--store', store], cwd);
    assert.equal(early.code, 0, early.stdout);
    const earlyHead = /^head: (\d+) (\S+)$/m.exec(early.stdout);
    assert.ok(earlyHead !== null, early.stdout);
    copyFileSync(join(cwd, 'jobs.db'), join(cwd, 'early.db'));
    run();
    const later = warrant(['jobs', 'verify', '--all', '--json', '--store', store], cwd);
    const head = (JSON.parse(later.stdout) as { head: { seq: number; hash: string } }).head;
    const since = `${head.seq}:${head.hash}`;
    assert.equal(
      warrant(['jobs', 'verify', '--all', '--since', since, '--store', store], cwd).code,
      0,
    );
    assert.equal(
      warrant(
        ['jobs', 'verify', '--all', '--since', `${earlyHead[1]}:${earlyHead[2]}`, '--store', store],
        cwd,
      ).code,
      0,
      'an earlier head is an ancestor',
    );

    // The whole file rolled back to the early copy: consistent in itself, but not the kept head.
    copyFileSync(join(cwd, 'early.db'), join(cwd, 'jobs.db'));
    assert.equal(warrant(['jobs', 'verify', '--all', '--store', store], cwd).code, 0);
    const rolledBack = warrant(
      ['jobs', 'verify', '--all', '--since', since, '--store', store],
      cwd,
    );
    assert.equal(rolledBack.code, 1);
    assert.match(
      rolledBack.stdout,
      /^store: NOT INTACT: checkpoint \d+ \(the head kept\) is not in the store.*rolled back$/m,
    );
    assert.equal(
      warrant(['jobs', 'verify', '--all', '--since', 'x', '--store', store], cwd).code,
      2,
    );
    assert.equal(
      warrant(['jobs', 'verify', first, '--since', since, '--store', store], cwd).code,
      2,
    );

    const db = new Database(join(cwd, 'jobs.db'));
    for (const table of ['job_events', 'job_steps'])
      db.prepare(`DELETE FROM ${table} WHERE job_seq = (SELECT seq FROM jobs WHERE id = ?)`).run(
        first,
      );
    db.prepare('DELETE FROM jobs WHERE id = ?').run(first);
    db.close();
    const deleted = warrant(['jobs', 'verify', '--all', '--store', store], cwd);
    assert.equal(deleted.code, 1);
    assert.match(
      deleted.stdout,
      new RegExp(
        `^store: NOT INTACT: job ${first} is gone: checkpoint 2 sealed 5 of its events$`,
        'm',
      ),
    );
    assert.ok(readFileSync(join(cwd, 'jobs.db')).length > 0);
  });
});
