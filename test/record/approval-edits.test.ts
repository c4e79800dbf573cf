// The record of an approval with edits as verifyJob checks it (docs/api.md, "Approve with
// edits"): the proposed and approved inputs exist exactly on an edited step and match the
// digests of its grant, the grant decides the request it follows, and every decision after it
// was made on the approved input. Each rewrite below keeps the chain intact (it is recomputed,
// as someone rewriting an unkeyed chain would): only these checks catch it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { OperatorRuntime, type Job, type JobEvent } from '../../src/index.js';
import type { JobStep } from '../../src/jobs/job.js';
import { digestRecorded } from '../../src/jobs/recorded-value.js';
import { checkApprovalEdit } from '../../src/record/approval-edits.js';
import { chainHash } from '../../src/record/event-chain.js';
import { verifyRecord } from '../../src/record/verify-record.js';
import { register } from '../support/runtime-fixtures.js';

/** A completed job whose second step an approver edited, as the memory store records it. */
async function editedJob(): Promise<Job> {
  const runtime = new OperatorRuntime({ approvals: { approver: { canApprove: () => true } } });
  const [look, save] = register(
    runtime,
    { execute: () => ({ value: 7 }) },
    { risk: 'write', execute: ({ input }: { input: unknown }) => input },
  ) as [string, string];
  try {
    const job = await runtime.executePlan(
      {
        version: '1.0',
        goal: 'save an edited value',
        steps: [
          { id: 'look', capability: look, input: {} },
          { id: 'save', capability: save, input: { n: { $ref: 'steps.look.result.value' } } },
        ],
      },
      { caller: { id: 'alice' } },
    );
    await runtime.decideApproval({
      jobId: job.id,
      stepId: 'save',
      inputDigest: job.steps[1]?.decision?.inputDigest as string,
      approver: { id: 'bob' },
      decision: 'approve',
      input: { n: 70 },
    });
    return structuredClone((await runtime.getJob(job.id)) as Job);
  } finally {
    await runtime.close();
  }
}

/** The chain of these events, recomputed (unkeyed). */
function chainOf(events: readonly JobEvent[]): string[] {
  const hashes: string[] = [];
  for (const event of events) hashes.push(chainHash(hashes.at(-1) ?? '', event, undefined));
  return hashes;
}

/** Verifies a (rewritten) record with its chain recomputed. */
const verified = (job: Job) => verifyRecord(job, chainOf(job.events), undefined);

const grantOf = (job: Job) => job.events.findIndex((event) => event.type === 'approval.granted');

/** The job with the grant's data changed by `change`. */
function withGrant(job: Job, change: (data: Record<string, unknown>) => void): Job {
  const copy = structuredClone(job);
  const at = grantOf(copy);
  const event = copy.events[at] as JobEvent;
  const data = { ...event.data };
  change(data);
  copy.events[at] = { ...event, data };
  return copy;
}

describe('the record of an approval with edits', () => {
  it('verifies as recorded: both inputs, their digests, the decision on the approved one', async () => {
    const job = await editedJob();
    assert.equal(job.status, 'completed');
    assert.deepEqual(verified(job), { ok: true, events: job.events.length });
    assert.equal(checkApprovalEdit(job.steps[1] as JobStep, job.events), undefined);
    assert.equal(checkApprovalEdit(job.steps[0] as JobStep, job.events), undefined);
  });

  it('reports each input, digest or decision that does not match', async () => {
    const job = await editedJob();
    const granted = grantOf(job);
    const reasons = (candidate: Job) => {
      const verdict = verified(candidate);
      assert.equal(verdict.ok, false);
      return verdict as { reason: string; eventIndex?: number; stepId?: string };
    };
    const inputChanged = structuredClone(job);
    (inputChanged.steps[1] as JobStep).proposedInput = { n: 8 };
    assert.deepEqual(reasons(inputChanged), {
      ok: false,
      reason: 'the proposed input of step save does not match its edited grant',
      eventIndex: granted,
      stepId: 'save',
    });
    // The proposed digest made to match a rewritten proposed input: not the request's digest.
    const proposed = withGrant(inputChanged, (data) => {
      data.proposedDigest = digestRecorded({ n: 8 });
    });
    assert.match(reasons(proposed).reason, /the approval request of step save does not match/);
    // An approved input and the grant's digest rewritten alike: the decision since says otherwise.
    const approved = withGrant(job, (data) => {
      data.inputDigest = digestRecorded({ n: 9 });
    });
    (approved.steps[1] as JobStep).approvedInput = { n: 9 };
    assert.match(
      reasons(approved).reason,
      /the decision of step save does not match its edited grant/,
    );
    // An edit taken out of the record: its inputs stay behind.
    const unflagged = withGrant(job, (data) => {
      delete data.edited;
    });
    assert.match(
      reasons(unflagged).reason,
      /step save holds an edited input but no grant of it was edited/,
    );
    const emptied = structuredClone(job);
    delete (emptied.steps[1] as JobStep).approvedInput;
    assert.match(reasons(emptied).reason, /holds no proposed or approved input/);
  });

  it('a step without an edit holds neither input', async () => {
    const job = await editedJob();
    const copy = structuredClone(job);
    (copy.steps[0] as JobStep).approvedInput = { n: 1 };
    assert.deepEqual(checkApprovalEdit(copy.steps[0] as JobStep, copy.events), {
      reason: 'step look holds an edited input but no grant of it was edited',
    });
  });
});
