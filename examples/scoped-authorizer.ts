// A custom authorizer that decides from the caller's scopes and the step's risk.
import { OperatorRuntime, type ExecutionAuthorizer } from 'warrant';
import { directoryModule } from './capabilities.js';

const scopedAuthorizer: ExecutionAuthorizer = {
  authorize({ capability, caller, input }) {
    const scopes = caller?.scopes ?? [];
    if (capability.risk === 'read') return { decision: 'allow' };
    if (capability.name === 'mail.send' && scopes.includes('mail:send')) {
      // The input is the resolved object the capability will receive.
      const to = (input as { to?: unknown }).to;
      if (typeof to === 'string' && to.endsWith('@example.com')) return { decision: 'allow' };
      return { decision: 'deny', reason: 'mail.send is limited to example.com addresses' };
    }
    return { decision: 'deny', reason: `${capability.name} needs a scope this caller lacks` };
  },
};

const runtime = new OperatorRuntime({ authorizer: scopedAuthorizer });
runtime.use(directoryModule);

const plan = {
  version: '1.0' as const,
  goal: 'Notify Alan',
  steps: [
    { id: 'who', capability: 'user.lookup', input: { id: 'alan' } },
    {
      id: 'mail',
      capability: 'mail.send',
      input: { to: { $ref: 'steps.who.result.email' }, subject: 'Hi' },
    },
  ],
};

for (const caller of [
  { id: 'intern', scopes: ['users:read'] },
  { id: 'ops', scopes: ['users:read', 'mail:send'] },
]) {
  const job = await runtime.executePlan(plan, { caller });
  console.log(`${caller.id}: ${job.status}${job.error === undefined ? '' : ` (${job.error})`}`);
}
