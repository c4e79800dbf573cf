// Quick start: register capabilities, run a two-step plan whose second step reads the first
// step's result, and see the default policy deny a write. Run: npm run quickstart
import { OperatorRuntime, isPlanAdmissionError, type ExecutionPlan } from 'warrant';
import { directoryModule } from './capabilities.js';

const runtime = new OperatorRuntime();
runtime.use(directoryModule);

console.log('Registered capabilities:');
for (const capability of runtime.listCapabilities()) {
  console.log(
    `  ${capability.name}@${capability.version} (${capability.risk}): ${capability.description}`,
  );
}

const plan: ExecutionPlan = {
  version: '1.0',
  goal: 'Greet Ada by e-mail',
  steps: [
    { id: 'lookup', capability: 'user.lookup', input: { id: 'ada' } },
    {
      id: 'greet',
      capability: 'mail.send',
      capabilityVersion: '2.1.0',
      input: { to: { $ref: 'steps.lookup.result.email' }, subject: 'Hello' },
    },
  ],
};

// The default policy allows reads and denies writes: the second step is denied.
const denied = await runtime.executePlan(plan);
console.log(`\nWith the default policy: job ${denied.status}: ${denied.error}`);
for (const step of denied.steps) console.log(`  ${step.id}: ${step.status}`);

// A host that approves this write configures an authorizer; only an own 'allow' lets it run.
const approving = new OperatorRuntime({
  authorizer: {
    authorize: ({ capability, caller }) =>
      capability.risk === 'read' || caller?.scopes?.includes('mail:send') === true
        ? { decision: 'allow' }
        : { decision: 'deny', reason: 'mail:send scope required' },
  },
});
const job = await approving.executePlan(plan, { caller: { id: 'ops', scopes: ['mail:send'] } });
console.log(`\nWith an authorizer granting mail:send: job ${job.status}`);
console.log('  result:', JSON.stringify(job.result));
console.log('  events:', job.events.map((event) => event.type).join(' -> '));

// A plan that breaks the rules is refused before any job exists.
try {
  await runtime.executePlan({
    version: '1.0',
    steps: [
      { id: 'a', capability: 'user.lookup', input: {} },
      { id: 'a', capability: 'no.such.capability' },
    ],
  });
} catch (error) {
  if (!isPlanAdmissionError(error)) throw error;
  console.log(`\nRefused at admission (${error.code}):`);
  for (const issue of error.issues) console.log(`  ${issue.code}: ${issue.message}`);
}
