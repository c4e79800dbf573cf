// `warrant run --plan-approval` and `warrant approvals ... --plan` through the real executable on
// the SQLite store (docs/api.md, "Plan warrants"; docs/guide/approvals.md, "One approval for a
// plan"): the run stops before any step with exit 3 and prints the command that approves the
// plan; the list shows the plan and its steps; approving it runs the steps it covers and stops
// at the one outside it; a step previewed deny fails the run with PLAN_DENIED.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
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

const FLAGS = ['--fs-root', 'examples/data', '--plan-versions', '1.0,2.0'];

describe('warrant run --plan-approval', () => {
  it('exits 3 before any step with the command that approves the plan; approving runs what it covers', () => {
    const cwd = mkdtempSync(join(tmpdir(), 'warrant-plan-approval-'));
    copyExamples(cwd);
    writeFileSync(
      join(cwd, 'plan.json'),
      JSON.stringify({
        version: '2.0',
        goal: 'read a note, write two copies',
        steps: [
          { id: 'read', capability: 'fs.read', input: { path: 'note.txt' } },
          { id: 'fixed', capability: 'fs.write', input: { path: 'fixed.txt', content: 'hi' } },
          {
            id: 'copy',
            capability: 'fs.write',
            input: { path: 'copy.txt', content: { $ref: 'steps.read.result.content' } },
            bounds: { content: { type: 'string', maxLength: 3 } },
          },
        ],
      }),
    );
    const run = warrant(['run', 'plan.json', '--plan-approval', ...FLAGS], cwd);
    assert.equal(run.code, 3, run.stderr);
    assert.match(run.stderr, /the plan \(3 steps\) awaits approval/);
    assert.equal(existsSync(join(cwd, 'examples/data/fixed.txt')), false);
    const jobId = run.stdout.trim();

    const list = warrant(['approvals', ...FLAGS], cwd);
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, new RegExp(`${jobId}\\s+\\(plan\\)\\s+3 steps`));
    assert.match(list.stdout, /read\s+fs\.read@\S+\s+allow\s+\{"path":"note\.txt"\}/);
    assert.match(
      list.stdout,
      /copy\s+fs\.write@\S+\s+unknown\s+.*"\$ref":"steps\.read\.result\.content".*maxLength/,
    );
    const json = JSON.parse(warrant(['approvals', '--json', ...FLAGS], cwd).stdout) as {
      kind: string;
      planDigest: string;
    }[];
    assert.equal(json[0]?.kind, 'plan');

    const words = printedCommand(run.stderr);
    assert.deepEqual(words.slice(0, 7), [
      'warrant',
      'approvals',
      'approve',
      jobId,
      '--plan',
      '--digest',
      json[0]?.planDigest,
    ]);
    const args = words.slice(1).map((word) => word.replace('<approver>', 'reviewer'));
    // Without the fs module the plan cannot run here: nothing is decided.
    const withoutModule: string[] = [];
    for (let index = 0; index < args.length; index++) {
      if (args[index] === '--fs-root') index++;
      else withoutModule.push(args[index] as string);
    }
    const cannot = warrant(withoutModule, cwd);
    assert.equal(cannot.code, 1, cannot.stderr);
    assert.match(cannot.stderr, /APPROVAL_CANNOT_RUN/);
    // The note is longer than the bound: the copy escalates to a step request (exit 3).
    const approved = warrant(args, cwd);
    assert.equal(approved.code, 3, approved.stderr);
    assert.equal(readFileSync(join(cwd, 'examples/data/fixed.txt'), 'utf8'), 'hi');
    assert.equal(existsSync(join(cwd, 'examples/data/copy.txt')), false);
    assert.match(approved.stderr, /step copy awaits approval/);
    const pending = warrant(['approvals', '--json', ...FLAGS], cwd);
    const [step] = JSON.parse(pending.stdout) as { kind: string; stepId: string; reason: string }[];
    assert.deepEqual([step?.kind, step?.stepId], ['step', 'copy']);
    assert.match(
      step?.reason ?? '',
      /^outside the approved plan: content is \d+ characters, more than maxLength 3$/,
    );
    assert.equal(warrant(['jobs', 'verify', jobId], cwd).code, 0);
    assert.equal(warrant(args, cwd).code, 1, 'the plan request was consumed');
  });

  it('a step previewed deny fails the run with PLAN_DENIED (exit 1); nothing runs', () => {
    const cwd = mkdtempSync(join(tmpdir(), 'warrant-plan-denied-'));
    copyExamples(cwd);
    writeFileSync(
      join(cwd, 'plan.json'),
      JSON.stringify({
        version: '1.0',
        steps: [
          { id: 'fixed', capability: 'fs.write', input: { path: 'fixed.txt', content: 'hi' } },
          { id: 'away', capability: 'fs.read', input: { path: '../../outside.txt' } },
        ],
      }),
    );
    const policy = join(cwd, 'no-reads.cedar');
    writeFileSync(
      policy,
      'permit(principal, action, resource);\nforbid(principal, action in Warrant::Action::"risk:read", resource);\n',
    );
    const run = warrant(['run', 'plan.json', '--plan-approval', '--policy', policy, ...FLAGS], cwd);
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stderr, /PLAN_DENIED: step "away" \(fs\.read\) is denied/);
    assert.equal(existsSync(join(cwd, 'examples/data/fixed.txt')), false);
  });
});
