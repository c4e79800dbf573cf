// The self-approval rule with actor chains (docs/api.md, "Approvals" and "Callers: acting for
// someone"): every actor of the job's chain is refused, checked before the approver policy is
// asked; the subject may approve what was done on its behalf; without an actor the submitter is
// refused as before. The request names who it was made for, and the subject and the actors read it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  OperatorRuntime,
  type StepApprovalRequest,
  type ExecutionCaller,
  type Job,
} from '../../src/index.js';
import { selfApproval, selfApprovalText } from '../../src/approvals/self-approval.js';
import { register } from '../support/runtime-fixtures.js';

const ADA_VIA_AGENT: ExecutionCaller = {
  id: 'ada',
  scopes: ['mail'],
  actor: { id: 'assistant', scopes: ['mail'], actor: { id: 'planner', scopes: ['mail'] } },
};

describe('selfApproval', () => {
  it('refuses every actor of the chain, and lets the subject approve', () => {
    assert.deepEqual(selfApproval({ id: 'assistant' }, ADA_VIA_AGENT), {
      as: 'actor',
      id: 'assistant',
    });
    assert.deepEqual(selfApproval({ id: 'planner' }, ADA_VIA_AGENT), {
      as: 'actor',
      id: 'planner',
    });
    assert.equal(selfApproval({ id: 'ada' }, ADA_VIA_AGENT), undefined);
    assert.equal(selfApproval({ id: 'bob' }, ADA_VIA_AGENT), undefined);
  });

  it("judges the approver's own chain too: an actor cannot approve through a caller it acts for", () => {
    assert.deepEqual(selfApproval({ id: 'ada', actor: { id: 'assistant' } }, ADA_VIA_AGENT), {
      as: 'actor',
      id: 'assistant',
    });
    assert.equal(selfApproval({ id: 'ada', actor: { id: 'phone-app' } }, ADA_VIA_AGENT), undefined);
    assert.deepEqual(selfApproval({ id: 'boss', actor: { id: 'ada' } }, { id: 'ada' }), {
      as: 'submitter',
      id: 'ada',
    });
  });

  it('without an actor refuses the submitter only; a job without a caller id refuses nobody', () => {
    assert.deepEqual(selfApproval({ id: 'ada' }, { id: 'ada' }), { as: 'submitter', id: 'ada' });
    assert.equal(selfApproval({ id: 'bob' }, { id: 'ada' }), undefined);
    assert.equal(selfApproval({ id: 'bob' }, undefined), undefined);
    assert.equal(selfApproval({ id: 'bob' }, { scopes: [] }), undefined);
  });

  it('words the refusal after who the approver is', () => {
    assert.equal(
      selfApprovalText({ as: 'actor', id: 'assistant' }, { id: 'j1' }),
      '"assistant" acted in job "j1" and cannot decide its approval',
    );
    assert.equal(
      selfApprovalText({ as: 'submitter', id: 'ada' }, { id: 'j1' }),
      'The caller who submitted job "j1" cannot decide its approval',
    );
  });
});

describe('decideApproval with an actor chain', () => {
  async function proposed() {
    const asked: ExecutionCaller[] = [];
    const runtime = new OperatorRuntime({
      approvals: {
        approver: {
          canApprove: (approver) => {
            asked.push(approver);
            // Only ada decides: the actors read as parties, not as approvers.
            return approver.id === 'ada';
          },
        },
      },
    });
    const [send] = register(runtime, { risk: 'write', execute: () => ({ sent: true }) }) as [
      string,
    ];
    const job = await runtime.executePlan(
      { version: '1.0', steps: [{ id: 'mail', capability: send, input: { to: 'x@example.com' } }] },
      { caller: ADA_VIA_AGENT },
    );
    assert.equal(job.status, 'awaiting_approval');
    const [request] = (await runtime.listApprovals({ jobId: job.id })) as [StepApprovalRequest];
    const decide = (approver: ExecutionCaller) =>
      runtime.decideApproval({
        jobId: job.id,
        stepId: 'mail',
        inputDigest: request.inputDigest,
        decision: 'approve',
        approver,
      });
    return { runtime, job, asked, decide };
  }

  it('refuses each actor with APPROVAL_SELF_APPROVAL before the approver policy is asked', async () => {
    const { runtime, asked, decide } = await proposed();
    try {
      for (const approver of [
        { id: 'assistant' },
        { id: 'planner' },
        { id: 'ada', actor: { id: 'assistant' } },
      ])
        await assert.rejects(decide(approver), {
          code: 'APPROVAL_SELF_APPROVAL',
          message: /acted in job .* and cannot decide its approval/,
        });
      assert.deepEqual(asked, []);
    } finally {
      await runtime.close();
    }
  });

  it('lets the subject approve what its agent proposed', async () => {
    const { runtime, asked, decide } = await proposed();
    try {
      const done = await decide({ id: 'ada' });
      assert.equal(done.status, 'completed');
      assert.deepEqual(
        asked.map((approver) => approver.id),
        ['ada'],
      );
    } finally {
      await runtime.close();
    }
  });

  it('records approval.requested with the actor and onBehalfOf, and lets subject and actors read it', async () => {
    const { runtime, job } = await proposed();
    try {
      const requested = job.events.find((event) => event.type === 'approval.requested');
      assert.equal(requested?.data?.actor, 'assistant');
      assert.equal(requested?.data?.onBehalfOf, 'ada');
      for (const reader of ['ada', 'assistant', 'planner']) {
        const read = (await runtime.getJob(job.id, { caller: { id: reader } })) as Job;
        assert.equal(read?.id, job.id, reader);
        const listed = await runtime.listApprovals({ caller: { id: reader } });
        assert.deepEqual(
          listed.map((request) => request.jobId),
          [job.id],
          `${reader} sees the request made on ada's behalf`,
        );
      }
      assert.equal(await runtime.getJob(job.id, { caller: { id: 'mallory' } }), undefined);
      // Parties read within the job's tenant only.
      assert.equal(
        await runtime.getJob(job.id, { caller: { id: 'assistant', tenant: 'other' } }),
        undefined,
      );
      const plain = await runtime.executePlan(
        { version: '1.0', steps: [{ id: 'mail', capability: job.steps[0]?.capability as string }] },
        { caller: { id: 'ada' } },
      );
      const event = plain.events.find((each) => each.type === 'approval.requested');
      assert.equal('onBehalfOf' in (event?.data ?? {}), false, 'no actor, no onBehalfOf');
    } finally {
      await runtime.close();
    }
  });
});
