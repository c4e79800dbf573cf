// --approvals and --approvers (docs/guide/approvals.md, "From the program"): the program's runtime
// asks approval for writes, its default approver policy lets anyone but the submitter decide, and
// an
// --approvers module replaces it. --approvers without --approvals is a usage error.
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { describe, it } from 'node:test';
import { loadApprover } from '../../src/cli/load-modules.js';
import { createProgramRuntime, decisionFlags } from '../../src/cli/program-runtime.js';
import { OperatorRuntime } from '../../src/index.js';
import { register } from '../support/runtime-fixtures.js';

const OPS = resolve(import.meta.dirname, 'fixtures/approvers-ops.mjs');

async function waitingJob(runtime: OperatorRuntime) {
  const [write] = register(runtime, { risk: 'write', execute: () => ({ ok: true }) }) as [string];
  const job = await runtime.executePlan(
    { version: '1.0', steps: [{ id: 'w', capability: write, input: {} }] },
    { caller: { id: 'alice' } },
  );
  assert.equal(job.status, 'awaiting_approval');
  const decide = (id: string) =>
    runtime.decideApproval({
      jobId: job.id,
      stepId: 'w',
      inputDigest: job.steps[0]?.decision?.inputDigest ?? '',
      approver: { id },
      decision: 'approve',
    });
  return { runtime, decide };
}

describe('warrant --approvals', () => {
  it('by default lets anyone but the submitter approve', async () => {
    // The program's built-ins are registered once per process: one program runtime here.
    const { runtime, decide } = await waitingJob(
      await createProgramRuntime({ approvals: true, store: 'memory' }),
    );
    await assert.rejects(decide('alice'), { code: 'APPROVAL_SELF_APPROVAL' });
    assert.equal((await decide('bob')).status, 'completed');
    await runtime.close();
  });

  it('takes the approver policy from --approvers', async () => {
    const approver = await loadApprover(OPS);
    const { runtime, decide } = await waitingJob(new OperatorRuntime({ approvals: { approver } }));
    await assert.rejects(decide('bob'), { code: 'APPROVAL_FORBIDDEN' });
    assert.equal((await decide('ops')).status, 'completed');
    await runtime.close();
  });

  it('refuses --approvers without --approvals, and a module without canApprove', async () => {
    await assert.rejects(createProgramRuntime({ approvers: OPS, store: 'memory' }), {
      message: '--approvers needs --approvals',
    });
    await assert.rejects(
      loadApprover(resolve(import.meta.dirname, 'fixtures/allow-all.mjs')),
      /canApprove/,
    );
  });
});

describe('the flags of a printed approve command (issue 47 item 2)', () => {
  it('carry what the decision needs, and a PostgreSQL store without its password', () => {
    assert.deepEqual(
      decisionFlags({
        module: ['./ledger.mjs'],
        store: 'postgres://alice:s3cr%40t@db.example:5432/warrant?statement_timeout=5000',
        'fs-root': 'examples/data',
      }),
      [
        '--module',
        './ledger.mjs',
        '--store',
        'postgres://alice@db.example:5432/warrant?statement_timeout=5000',
        '--fs-root',
        'examples/data',
      ],
    );
    assert.deepEqual(decisionFlags({ store: 'sqlite:./jobs.db' }), ['--store', 'sqlite:./jobs.db']);
    assert.deepEqual(decisionFlags({ store: 'postgresql://:only%20password@db/w' }), [
      '--store',
      'postgresql://db/w',
    ]);
  });
});
