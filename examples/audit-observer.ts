// An observer that writes one audit line per event. Observers never change the outcome: a
// throwing observer is reported through onObserverError and execution goes on.
import { OperatorRuntime } from 'warrant';
import { directoryModule } from './capabilities.js';

const runtime = new OperatorRuntime({
  onObserverError: (error) => console.log(`observer failed (ignored): ${String(error)}`),
});
runtime.use(directoryModule);

const unsubscribe = runtime.subscribe('*', (event) => {
  const step = event.stepId === undefined ? '' : ` step=${event.stepId}`;
  console.log(`audit ${event.timestamp} job=${event.jobId} ${event.type}${step}`);
});
runtime.subscribe('job.failed', () => {
  throw new Error('pager unavailable');
});

await runtime.executePlan({
  version: '1.0',
  goal: 'Look up Ada, then try to mail her',
  steps: [
    { id: 'who', capability: 'user.lookup', input: { id: 'ada' } },
    {
      id: 'mail',
      capability: 'mail.send',
      input: { to: { $ref: 'steps.who.result.email' }, subject: 'Hi' },
    },
  ],
});
unsubscribe();
