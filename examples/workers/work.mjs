// A capability module for trying workers (docs/guide/stores.md, "Many machines"): `work.step` takes
// `ms` milliseconds (its signal cancels it) and answers which process ran it. Written with
// createCapability, as the README asks of every capability: `execute` takes one object,
// `{ input, context }`, and the capability logs its lifecycle on the runtime's logger.
import { createCapability, defineModule } from 'warrant';

const step = createCapability({
  name: 'work.step',
  version: '1.0.0',
  description: 'Works for ms milliseconds and says which process did',
  risk: 'read',
  inputSchema: {
    ms: { type: 'number', required: true, description: 'How long to work' },
  },
  execute: ({ input, context }) =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => resolve({ pid: process.pid, ms: input.ms }), input.ms);
      context.signal.addEventListener('abort', () => {
        clearTimeout(timer);
        reject(context.signal.reason);
      });
    }),
});

export default defineModule('workers-example', '1.0.0', [step]);
