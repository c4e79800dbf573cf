// Shared by the Standard Schema input tests (test/capabilities/standard-input.test.ts and
// step-input.test.ts): a hand-made schema, and a runtime whose capabilities record their input.
import type { StandardSchemaV1 } from '@standard-schema/spec';
import {
  OperatorRuntime,
  createCapability,
  type CapabilityAuthorizationContext,
  type ExecutionPlan,
} from '../../src/index.js';
import { uniqueName } from './runtime-fixtures.js';

/** A Standard Schema made by hand: `validate` decides everything. */
export function handMade(validate: (value: unknown) => unknown): StandardSchemaV1 {
  return {
    '~standard': { version: 1, vendor: 'test', validate } as StandardSchemaV1['~standard'],
  };
}

export function setup(options: { timeoutMs?: number } = {}) {
  const asked: CapabilityAuthorizationContext[] = [];
  const received: unknown[] = [];
  const runtime = new OperatorRuntime({
    authorizer: {
      authorize: (context) => {
        asked.push(context);
        return { decision: 'allow' };
      },
    },
  });
  const add = (inputSchema: StandardSchemaV1 | undefined): string => {
    const name = uniqueName('schema');
    runtime.use({
      manifest: { name: uniqueName('module'), version: '1', capabilities: [name] },
      capabilities: [
        createCapability({
          name,
          version: '1.0.0',
          description: 'records its input',
          risk: 'read',
          lifecycleLogging: false,
          ...(options.timeoutMs !== undefined && { timeoutMs: options.timeoutMs }),
          ...(inputSchema !== undefined && { inputSchema }),
          execute: ({ input }) => {
            received.push(input);
            return input;
          },
        }),
      ],
    });
    return name;
  };
  return { runtime, asked, received, add };
}

export function plan(...steps: ExecutionPlan['steps']): ExecutionPlan {
  return { version: '1.0', steps };
}
