// `warrant run --approvals` and `warrant approvals` through the real executable on the SQLite store
// (docs/guide/approvals.md, "Try it"): the run stops with exit 3 and prints the command that
// approves; the list shows the request; that command, as another caller, runs the write.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { copyExamples } from '../../support/examples-copy.js';

const bin = resolve('dist/esm/cli/main.js');

function warrant(args: string[], cwd: string) {
  const child = spawnSync(process.execPath, [bin, ...args], {
    cwd,
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: child.status, stdout: child.stdout, stderr: child.stderr };
}

/** The words of the printed approve command (plain words, and one single-quoted --caller). */
function printedCommand(stderr: string): string[] {
  const line = stderr.split('\n').find((text) => text.trim().startsWith('warrant approvals'));
  assert.ok(line !== undefined, stderr);
  const words = line.trim().match(/'[^']*'|\S+/g) ?? [];
  return words.map((word) => (word.startsWith("'") ? word.slice(1, -1) : word));
}

describe('warrant approvals', () => {
  it('run --approvals exits 3 with the approve command; approving as another caller runs the write', () => {
    const cwd = mkdtempSync(join(tmpdir(), 'warrant-approvals-cli-'));
    copyExamples(cwd);
    const run = warrant(
      ['run', 'examples/plans/hello.json', '--fs-root', 'examples/data', '--approvals'],
      cwd,
    );
    assert.equal(run.code, 3, run.stderr);
    assert.match(run.stderr, /write-copy \(fs\.write\) awaits approval/);
    assert.equal(existsSync(join(cwd, 'examples/data/copy.txt')), false);
    const jobId = run.stdout.trim();
    // A waiting job's record is intact: the request's digest is checked against its event.
    const verified = warrant(['jobs', 'verify', '--all'], cwd);
    assert.equal(verified.code, 0, verified.stdout);
    assert.match(verified.stdout, /1 jobs verified: 1 intact, 0 not/);

    const list = warrant(['approvals', '--fs-root', 'examples/data'], cwd);
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, new RegExp(`${jobId}\\s+write-copy\\s+fs\\.write@`));

    const words = printedCommand(run.stderr);
    assert.deepEqual(words.slice(0, 5), ['warrant', 'approvals', 'approve', jobId, 'write-copy']);
    const args = words.slice(1).map((word) => word.replace('<approver>', 'reviewer'));
    const shown = JSON.parse(warrant(['jobs', 'show', jobId, '--json'], cwd).stdout) as {
      caller?: { id?: string };
    };
    const submitter = JSON.stringify({ id: shown.caller?.id });
    const self = warrant(
      args.map((word) => (word === '{"id":"reviewer"}' ? submitter : word)),
      cwd,
    );
    assert.equal(self.code, 1);
    assert.match(self.stderr, /APPROVAL_SELF_APPROVAL/);
    const wrong = warrant(
      args.map((word) => (word.startsWith('sha256:') ? `sha256:${'0'.repeat(64)}` : word)),
      cwd,
    );
    assert.equal(wrong.code, 1);
    assert.match(wrong.stderr, /APPROVAL_DIGEST_MISMATCH/);
    // Approved from a process without the fs module (the approve command without --fs-root, as
    // in a notification): refused before anything is consumed; the request stays pending
    // (issue 47 item 2, APPROVAL_CANNOT_RUN).
    const withoutModule: string[] = [];
    for (let index = 0; index < args.length; index++) {
      if (args[index] === '--fs-root') index++;
      else withoutModule.push(args[index] as string);
    }
    const cannot = warrant(withoutModule, cwd);
    assert.equal(cannot.code, 1, cannot.stderr);
    assert.match(cannot.stderr, /APPROVAL_CANNOT_RUN: .*does not register fs\.write@/);
    assert.match(cannot.stderr, /nothing was decided/);
    const still = JSON.parse(warrant(['jobs', 'show', jobId, '--json'], cwd).stdout) as {
      status: string;
      events: { type: string }[];
    };
    assert.equal(still.status, 'awaiting_approval');
    assert.ok(!still.events.some((event) => event.type === 'approval.granted'));
    assert.match(
      warrant(['approvals', '--fs-root', 'examples/data'], cwd).stdout,
      new RegExp(`${jobId}\\s+write-copy`),
    );
    const approved = warrant([...args, '--comment', 'checked the copy'], cwd);
    assert.equal(approved.code, 0, approved.stderr);
    const record = JSON.parse(warrant(['jobs', 'show', jobId, '--json'], cwd).stdout) as {
      events: { type: string; data?: { comment?: string } }[];
    };
    const granted = record.events.find((event) => event.type === 'approval.granted');
    assert.equal(granted?.data?.comment, 'checked the copy');
    assert.equal(warrant(['jobs', 'verify', jobId], cwd).code, 0);
    assert.match(approved.stderr, /completed/);
    assert.ok(existsSync(join(cwd, 'examples/data/copy.txt')));
    const again = warrant(args, cwd);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /APPROVAL_NOT_PENDING/);
    assert.match(warrant(['approvals', '--fs-root', 'examples/data'], cwd).stdout, /no pending/);
  });

  it('approving a step the job stops after again prints the command that approves the next, with the flags the decision needs', () => {
    const cwd = mkdtempSync(join(tmpdir(), 'warrant-approvals-next-'));
    copyExamples(cwd);
    const write = (id: string, path: string) => ({
      id,
      capability: 'fs.write',
      input: { path, content: id },
    });
    writeFileSync(
      join(cwd, 'two-writes.json'),
      JSON.stringify({
        version: '1.0',
        goal: 'two writes, each approved',
        steps: [write('first', 'first.txt'), write('second', 'second.txt')],
      }),
    );
    const run = warrant(
      ['run', 'two-writes.json', '--fs-root', 'examples/data', '--approvals'],
      cwd,
    );
    assert.equal(run.code, 3, run.stderr);
    const first = printedCommand(run.stderr).slice(1);
    assert.deepEqual(first.slice(0, 4), ['approvals', 'approve', run.stdout.trim(), 'first']);
    const approvedFirst = warrant(
      first.map((word) => word.replace('<approver>', 'reviewer')),
      cwd,
    );
    assert.equal(approvedFirst.code, 3, approvedFirst.stderr);
    assert.ok(existsSync(join(cwd, 'examples/data/first.txt')));
    // The next approval's command, as `warrant run` prints it: the store and --fs-root with it.
    assert.match(approvedFirst.stderr, /step second awaits approval; to approve it:/);
    const second = printedCommand(approvedFirst.stderr).slice(1);
    assert.deepEqual(second.slice(0, 4), ['approvals', 'approve', run.stdout.trim(), 'second']);
    assert.ok(second.includes('--fs-root'), second.join(' '));
    const approvedSecond = warrant(
      second.map((word) => word.replace('<approver>', 'reviewer')),
      cwd,
    );
    assert.equal(approvedSecond.code, 0, approvedSecond.stderr);
    assert.ok(existsSync(join(cwd, 'examples/data/second.txt')));
  });

  it('npm start stops at the write and prints the command that approves it', () => {
    const cwd = mkdtempSync(join(tmpdir(), 'warrant-approvals-start-'));
    copyExamples(cwd);
    cpSync(resolve('scripts'), join(cwd, 'scripts'), { recursive: true });
    symlinkSync(resolve('dist'), join(cwd, 'dist'));
    symlinkSync(resolve('node_modules'), join(cwd, 'node_modules'));
    const start = spawnSync(process.execPath, ['scripts/start.mjs'], {
      cwd,
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.equal(start.status, 0, start.stderr);
    assert.match(start.stderr, /write-copy \(fs\.write\) awaits approval/);
    const line = start.stdout
      .split('\n')
      .find((text) => text.trim().startsWith('npm run warrant -- approvals approve'));
    assert.ok(line !== undefined, start.stdout);
    const words = (line.trim().match(/'[^']*'|\S+/g) ?? []).map((word) =>
      word.startsWith("'") ? word.slice(1, -1) : word,
    );
    const approved = warrant(words.slice(4), cwd);
    assert.equal(approved.code, 0, approved.stderr);
    assert.ok(existsSync(join(cwd, 'examples/data/copy.txt')));
  });

  it('lists with --caller only what the read policy gives that caller, and refuses a decision across tenants', () => {
    const cwd = mkdtempSync(join(tmpdir(), 'warrant-approvals-tenants-'));
    copyExamples(cwd);
    const fsRoot = ['--fs-root', 'examples/data'];
    const as = (caller: object) => ['--caller', JSON.stringify(caller)];
    const run = warrant(
      [
        'run',
        'examples/plans/hello.json',
        ...fsRoot,
        '--approvals',
        ...as({ id: 'alice', tenant: 'a' }),
      ],
      cwd,
    );
    assert.equal(run.code, 3, run.stderr);
    const jobId = run.stdout.trim();
    const listed = (args: string[]) => {
      const list = warrant(['approvals', ...fsRoot, '--json', ...args], cwd);
      assert.equal(list.code, 0, list.stderr);
      return (JSON.parse(list.stdout) as { jobId: string }[]).map((request) => request.jobId);
    };
    assert.deepEqual(listed([]), [jobId], 'the operator on the store lists every request');
    assert.deepEqual(listed(as({ id: 'carol', tenant: 'a' })), [jobId], 'an approver of tenant a');
    assert.deepEqual(listed(as({ id: 'bob', tenant: 'b' })), [], 'tenant b sees nothing');
    assert.deepEqual(listed(as({ id: 'bob' })), [], 'nor does a caller without a tenant');

    const words = printedCommand(run.stderr);
    const decide = (caller: object) =>
      warrant(
        words.slice(1).map((word) => (word.startsWith('{') ? JSON.stringify(caller) : word)),
        cwd,
      );
    const across = decide({ id: 'bob', tenant: 'b', scopes: ['warrant:audit'] });
    assert.equal(across.code, 1, across.stderr);
    assert.match(across.stderr, /^warrant: APPROVAL_FORBIDDEN: /m);
    assert.equal(existsSync(join(cwd, 'examples/data/copy.txt')), false);
    assert.deepEqual(listed([]), [jobId], 'the request is still pending');
    const within = decide({ id: 'carol', tenant: 'a' });
    assert.equal(within.code, 0, within.stderr);
    assert.ok(existsSync(join(cwd, 'examples/data/copy.txt')));
  });

  it('approve --input <file> runs the write with the edited input; a refused one exits 1 and decides nothing (docs/api.md, "Approve with edits")', () => {
    const cwd = mkdtempSync(join(tmpdir(), 'warrant-approvals-edit-'));
    copyExamples(cwd);
    const run = warrant(
      ['run', 'examples/plans/hello.json', '--fs-root', 'examples/data', '--approvals'],
      cwd,
    );
    assert.equal(run.code, 3, run.stderr);
    const jobId = run.stdout.trim();
    const args = printedCommand(run.stderr)
      .slice(1)
      .map((word) => word.replace('<approver>', 'reviewer'));
    const file = (name: string, text: string) => {
      writeFileSync(join(cwd, name), text);
      return name;
    };
    const refused = warrant([...args, '--input', file('bad.json', '{"path":"edited.txt"}')], cwd);
    assert.equal(refused.code, 1, refused.stderr);
    assert.match(refused.stderr, /^warrant: APPROVAL_INPUT_INVALID: .*content/m);
    const notJson = warrant([...args, '--input', file('broken.json', '{"path":')], cwd);
    assert.equal(notJson.code, 2);
    assert.match(notJson.stderr, /--input broken\.json is not valid JSON/);
    const deep = warrant([...args, '--input', file('deep.json', '['.repeat(1001))], cwd);
    assert.equal(deep.code, 2);
    assert.match(deep.stderr, /nested deeper than 1000 levels/);
    const rejecting = warrant(
      [...args.map((word) => (word === 'approve' ? 'reject' : word)), '--input', 'bad.json'],
      cwd,
    );
    assert.equal(rejecting.code, 2);
    const pending = JSON.parse(warrant(['jobs', 'show', jobId, '--json'], cwd).stdout) as {
      status: string;
    };
    assert.equal(pending.status, 'awaiting_approval', 'nothing was decided');

    const edited = { path: 'edited.txt', content: 'written as the reviewer edited it' };
    const approved = warrant(
      [...args, '--input', file('edit.json', JSON.stringify(edited)), '--json'],
      cwd,
    );
    assert.equal(approved.code, 0, approved.stderr);
    assert.equal(existsSync(join(cwd, 'examples/data/copy.txt')), false);
    assert.equal(
      readFileSync(join(cwd, 'examples/data/edited.txt'), 'utf8'),
      'written as the reviewer edited it',
    );
    const job = JSON.parse(approved.stdout) as {
      steps: { approvedInput?: unknown; proposedInput?: { path?: string } }[];
      events: { type: string; data?: Record<string, unknown> }[];
    };
    assert.deepEqual(job.steps[2]?.approvedInput, edited);
    assert.equal(job.steps[2]?.proposedInput?.path, 'copy.txt');
    const granted = job.events.find((event) => event.type === 'approval.granted');
    assert.equal(granted?.data?.approver, 'reviewer');
    assert.equal(granted?.data?.edited, true);
    assert.equal(warrant(['jobs', 'verify', jobId], cwd).code, 0);
  });

  it('refuses bad usage with exit 2', () => {
    const cwd = mkdtempSync(join(tmpdir(), 'warrant-approvals-usage-'));
    const store = `sqlite:${join(cwd, 'jobs.db')}`;
    assert.equal(warrant(['approvals', 'approve', 'x', '--store', store], cwd).code, 2);
    assert.equal(warrant(['approvals', 'maybe', '--store', store], cwd).code, 2);
  });
});
