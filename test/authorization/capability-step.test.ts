// Typed policies (docs/api.md, "Typed policies"): an authorizer has a `name` in its type, and
// isCapabilityStep narrows `input` to the capability's input type. This file is type-checked by
// `npm run typecheck`: the annotated authorizer and the narrowed reads below compile only with
// the types of this feature.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { z } from 'zod';
import {
  createCapability,
  isCapabilityStep,
  OperatorRuntime,
  type ExecutionAuthorizer,
} from '../../src/index.js';
import { uniqueName } from '../support/runtime-fixtures.js';

const transfer = createCapability({
  name: uniqueName('bank.transfer'),
  version: '2',
  description: 'moves money',
  risk: 'write',
  inputSchema: z.object({ amount: z.number().int(), to: z.string() }),
  execute: ({ input }) => ({ sent: input.amount }),
});
const lookup = createCapability({
  name: uniqueName('bank.lookup'),
  version: '1',
  description: 'reads an account',
  risk: 'read',
  inputSchema: { account: { type: 'string', required: true, description: 'the account' } },
  execute: ({ input }) => ({ account: input.account }),
});

const limits: ExecutionAuthorizer = {
  name: 'limits',
  authorize(context) {
    if (isCapabilityStep(context, transfer)) {
      // `input` is { amount: number; to: string } here, with no cast.
      const { amount, to } = context.input;
      return amount <= 100
        ? { decision: 'allow' }
        : { decision: 'deny', reason: `${amount} to ${to} is over 100` };
    }
    if (isCapabilityStep(context, lookup))
      return context.input.account.startsWith('own-')
        ? { decision: 'allow' }
        : { decision: 'deny', reason: 'not your account' };
    return { decision: 'deny', reason: 'unknown capability' };
  },
};

describe('isCapabilityStep', () => {
  it('narrows per capability and the record shows the authorizer name', async () => {
    const runtime = new OperatorRuntime({ authorizer: limits }).use({
      manifest: {
        name: uniqueName('bank'),
        version: '1',
        capabilities: [transfer.name, lookup.name],
      },
      capabilities: [transfer, lookup],
    });
    const job = await runtime.executePlan({
      version: '1.0',
      steps: [
        { id: 'small', capability: transfer.name, input: { amount: 5, to: 'bob' } },
        { id: 'mine', capability: lookup.name, input: { account: 'own-1' } },
        { id: 'big', capability: transfer.name, input: { amount: 500, to: 'eve' } },
      ],
    });
    assert.deepEqual(
      job.steps.map((step) => [step.status, step.decision?.authorizer, step.decision?.reason]),
      [
        ['completed', 'limits', undefined],
        ['completed', 'limits', undefined],
        ['failed', 'limits', '500 to eve is over 100'],
      ],
    );
    await runtime.close();
  });

  it('is false for another name or another version of the name', () => {
    const context = (name: string, version: string) => ({
      jobId: 'j',
      stepId: 's',
      capability: { name, version, risk: 'write' as const },
      input: {},
    });
    assert.equal(isCapabilityStep(context(transfer.name, '2'), transfer), true);
    assert.equal(isCapabilityStep(context(transfer.name, '1'), transfer), false);
    assert.equal(isCapabilityStep(context(lookup.name, '2'), transfer), false);
  });
});
