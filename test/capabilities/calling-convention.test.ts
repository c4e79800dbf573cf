// One calling convention per form (docs/api.md, "Calling conventions"): use() refuses a plain
// capability object written in createCapability's `execute({ input, context })` form, and
// defineModule derives the manifest from the capabilities.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { destructuresExecution } from '../../src/capabilities/calling-convention.js';
import {
  OperatorRuntime,
  createCapability,
  defineModule,
  type Capability,
} from '../../src/index.js';
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

describe('defineModule(name, version, capabilities)', () => {
  const make = () =>
    createCapability({
      name: uniqueName('defined'),
      version: '1',
      description: 'd',
      risk: 'read',
      lifecycleLogging: false,
      execute: () => 'ran',
    });

  it("derives the manifest from the capabilities' names; use() registers it", async () => {
    const first = make();
    const second = make();
    const module = defineModule('defined-module', '2.0.0', [first, second]);
    assert.deepEqual(module.manifest, {
      name: 'defined-module',
      version: '2.0.0',
      capabilities: [first.name, second.name],
    });
    const runtime = new OperatorRuntime();
    runtime.use(module);
    assert.equal(runtime.describeCapability(second.name)?.name, second.name);
    const job = await runtime.executePlan({
      version: '1.0',
      steps: [{ id: 's', capability: first.name }],
    });
    assert.equal(job.result, 'ran');
  });

  it('keeps explicit manifests valid', () => {
    const capability = make();
    new OperatorRuntime().use({
      manifest: { name: 'explicit', version: '1', capabilities: [capability.name] },
      capabilities: [capability],
    });
  });

  it('refuses what has no name with CAPABILITY_MODULE_INVALID', () => {
    const cases: [unknown, unknown, unknown, RegExp][] = [
      ['', '1', [], /name must be a non-empty string/],
      ['m', 1, [], /version must be a string/],
      ['m', '1', 'nope', /capabilities must be an array/],
      ['m', '1', [{ version: '1' }], /capabilities\[0\] must be a capability with a string name/],
      [
        'm',
        '1',
        [
          {
            get name(): never {
              throw new Error('name boom');
            },
          },
        ],
        /capabilities\[0\]\.name could not be read \(name boom\)/,
      ],
    ];
    for (const [name, version, capabilities, message] of cases) {
      assert.throws(
        () =>
          defineModule(name as string, version as string, capabilities as readonly Capability[]),
        { code: 'CAPABILITY_MODULE_INVALID', message },
      );
    }
  });
});
