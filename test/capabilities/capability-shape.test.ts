// The shape checks of use() arguments (src/capabilities/capability-shape.ts), through the public
// runtime: a malformed module or capability is a coded TypeError and registers nothing.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { OperatorRuntime, type Capability, type CapabilityModule } from '../../src/index.js';
import { rawCapability, rawModule, uniqueName } from '../support/runtime-fixtures.js';

const capability = rawCapability;
const module = rawModule;

describe('OperatorRuntime#use()', () => {
  it('checks the module and its manifest', () => {
    const runtime = new OperatorRuntime();
    const name = uniqueName('m');
    const cases: unknown[] = [
      null,
      { capabilities: [] },
      { manifest: { name: '', version: '1', capabilities: [] }, capabilities: [] },
      { manifest: { name: 'x', version: 1, capabilities: [] }, capabilities: [] },
      { manifest: { name: 'x', version: '1', capabilities: 'all' }, capabilities: [] },
      { manifest: { name: 'x', version: '1', capabilities: [] }, capabilities: [capability(name)] },
      {
        manifest: { name: 'x', version: '1', capabilities: [name, 'ghost'] },
        capabilities: [capability(name)],
      },
      { manifest: { name: 'x', version: '1', capabilities: [] }, capabilities: 'none' },
    ];
    for (const candidate of cases) {
      assert.throws(
        () => runtime.use(candidate as CapabilityModule),
        { code: 'CAPABILITY_MODULE_INVALID' },
        JSON.stringify(candidate),
      );
    }
    assert.equal(runtime.describeCapability(name), undefined);
  });

  it('checks every capability definition', () => {
    const runtime = new OperatorRuntime();
    const bad: Partial<Record<keyof Capability, unknown>>[] = [
      { name: '' },
      { version: 2 },
      { description: undefined },
      { risk: 'READ' },
      { execute: 'run' },
      { inputSchema: [] },
      { inputSchema: { a: { type: 'date', required: true, description: '' } } },
      { inputSchema: { a: { type: 'string', required: 'yes', description: '' } } },
      { inputSchema: { a: { type: 'string', required: true } } },
      {
        inputSchema: JSON.parse(
          '{"__proto__": {"type": "string", "required": true, "description": ""}}',
        ) as unknown,
      },
    ];
    for (const overrides of bad) {
      const name = typeof overrides.name === 'string' ? overrides.name : uniqueName('def');
      assert.throws(
        () => runtime.use(module([capability(name, overrides)], [name])),
        { code: 'CAPABILITY_DEFINITION_INVALID' },
        JSON.stringify(overrides),
      );
    }
  });

  it('refuses an inputSchema that is not a plain object: a Map, a Date, an array or a class instance', () => {
    const runtime = new OperatorRuntime();
    class Schema {
      id = { type: 'string', required: true, description: 'id' };
    }
    const field = { type: 'string', required: true, description: 'id' };
    for (const inputSchema of [
      new Map([['id', field]]),
      new Date(0),
      Object.assign([field], { id: field }),
      new Schema(),
      Object.create({ id: field }) as object,
    ]) {
      const name = uniqueName('schema');
      assert.throws(
        () => runtime.use(module([capability(name, { inputSchema })])),
        (error: Error & { code?: string }) => {
          assert.equal(error.code, 'CAPABILITY_DEFINITION_INVALID');
          assert.match(error.message, /inputSchema must be a plain object of field records/);
          return true;
        },
        Object.prototype.toString.call(inputSchema),
      );
      assert.equal(runtime.describeCapability(name), undefined);
    }
    const bare = Object.assign(Object.create(null) as object, { id: field });
    const name = uniqueName('schema.bare');
    runtime.use(module([capability(name, { inputSchema: bare })]));
    assert.deepEqual(runtime.describeCapability(name)?.inputSchema, { id: field });
  });
});
