// Introspection answers which capabilities are registered; choosing the relevant one is the
// application's job (here a naive keyword match stands in for a planner); authorization still
// decides whether it may run. Introspection calls no authorizer and no capability.
import { OperatorRuntime, type CapabilityDescriptor, type ExecutionPlan } from 'warrant';
import { directoryModule } from './capabilities.js';

const runtime = new OperatorRuntime();
runtime.use(directoryModule);

function selectCapability(
  request: string,
  inventory: CapabilityDescriptor[],
): CapabilityDescriptor | undefined {
  const words = request.toLowerCase().split(/\W+/);
  return inventory.find((capability) =>
    words.some((word) => word.length > 3 && capability.description.toLowerCase().includes(word)),
  );
}

const request = 'find the user with id ada';
const chosen = selectCapability(request, runtime.listCapabilities());
if (chosen === undefined) throw new Error('nothing fits');
console.log(`selected ${chosen.name}@${chosen.version} for "${request}"`);
console.log(`its fields: ${Object.keys(chosen.inputSchema).join(', ')}`);

// Pin the version seen during selection: admission refuses the plan if it changed since.
const plan: ExecutionPlan = {
  version: '1.0',
  goal: request,
  steps: [
    {
      id: 'answer',
      capability: chosen.name,
      capabilityVersion: chosen.version,
      input: { id: 'ada' },
    },
  ],
};
const job = await runtime.executePlan(plan);
console.log(`job ${job.status}: ${JSON.stringify(job.result)}`);
