// defineModule derives a module's manifest from its capabilities (docs/api.md, "defineModule").
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  OperatorRuntime,
  createCapability,
  defineModule,
  type Capability,
} from '../../src/index.js';
import { uniqueName } from '../support/runtime-fixtures.js';

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
