// runtime.planSchema() (issue 48, docs/api.md "runtime.planSchema"): the JSON Schema
// of an admissible plan, checked with the JSON Schema engine the official MCP client ships
// (ajv, draft 2020-12) against what admission then says of the same plans.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/client/validators/ajv';
import { z } from 'zod';
import {
  isPlanAdmissionError,
  type CapabilityDescriptor,
  type ExecutionPlan,
  type OperatorRuntime,
} from '../../src/index.js';
import { register, runtimeWith } from '../support/runtime-fixtures.js';
import { handMade } from '../support/standard-schema-fixtures.js';

type Schema = Record<string, unknown>;

const validator = new AjvJsonSchemaValidator();

function validate(schema: Schema, plan: unknown): boolean {
  return validator.getValidator(schema as never)(plan).valid;
}

/** Whether admission accepts the plan (previewPlan admits as executePlan does, running nothing). */
async function admitted(runtime: OperatorRuntime, plan: unknown): Promise<string[]> {
  try {
    await runtime.previewPlan(plan as ExecutionPlan);
    return [];
  } catch (error) {
    assert.ok(isPlanAdmissionError(error), String(error));
    return error.issues.map((issue) => issue.code);
  }
}

/** The step branches of a schema. */
function branches(schema: Schema): Schema[] {
  const steps = (schema.properties as Record<string, Schema>).steps as Schema;
  return ((steps.items as Schema).oneOf as Schema[]) ?? [];
}

describe('runtime.planSchema()', () => {
  const runtime = runtimeWith({ planVersions: ['1.0', '2.0'] });
  const [lookup, send, typed, free] = register(
    runtime,
    {
      description: 'Finds a user',
      inputSchema: {
        user: { type: 'string', required: true, description: 'The user id' },
        limit: { type: 'number', required: false, description: 'At most' },
      },
      execute: ({ input }) => ({ email: `${(input as { user: string }).user}@example.com` }),
    },
    {
      version: '2.1.0',
      risk: 'write',
      description: 'Sends mail',
      inputSchema: {
        to: { type: 'string', required: true, description: 'Recipient' },
        tags: { type: 'array', required: false, description: 'Tags' },
      },
      execute: () => ({ sent: true }),
    },
    {
      description: 'Typed by zod',
      inputSchema: z.object({ query: z.string().min(2), size: z.number().int().optional() }),
      execute: () => 'ok',
    },
    { description: 'No input schema', execute: () => 'ok' },
  ) as [string, string, string, string];
  const ours = new Set([lookup, send, typed, free]);
  const include = (descriptor: CapabilityDescriptor) => ours.has(descriptor.name);

  it('is a draft 2020-12 schema: version const, goal, one branch per capability, in registration order', () => {
    const schema = runtime.planSchema({ include });
    assert.equal(schema.$schema, 'https://json-schema.org/draft/2020-12/schema');
    // The 2020-12 engine compiles it (every pointer resolves).
    assert.doesNotThrow(() => validator.getValidator(schema as never));
    const properties = schema.properties as Record<string, Schema>;
    assert.deepEqual(properties.version, { const: '2.0' });
    assert.equal(properties.goal?.type, 'string');
    assert.deepEqual(schema.required, ['version', 'steps']);
    assert.deepEqual(
      branches(schema).map((branch) => {
        const step = branch.properties as Record<string, Schema>;
        return [step.capability?.const, step.capabilityVersion?.const, branch.required];
      }),
      [
        [lookup, '1.0.0', ['id', 'capability', 'input']],
        [send, '2.1.0', ['id', 'capability', 'input']],
        [typed, '1.0.0', ['id', 'capability', 'input']],
        [free, '1.0.0', ['id', 'capability']],
      ],
    );
  });

  it('describes plans admission accepts, a result reference allowed in every input field', async () => {
    const schema = runtime.planSchema({ include });
    const plan = {
      version: '2.0',
      goal: 'Mail a user',
      steps: [
        { id: 'who', capability: lookup, input: { user: 'ada' } },
        {
          id: 'mail',
          capability: send,
          capabilityVersion: '2.1.0',
          input: { to: { $ref: 'steps.who.result.email' }, tags: ['a'] },
        },
        { id: 'find', capability: typed, input: { query: { $ref: 'steps.who.result' } } },
        { id: 'any', capability: free, input: { whatever: [1] }, reason: 'why not' },
      ],
    };
    assert.equal(validate(schema, plan), true);
    assert.deepEqual(await admitted(runtime, plan), []);
  });

  it('refuses what strict 2.0 admission refuses: an unknown step key, an undeclared field, an empty required string, a wrong version pin', async () => {
    const schema = runtime.planSchema({ include });
    const step = { id: 'a', capability: lookup, input: { user: 'ada' } };
    const cases: [unknown, string][] = [
      [{ ...step, version: '1.0.0' }, 'UNKNOWN_STEP_FIELD'],
      [{ ...step, input: { user: 'ada', extra: true } }, 'UNDECLARED_INPUT_FIELD'],
      [{ ...step, input: { user: '' } }, 'REQUIRED_INPUT_MISSING'],
      [{ ...step, input: { user: 3 } }, 'INPUT_TYPE_MISMATCH'],
      [{ ...step, capabilityVersion: '9.9.9' }, 'CAPABILITY_VERSION_MISMATCH'],
      [{ id: 'a', capability: typed, input: { query: 'x' } }, 'INPUT_INVALID'],
      [{ ...step, input: { user: { $ref: 'not a reference' } } }, 'INVALID_RESULT_REFERENCE'],
    ];
    for (const [bad, code] of cases) {
      const plan = { version: '2.0', steps: [bad] };
      assert.equal(validate(schema, plan), false, JSON.stringify(bad));
      assert.deepEqual(await admitted(runtime, plan), [code], JSON.stringify(bad));
    }
    // What no schema says, admission reports: a duplicate id.
    const twice = { version: '2.0', steps: [step, step] };
    assert.equal(validate(schema, twice), true);
    assert.deepEqual(await admitted(runtime, twice), ['DUPLICATE_STEP_ID']);
  });

  it('describes a 1.0 plan without additionalProperties where 1.0 admission is not strict', async () => {
    const schema = runtime.planSchema({ include, version: '1.0' });
    assert.deepEqual((schema.properties as Record<string, Schema>).version, { const: '1.0' });
    const [first] = branches(schema);
    assert.equal(first?.additionalProperties, undefined);
    assert.equal(
      (first?.properties as Record<string, Schema>).input?.additionalProperties,
      undefined,
    );
    const plan = {
      version: '1.0',
      steps: [{ id: 'a', capability: lookup, version: 'x', input: { user: 'ada', extra: 1 } }],
    };
    assert.equal(validate(schema, plan), true);
    assert.deepEqual(await admitted(runtime, plan), []);
    // A runtime admitting 1.0 only describes 1.0 plans.
    const v1 = runtimeWith();
    assert.deepEqual((v1.planSchema({ include }).properties as Record<string, Schema>).version, {
      const: '1.0',
    });
  });

  it('is deterministic and fresh: the same bytes on every call, a new object each time', () => {
    const first = runtime.planSchema();
    const text = JSON.stringify(first);
    (first.properties as Record<string, unknown>).steps = 'changed';
    assert.equal(JSON.stringify(runtime.planSchema()), text);
    assert.notEqual(runtime.planSchema(), runtime.planSchema());
    assert.equal(JSON.stringify(runtimeWith({ planVersions: ['2.0', '1.0'] }).planSchema()), text);
    const filtered = runtime.planSchema({ include });
    (branches(filtered)[0] as Schema).description = 'changed';
    assert.deepEqual(runtime.planSchema({ include }), runtime.planSchema({ include }));
    assert.notEqual(branches(runtime.planSchema({ include }))[0]?.description, 'changed');
  });

  it('follows the registry: a capability registered later is in the next schema', () => {
    const before = branches(runtime.planSchema()).length;
    const [later] = register(runtime, { execute: () => 'later' });
    const after = branches(runtime.planSchema());
    assert.equal(after.length, before + 1);
    assert.equal((after.at(-1)?.properties as Record<string, Schema>).capability?.const, later);
  });

  it('offers no step when include keeps no capability', () => {
    const schema = runtime.planSchema({ include: () => false });
    const steps = (schema.properties as Record<string, Schema>).steps as Schema;
    assert.equal(steps.items, false);
    assert.equal(
      validate(schema, { version: '2.0', steps: [{ id: 'a', capability: lookup }] }),
      false,
    );
  });

  it("keeps a vendor schema's own pointers working: moved with it under $defs", () => {
    const recursive = handMade((value) => ({ value }));
    // A vendor JSON Schema that points inside itself, as a recursive schema's converter writes.
    Object.assign(recursive['~standard'], {
      jsonSchema: {
        input: () => ({
          $schema: 'https://json-schema.org/draft/2020-12/schema',
          $id: 'urn:example:tree',
          type: 'object',
          properties: { root: { $ref: '#/$defs/node' } },
          required: ['root'],
          $defs: {
            node: {
              type: 'object',
              properties: {
                name: { type: 'string' },
                children: { type: 'array', items: { $ref: '#/$defs/node' } },
              },
              required: ['name'],
            },
          },
        }),
      },
    });
    const [tree] = register(runtime, { inputSchema: recursive, execute: () => 'ok' }) as [string];
    const schema = runtime.planSchema({ include: (descriptor) => descriptor.name === tree });
    const input = (branches(schema)[0]?.properties as Record<string, Schema>).input;
    assert.deepEqual(input, { $ref: `#/$defs/${encodeURIComponent(`input:${tree}`)}` });
    const plan = (root: unknown) => ({
      version: '2.0',
      steps: [{ id: 't', capability: tree, input: { root } }],
    });
    assert.equal(validate(schema, plan({ name: 'a', children: [{ name: 'b' }] })), true);
    assert.equal(validate(schema, plan({ name: 'a', children: [{ name: 7 }] })), false);
    assert.equal(validate(schema, plan({ $ref: 'steps.x.result' })), true);
  });

  it('refuses malformed options with PLAN_SCHEMA_OPTIONS_INVALID', () => {
    const v1 = runtimeWith();
    for (const [target, options, message] of [
      [runtime, null, /options must be an object, got null/],
      [runtime, 'all', /options must be an object/],
      [runtime, { include: true }, /options.include must be a function, got true/],
      [
        runtime,
        { version: '3.0' },
        /options.version must be a plan version this runtime admits \("1.0", "2.0"\), got "3.0"/,
      ],
      [v1, { version: '2.0' }, /admits \("1.0"\), got "2.0"/],
    ] as const) {
      assert.throws(() => target.planSchema(options as never), {
        name: 'TypeError',
        code: 'PLAN_SCHEMA_OPTIONS_INVALID',
        message,
      });
    }
  });
});

describe('runtime.planSchema() and bounds (docs/api.md, "Bounds")', () => {
  const runtime = runtimeWith({ planVersions: ['1.0', '2.0'] });
  const [pay, free] = register(
    runtime,
    {
      description: 'Pays',
      inputSchema: {
        amount: { type: 'number', required: true, description: 'How much' },
        to: { type: 'string', required: false, description: 'Whom' },
      },
      execute: () => 'paid',
    },
    { description: 'No input schema', execute: () => 'ok' },
  ) as [string, string];
  const ours = new Set([pay, free]);
  const include = (descriptor: CapabilityDescriptor) => ours.has(descriptor.name);

  it('describes bounds on 2.0 steps only: the declared fields of a field record, any field otherwise', () => {
    const schema = runtime.planSchema({ include });
    const [payBranch, freeBranch] = branches(schema);
    const payBounds = (payBranch?.properties as Record<string, Schema>).bounds as Schema;
    assert.deepEqual(Object.keys(payBounds.properties as Schema), ['amount', 'to']);
    assert.equal(payBounds.additionalProperties, false);
    const freeBounds = (freeBranch?.properties as Record<string, Schema>).bounds as Schema;
    assert.deepEqual(freeBounds.additionalProperties, { $ref: '#/$defs/bound' });
    const bound = (schema.$defs as Record<string, Schema>).bound as Schema;
    assert.deepEqual(Object.keys(bound.properties as Schema).sort(), [
      'const',
      'enum',
      'exclusiveMaximum',
      'exclusiveMinimum',
      'items',
      'maxItems',
      'maxLength',
      'maximum',
      'minLength',
      'minimum',
      'pattern',
      'properties',
      'required',
      'type',
    ]);
    const old = runtime.planSchema({ include, version: '1.0' });
    assert.equal((old.$defs as Schema).bound, undefined);
    for (const branch of branches(old))
      assert.equal((branch.properties as Schema).bounds, undefined);
  });

  it('agrees with admission on bounds: accepted, an unknown keyword, an undeclared field, a wrong value type', async () => {
    const schema = runtime.planSchema({ include });
    const step = { id: 'p', capability: pay, input: { amount: 5 } };
    const accepted = {
      version: '2.0',
      steps: [
        {
          ...step,
          bounds: {
            amount: { type: 'number', minimum: 0, maximum: 100 },
            to: { pattern: '^[a-z]+$', maxLength: 20, enum: ['ada', 'bob'] },
          },
        },
        {
          id: 'f',
          capability: free,
          bounds: { lines: { maxItems: 2, items: { required: ['sku'], properties: { sku: {} } } } },
        },
      ],
    };
    assert.equal(validate(schema, accepted), true);
    assert.deepEqual(await admitted(runtime, accepted), []);
    for (const bounds of [
      { amount: { format: 'int' } },
      { ammount: { maximum: 1 } },
      { amount: { maximum: '100' } },
      { amount: { maxItems: -1 } },
      { amount: { items: { minItems: 1 } } },
      { to: { pattern: 'a'.repeat(1_001) } },
    ]) {
      const plan = { version: '2.0', steps: [{ ...step, bounds }] };
      assert.equal(validate(schema, plan), false, JSON.stringify(bounds));
      assert.deepEqual(await admitted(runtime, plan), ['BOUNDS_INVALID'], JSON.stringify(bounds));
    }
  });
});
