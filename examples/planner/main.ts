// Runs the planner: `npx tsx examples/planner/main.ts`. Offline by default (a scripted model);
// PLANNER_MODEL=<provider>/<model> plans with that model through the AI SDK's gateway (with
// AI_GATEWAY_API_KEY set), or pass any AI SDK provider's model to planAndRun (README.md).
import { createSupportRuntime, planAndRun } from './planner.js';
import { REMINDER_PLAN, scriptedModel } from './scripted-model.js';

const runtime = createSupportRuntime();
try {
  const job = await planAndRun({
    runtime,
    model: process.env.PLANNER_MODEL || scriptedModel([REMINDER_PLAN]),
    goal: 'Remind customer c-42 of their open invoice',
    caller: { id: 'agent-for-ada', scopes: ['support'] },
    approver: { id: 'ops-lead' },
    // A person decides in a real application; this one approves what it is shown.
    approve: () => true,
    log: (line) => console.log(line),
  });
  process.exitCode = job.status === 'completed' ? 0 : 1;
} finally {
  await runtime.close();
}
