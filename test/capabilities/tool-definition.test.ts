// The tool definition of a capability (docs/api.md, "Pinned tools"): attached once by whoever made
// the capability object, read by the runtime before each step and by the descriptors; nothing a
// module author writes on a capability object attaches one.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { OperatorRuntime, createCapability } from '../../src/index.js';
import {
  attachToolDefinition,
  hasToolDefinition,
  toolDefinitionOf,
  type ToolDefinition,
} from '../../src/capabilities/tool-definition.js';
import { uniqueName } from '../support/runtime-fixtures.js';

const DIGEST = `sha256:${'a'.repeat(64)}`;

function capability() {
  return createCapability({
    name: uniqueName('tool'),
    version: '1.0.0',
    description: 'a tool',
    risk: 'read',
    execute: () => 'ran',
  });
}

describe('attachToolDefinition(capability, definition)', () => {
  it('attaches a definition to a frozen capability object, once', () => {
    const tool = capability();
    let seen: string | undefined = undefined;
    const definition: ToolDefinition = { pinned: () => Promise.resolve(DIGEST), seen: () => seen };
    assert.equal(toolDefinitionOf(tool), undefined);
    attachToolDefinition(tool, definition);
    assert.equal(toolDefinitionOf(tool), definition);
    assert.throws(() => attachToolDefinition(tool, definition), {
      name: 'TypeError',
      code: 'CAPABILITY_DEFINITION_INVALID',
    });
    seen = DIGEST;
    assert.equal(toolDefinitionOf(tool)?.seen(), DIGEST);
  });

  it('is not read from any field of the object: a copy of a capability has none', () => {
    const tool = capability();
    attachToolDefinition(tool, { pinned: () => Promise.resolve(DIGEST), seen: () => DIGEST });
    assert.equal(toolDefinitionOf({ ...tool }), undefined);
  });
});

describe('hasToolDefinition(name) and the descriptors', () => {
  it('tells the registered capabilities with a definition, whose descriptors show the digest last seen', () => {
    const runtime = new OperatorRuntime({ store: 'memory' });
    const tool = capability();
    const plain = capability();
    let seen: string | undefined = undefined;
    attachToolDefinition(tool, { pinned: () => Promise.resolve(DIGEST), seen: () => seen });
    runtime.use({
      manifest: { name: uniqueName('tools'), version: '1', capabilities: [tool.name, plain.name] },
      capabilities: [tool, plain],
    });
    assert.equal(hasToolDefinition(tool.name), true);
    assert.equal(hasToolDefinition(plain.name), false);
    assert.equal(hasToolDefinition(uniqueName('unknown')), false);
    assert.equal('definitionDigest' in (runtime.describeCapability(tool.name) ?? {}), false);
    seen = DIGEST;
    assert.equal(runtime.describeCapability(tool.name)?.definitionDigest, DIGEST);
    assert.equal('definitionDigest' in (runtime.describeCapability(plain.name) ?? {}), false);
  });
});
