// One calling convention per form (docs/api.md, "Calling conventions"): use() refuses a plain
// capability object written in createCapability's `execute({ input, context })` form.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { destructuresExecution } from '../../src/capabilities/calling-convention.js';
import { OperatorRuntime, createCapability, type Capability } from '../../src/index.js';
import { uniqueName } from '../support/runtime-fixtures.js';

function plain(execute: Capability['execute'], extra: Partial<Capability> = {}): Capability {
  return {
    name: uniqueName('plain'),
    version: '1',
    description: 'a plain capability object',
    risk: 'read',
    ...extra,
    execute,
  };
}

function useOne(runtime: OperatorRuntime, capability: Capability): void {
  runtime.use({
    manifest: { name: uniqueName('module'), version: '1', capabilities: [capability.name] },
    capabilities: [capability],
  });
}

describe('use(): the createCapability calling convention on a plain object', () => {
  it('is refused with CAPABILITY_DEFINITION_INVALID, and nothing is registered', () => {
    const runtime = new OperatorRuntime();
    const forms: Capability[] = [
      plain(({ input }: { input: unknown }) => input),
      plain(async ({ input, context }: { input: unknown; context: unknown }) => [input, context]),
      {
        ...plain(() => 0),
        execute({ input }: { input: unknown }) {
          return input;
        },
      },
      plain(function named({ input: renamed }: { input: unknown }) {
        return renamed;
      }),
    ];
    for (const capability of forms) {
      assert.throws(() => useOne(runtime, capability), {
        code: 'CAPABILITY_DEFINITION_INVALID',
        message:
          /execute takes \(\{ input, context \}\), the createCapability\(\) form, but use\(\) calls a capability object as execute\(input, context\); wrap the definition in createCapability\(\)$/,
      });
      assert.equal(runtime.describeCapability(capability.name), undefined);
    }
  });

  it('leaves the (input, context) form, other patterns and createCapability alone', async () => {
    const runtime = new OperatorRuntime();
    const accepted: Capability[] = [
      plain((input: unknown) => input),
      plain(({ id }: { id: string }) => id),
      // The input itself has a field called `input`: destructuring it is right.
      plain(({ input }: { input: unknown }) => input, {
        inputSchema: { input: { type: 'string', required: true, description: 'text' } },
      }),
      createCapability({
        name: uniqueName('made'),
        version: '1',
        description: 'made by createCapability',
        risk: 'read',
        lifecycleLogging: false,
        inputSchema: { id: { type: 'string', required: true, description: 'id' } },
        execute: ({ input }) => input.id,
      }),
    ];
    for (const capability of accepted) useOne(runtime, capability);
    const made = accepted[3] as Capability;
    const job = await runtime.executePlan({
      version: '1.0',
      steps: [{ id: 's', capability: made.name, input: { id: 'ada' } }],
    });
    assert.equal(job.result, 'ada');
  });

  it('never throws on functions whose source cannot be read', () => {
    const revoked = Proxy.revocable(() => 0, {});
    revoked.revoke();
    assert.equal(destructuresExecution(revoked.proxy), false);
    assert.equal(destructuresExecution((() => 0).bind(null)), false);
  });
});
