// The full JSON Schema of a capability's input, for MCP tools (docs/api.md, "Input schemas").
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { StandardSchemaV1 } from '@standard-schema/spec';
import { z } from 'zod';
import { capabilityInputJsonSchema } from '../../src/capabilities/json-schema.js';
import { OperatorRuntime, createCapability } from '../../src/index.js';
import { uniqueName } from '../support/runtime-fixtures.js';

function add(inputSchema: StandardSchemaV1): string {
  const name = uniqueName('json');
  new OperatorRuntime().use({
    manifest: { name: uniqueName('module'), version: '1', capabilities: [name] },
    capabilities: [
      createCapability({
        name,
        version: '1',
        description: 'd',
        risk: 'read',
        inputSchema,
        execute: ({ input }) => input,
      }),
    ],
  });
  return name;
}

const handMade: StandardSchemaV1 = {
  '~standard': { version: 1, vendor: 'test', validate: (value) => ({ value }) },
};

describe('capabilityInputJsonSchema(name)', () => {
  const lookup = z.object({ id: z.string(), limit: z.number().int().default(10) });

  it("capabilityInputJsonSchema gives the vendor's JSON Schema, else the field record's", () => {
    const name = add(lookup);
    const schema = capabilityInputJsonSchema(name);
    assert.equal(schema?.type, 'object');
    assert.deepEqual((schema?.properties as Record<string, unknown>).limit, {
      type: 'integer',
      minimum: Number.MIN_SAFE_INTEGER,
      maximum: Number.MAX_SAFE_INTEGER,
      default: 10,
    });
    (schema as { type: string }).type = 'changed';
    assert.equal(capabilityInputJsonSchema(name)?.type, 'object', 'a fresh copy each call');
    assert.deepEqual(capabilityInputJsonSchema(add(handMade)), {
      type: 'object',
      properties: {},
    });
    const fields = uniqueName('fields');
    new OperatorRuntime().use({
      manifest: { name: uniqueName('module'), version: '1', capabilities: [fields] },
      capabilities: [
        createCapability({
          name: fields,
          version: '1',
          description: 'field record',
          risk: 'read',
          inputSchema: { id: { type: 'string', required: true, description: 'Id' } },
          execute: ({ input }) => input.id,
        }),
      ],
    });
    assert.deepEqual(capabilityInputJsonSchema(fields), {
      type: 'object',
      properties: { id: { type: 'string', description: 'Id' } },
      required: ['id'],
    });
    assert.equal(capabilityInputJsonSchema(uniqueName('unknown')), undefined);
  });
});
