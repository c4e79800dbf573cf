// verifyJob on a plan warrant (docs/api.md, "runtime.verifyJob", "Plan warrants"): the plan
// request's digest is computed again from the record, each plan decision must name it, and a
// step decision covered by a plan grant must name the grant the record holds.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import {
  OperatorRuntime,
  verifyEvidence,
  type EvidenceBundle,
  type Job,
  type JobEvent,
  type PlanApprovalRequest,
} from '../../src/index.js';
import { checkPlanWarrant } from '../../src/record/verify-plan-warrant.js';
import { verifyRecord } from '../../src/record/verify-record.js';
import { register } from '../support/runtime-fixtures.js';

const directory = mkdtempSync(join(tmpdir(), 'warrant-plan-evidence-'));
after(() => rmSync(directory, { recursive: true, force: true }));

async function grantedJob(
  store = 'memory',
  keep?: (runtime: OperatorRuntime, id: string) => Promise<void>,
): Promise<Job> {
  const runtime = new OperatorRuntime({
    store,
    approvals: { approver: { canApprove: () => true } },
  });
  const [write] = register(runtime, { risk: 'write', execute: () => ({ ok: true }) }) as [string];
  const job = await runtime.executePlan(
    { version: '1.0', steps: [{ id: 'w', capability: write, input: { n: 1 } }] },
    { caller: { id: 'alice' }, approval: 'plan' },
  );
  const [request] = (await runtime.listApprovals()) as PlanApprovalRequest[];
  const done = await runtime.decideApproval({
    kind: 'plan',
    jobId: job.id,
    planDigest: request?.planDigest ?? '',
    approver: { id: 'bob' },
    decision: 'approve',
  });
  assert.equal(done.status, 'completed');
  const stored = (await runtime.getJob(job.id)) as Job;
  await keep?.(runtime, job.id);
  await runtime.close();
  return structuredClone(stored);
}

/** The job with the data of its first event of `type` changed by `edit`. */
function edited(job: Job, type: string, edit: (data: Record<string, unknown>) => void): Job {
  const copy = structuredClone(job);
  const at = copy.events.findIndex((event) => event.type === type);
  const data = structuredClone(copy.events[at]?.data ?? {}) as Record<string, unknown>;
  edit(data);
  copy.events[at] = { ...(copy.events[at] as JobEvent), data };
  return copy;
}

describe('checkPlanWarrant', () => {
  it('holds for a job run under its plan grant', async () => {
    const job = await grantedJob();
    assert.equal(checkPlanWarrant(job), undefined);
    assert.deepEqual(verifyRecord(job, undefined, undefined), {
      ok: true,
      events: job.events.length,
    });
  });

  it('finds a request whose steps or digest were changed', async () => {
    const job = await grantedJob();
    const steps = edited(job, 'approval.requested', (data) => {
      const [first] = data.steps as { outcome: string }[];
      if (first !== undefined) first.outcome = 'allow';
    });
    assert.match(
      checkPlanWarrant(steps)?.reason ?? '',
      /^the plan request \(event 2\) does not match its planDigest/,
    );
    const malformed = edited(job, 'approval.requested', (data) => {
      delete data.steps;
    });
    assert.equal(checkPlanWarrant(malformed)?.reason, 'the plan request (event 2) is malformed');
  });

  it('finds a grant naming another digest, and a step decision naming a grant the record lacks', async () => {
    const job = await grantedJob();
    const grant = edited(job, 'approval.granted', (data) => {
      data.planDigest = `sha256:${'2'.repeat(64)}`;
    });
    assert.equal(
      checkPlanWarrant(grant)?.reason,
      'the plan decision (event 3) does not name the planDigest of its request',
    );
    assert.equal(verifyRecord(grant, undefined, undefined).ok, false);
    const decision = structuredClone(job);
    const step = decision.steps[0] as { decision: { approval: { approver: string } } };
    step.decision.approval.approver = 'mallory';
    assert.deepEqual(checkPlanWarrant(decision), {
      reason: 'the decision of step w names a plan grant the record does not hold',
      stepId: 'w',
    });
  });

  it('an evidence bundle of a job run under a plan grant verifies; its grant edited does not', async () => {
    let bundle: EvidenceBundle | undefined;
    await grantedJob(`sqlite:${join(directory, 'jobs.db')}`, async (runtime, id) => {
      bundle = await runtime.exportJob(id);
    });
    assert.ok(bundle !== undefined);
    assert.equal(verifyEvidence(bundle).ok, true);
    const edited = structuredClone(bundle) as { job: Job };
    const at = edited.job.events.findIndex((event) => event.type === 'approval.granted');
    edited.job.events[at] = {
      ...(edited.job.events[at] as JobEvent),
      data: { ...edited.job.events[at]?.data, planDigest: `sha256:${'3'.repeat(64)}` },
    };
    const verification = verifyEvidence(edited);
    assert.equal(verification.ok, false);
    assert.deepEqual(verification.problems, [
      {
        part: 'hashes',
        reason: `event ${at} (approval.granted) does not match its hash: it or an earlier event was changed, removed or reordered (event ${at})`,
      },
    ]);
  });
});
