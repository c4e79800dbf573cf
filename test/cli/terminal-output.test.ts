// Terminal output (docs/guide/cli.md, "Terminal output"): no control character from a plan's goal,
// a step id, an authorizer's reason, an approver's comment, a capability's error or result reaches
// the terminal through any output of the real executable; a multi-line error reads the same in
// `warrant run` and `warrant jobs show`. Control characters are shown escaped (`\u001b`, `\n`).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { createCapability, OperatorRuntime } from '../../src/index.js';
import { uniqueName } from '../support/runtime-fixtures.js';

const bin = resolve('dist/esm/cli/main.js');

function warrant(args: string[], cwd: string) {
  const child = spawnSync(process.execPath, [bin, ...args], {
    cwd,
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: child.status, stdout: child.stdout, stderr: child.stderr };
}

/** Every C0 and C1 control, DEL, and the escape sequences that clear a screen and set a title. */
const CONTROLS = Array.from({ length: 0x20 }, (_, code) => String.fromCharCode(code))
  .concat(Array.from({ length: 0x21 }, (_, code) => String.fromCharCode(0x7f + code)))
  .join('');
const HOSTILE = `x${CONTROLS}\x1b[2J\x1b]0;owned\x07\x9b31m\u2028\u202ey`;

/** Anything a terminal would act on, but the newline that ends the program's own lines. */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const ACTS = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

function assertInert(output: string, what: string): void {
  const found = ACTS.exec(output);
  assert.equal(
    found,
    null,
    `${what}: U+${found?.[0].charCodeAt(0).toString(16).padStart(4, '0')} reached the terminal`,
  );
}

describe('terminal output of the program', () => {
  it('escapes every control character of goals, step ids, reasons, comments, errors and results', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'warrant-terminal-'));
    const store = `sqlite:${join(cwd, 'jobs.db')}`;
    const [read, fail, write] = [uniqueName('t.read'), uniqueName('t.fail'), uniqueName('t.write')];
    const capability = (name: string, risk: 'read' | 'write', execute: () => unknown) =>
      createCapability({ name, version: '1', description: 'd', risk, execute });
    const runtime = new OperatorRuntime({
      store,
      approvals: { approver: { canApprove: () => true } },
      authorizer: {
        authorize: ({ capability: { name } }) =>
          name === write
            ? { decision: 'require_approval', reason: `approve ${HOSTILE}` }
            : name === read || name === fail
              ? { decision: 'allow' }
              : { decision: 'deny', reason: `no ${HOSTILE}` },
      },
    }).use({
      manifest: { name: uniqueName('t-module'), version: '1', capabilities: [read, fail, write] },
      capabilities: [
        capability(read, 'read', () => ({ text: HOSTILE })),
        capability(fail, 'read', () => {
          throw new Error(`first line\nsecond ${HOSTILE}`);
        }),
        capability(write, 'write', () => 'written'),
      ],
    });
    const failed = await runtime.executePlan({
      version: '1.0',
      goal: HOSTILE,
      steps: [
        { id: `read${HOSTILE}`, capability: read },
        { id: `fail${HOSTILE}`, capability: fail },
      ],
    });
    assert.equal(failed.status, 'failed');
    const waiting = await runtime.executePlan(
      { version: '1.0', goal: HOSTILE, steps: [{ id: `write${HOSTILE}`, capability: write }] },
      { caller: { id: 'alice' } },
    );
    assert.equal(waiting.status, 'awaiting_approval');
    const pending = await runtime.executePlan(
      { version: '1.0', goal: HOSTILE, steps: [{ id: `wait${HOSTILE}`, capability: write }] },
      { caller: { id: `mallory${HOSTILE}` } },
    );
    const step = waiting.steps[0];
    assert.ok(step?.decision !== undefined);
    const rejected = await runtime.decideApproval({
      jobId: waiting.id,
      stepId: step.id,
      inputDigest: step.decision.inputDigest,
      approver: { id: 'bob' },
      decision: 'reject',
      comment: `no ${HOSTILE}`,
    });
    await runtime.close();

    const outputs = [
      ['jobs'],
      ['jobs', '--json'],
      ['jobs', 'show', failed.id],
      ['jobs', 'show', failed.id, '--json'],
      ['jobs', 'show', rejected.id],
      ['jobs', 'show', rejected.id, '--json'],
      ['jobs', 'show', pending.id],
      ['jobs', 'verify', '--all'],
      ['approvals', '--store', store],
      ['approvals', '--store', store, '--json'],
    ];
    for (const args of outputs) {
      const shown = warrant(
        [...args, ...(args.includes('--store') ? [] : ['--store', store])],
        cwd,
      );
      // verify's exit code is its verdict (issue 29's); only its output is checked here.
      if (args[1] !== 'verify')
        assert.equal(shown.code, 0, `${args.join(' ')}: ${shown.stderr}${shown.stdout}`);
      assertInert(shown.stdout, `stdout of warrant ${args.join(' ')}`);
      assertInert(shown.stderr, `stderr of warrant ${args.join(' ')}`);
    }
    // JSON stays valid and means the same values.
    const json = JSON.parse(
      warrant(['jobs', 'show', failed.id, '--json', '--store', store], cwd).stdout,
    ) as {
      goal: string;
    };
    assert.equal(json.goal, HOSTILE);
    // One rule: the multi-line error is `\n`-escaped on its line in jobs show.
    const show = warrant(['jobs', 'show', failed.id, '--store', store], cwd).stdout;
    assert.match(show, /first line\\nsecond x\\u0000\\u0001/);
    assert.match(
      show,
      /goal: x\\u0000.*\\u001b\[2J\\u001b\]0;owned\\u0007\\u009b31m\\u2028\\u202ey\n/,
    );
  });

  it('warrant run shows a multi-line error as jobs show does, and escapes the goal and step ids', () => {
    const cwd = mkdtempSync(join(tmpdir(), 'warrant-terminal-run-'));
    const store = `sqlite:${join(cwd, 'jobs.db')}`;
    const plan = join(cwd, 'plan.json');
    writeFileSync(
      plan,
      JSON.stringify({
        version: '1.0',
        goal: HOSTILE,
        steps: [
          { id: `echo${HOSTILE}`, capability: 'system.echo', input: { message: HOSTILE } },
          { id: 'missing', capability: 'fs.read', input: { path: `no\nsuch ${HOSTILE}` } },
        ],
      }),
    );
    const root = mkdtempSync(join(tmpdir(), 'warrant-terminal-root-'));
    for (const json of [[], ['--json']]) {
      const run = warrant(['run', plan, '--store', store, '--fs-root', root, ...json], cwd);
      assert.equal(run.code, 1, run.stderr);
      assertInert(run.stdout, 'stdout of warrant run');
      assertInert(run.stderr, 'stderr of warrant run');
      assert.match(run.stderr, /echox\\u0000\\u0001/);
    }
  });
});
