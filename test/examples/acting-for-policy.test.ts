// The guide's "Acting for someone" policy (docs/guide/policies.md), read from the page and run:
// an agent sends mail for a person only within the scopes both hold, and never to an external
// domain without approval, which the person may give and the agent never can. A real runtime with
// cedarAuthorizer; the policy also validates against the generated schema.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import {
  OperatorRuntime,
  cedarAuthorizer,
  createCapability,
  validateCedarPolicies,
  type StepApprovalRequest,
  type ExecutionCaller,
} from '../../src/index.js';
import { fencedBlocks } from '../support/markdown.js';

const GUIDE = resolve(import.meta.dirname, '../../docs/guide/policies.md');
const [block] = fencedBlocks(readFileSync(GUIDE, 'utf8')).filter(
  (each) => each.marker?.name === 'acting-for-policy',
);
const policies = block?.code ?? '';

const sent: unknown[] = [];
const mail = createCapability({
  name: 'mail.send',
  version: '1.0.0',
  description: 'sends one mail',
  risk: 'write',
  inputSchema: {
    to: { type: 'string', required: true, description: 'recipient' },
    subject: { type: 'string', required: true, description: 'subject' },
    body: { type: 'string', required: true, description: 'text' },
  },
  execute: ({ input }) => (sent.push(input), { sent: true }),
});
const runtime = new OperatorRuntime({
  authorizer: cedarAuthorizer({ policies }),
  approvals: { approver: { canApprove: () => true } },
});
runtime.use({
  manifest: { name: 'mail', version: '1.0.0', capabilities: ['mail.send'] },
  capabilities: [mail],
});
after(() => runtime.close());

const ada = (actor: Record<string, unknown>, scopes = ['mail:send']): ExecutionCaller => ({
  id: 'ada',
  scopes,
  actor: { id: 'assistant', ...actor },
});
const send = (caller: ExecutionCaller, to: string) =>
  runtime.executePlan(
    {
      version: '1.0',
      steps: [{ id: 'mail', capability: 'mail.send', input: { to, subject: 's', body: 'b' } }],
    },
    { caller },
  );

describe('docs/guide/policies.md, "Acting for someone"', () => {
  it('is on the page, and validates against the schema of the registered capabilities', () => {
    assert.match(policies, /@id\("mail-internal"\)/);
    assert.deepEqual(validateCedarPolicies(policies), []);
  });

  it('lets the agent mail our domain within the scopes the person and the agent both hold', async () => {
    const job = await send(ada({ scopes: ['mail:send'] }), 'bob@example.com');
    assert.equal(job.status, 'completed');
    assert.deepEqual(job.steps[0]?.decision?.policies, ['mail-internal']);
  });

  it("denies beyond the person's scopes, or when the agent lacks the scope", async () => {
    const before = sent.length;
    const notThePersons = await send(ada({ scopes: ['mail:send'] }, []), 'bob@example.com');
    assert.equal(notThePersons.status, 'failed');
    assert.equal(notThePersons.steps[0]?.decision?.reason, 'No policy permits');
    const agentWithout = await send(ada({ scopes: [] }), 'bob@example.com');
    assert.equal(agentWithout.steps[0]?.decision?.outcome, 'deny');
    const agentWithNone = await send(ada({}), 'bob@example.com');
    assert.equal(agentWithNone.steps[0]?.decision?.outcome, 'deny');
    assert.equal(sent.length, before, 'nothing sent');
  });

  it('holds external mail for approval, which the person gives and the agent cannot', async () => {
    const job = await send(ada({ scopes: ['mail:send'] }), 'eve@elsewhere.test');
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
    await assert.rejects(decide({ id: 'assistant' }), { code: 'APPROVAL_SELF_APPROVAL' });
    const approved = await decide({ id: 'ada' });
    assert.equal(approved.status, 'completed');
    assert.deepEqual(sent.at(-1), { to: 'eve@elsewhere.test', subject: 's', body: 'b' });
  });
});
