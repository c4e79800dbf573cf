import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { OperatorRuntime } from '../../src/index.js';
import { recordEvents, recordingAuthorizer, uniqueName } from '../support/runtime-fixtures.js';

describe('introspection: listCapabilities() and describeCapability()', () => {
  const authorizer = recordingAuthorizer();
  const runtime = new OperatorRuntime({ authorizer });
  const events = recordEvents(runtime);
  let invoked = 0;
  const first = uniqueName('intro.First');
  const second = uniqueName('intro.second');
  runtime.use({
    manifest: { name: 'intro', version: '1', capabilities: [first, second] },
    capabilities: [
      {
        name: first,
        version: '1.2.3',
        description: 'first one',
        risk: 'write',
        inputSchema: { id: { type: 'string', required: true, description: 'identifier' } },
        execute: () => invoked++,
      },
      {
        name: second,
        version: '',
        description: 'no schema',
        risk: 'read',
        execute: () => invoked++,
      },
    ],
  });

  it('lists descriptors in registration order with exactly the five keys, field records with exactly three', () => {
    const listed = runtime
      .listCapabilities()
      .filter((descriptor) => descriptor.name === first || descriptor.name === second);
    assert.deepEqual(listed, [
      {
        name: first,
        version: '1.2.3',
        description: 'first one',
        risk: 'write',
        inputSchema: { id: { type: 'string', required: true, description: 'identifier' } },
      },
      { name: second, version: '', description: 'no schema', risk: 'read', inputSchema: {} },
    ]);
    assert.deepEqual(Object.keys(listed[0] ?? {}), [
      'name',
      'version',
      'description',
      'risk',
      'inputSchema',
    ]);
    assert.deepEqual(Object.keys(listed[0]?.inputSchema.id ?? {}), [
      'type',
      'required',
      'description',
    ]);
  });

  it('returns fresh, detached, mutable snapshots every call', async () => {
    const one = runtime.describeCapability(first);
    const two = runtime.describeCapability(first);
    assert.ok(one && two);
    assert.notEqual(one, two);
    assert.notEqual(one.inputSchema, two.inputSchema);
    assert.notEqual(one.inputSchema.id, two.inputSchema.id);
    assert.equal(
      Object.isFrozen(one) ||
        Object.isFrozen(one.inputSchema) ||
        Object.isFrozen(one.inputSchema.id),
      false,
    );
    one.risk = 'read';
    one.version = '9';
    (one.inputSchema.id as { required: boolean }).required = false;
    delete (one.inputSchema as Record<string, unknown>).id;
    const listed = runtime.listCapabilities();
    listed.length = 0;
    assert.deepEqual(runtime.describeCapability(first)?.inputSchema.id, {
      type: 'string',
      required: true,
      description: 'identifier',
    });
    assert.equal(runtime.describeCapability(first)?.risk, 'write');
    const job = await new OperatorRuntime({ authorizer: recordingAuthorizer() })
      .executePlan({ version: '1.0', steps: [{ id: 's', capability: first, input: {} }] })
      .catch((error: { issues: { code: string }[] }) => error.issues[0]?.code);
    assert.equal(job, 'REQUIRED_INPUT_MISSING', 'validation still uses the registered schema');
  });

  it('looks names up exactly (case-sensitive) and versions exactly, with "" as a supplied version', () => {
    assert.equal(runtime.describeCapability(first.toLowerCase()), undefined);
    assert.equal(runtime.describeCapability(first, '1.2.3')?.name, first);
    assert.equal(runtime.describeCapability(first, '1.2'), undefined);
    assert.equal(runtime.describeCapability(first, ''), undefined);
    assert.equal(runtime.describeCapability(second, '')?.name, second);
    assert.equal(runtime.describeCapability(second, undefined)?.name, second);
    assert.equal(runtime.describeCapability('unknown.capability'), undefined);
    assert.doesNotThrow(() => runtime.describeCapability(42 as never, {} as never));
    assert.equal(runtime.describeCapability(null as never), undefined);
  });

  it('invokes no authorizer and no capability, and publishes no event', () => {
    runtime.listCapabilities();
    runtime.describeCapability(first);
    assert.equal(authorizer.calls.length, 0);
    assert.equal(invoked, 0);
    assert.equal(events.length, 0);
  });
});
