// docs/api.md, "Policy as code: Cedar": the schema of the registered capabilities and the check
// of policies against it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cedarSchema, validateCedarPolicies } from '../../src/index.js';
import { loadCedar } from '../../src/policy/cedar-wasm.cjs';
import { register, runtimeWith } from '../support/runtime-fixtures.js';

const runtime = runtimeWith();
const [mail, note] = register(
  runtime,
  {
    risk: 'write',
    inputSchema: {
      to: { type: 'string', required: true, description: 'recipient' },
      urgent: { type: 'boolean', required: false, description: 'flag' },
      price: { type: 'number', required: false, description: 'a Long, a decimal or a number' },
      __entity: { type: 'string', required: false, description: 'a reserved key' },
    },
    execute: () => 1,
  },
  { execute: () => 1 },
) as [string, string];
const prepared = register(runtime, {
  prepare: () => ({ url: 'https://example.com/' }),
  execute: () => 1,
})[0] as string;

describe('cedarSchema', () => {
  it('declares the request entities, the risk groups and an action per capability, with its input', () => {
    const schema = cedarSchema();
    assert.equal(loadCedar().checkParseSchema(schema).type, 'success', schema);
    assert.match(
      schema,
      /entity Caller = \{ "scopes": Set<String>, "roles"\?: Set<String>, "tenant"\?: String \};/,
    );
    assert.ok(
      schema.includes(
        `action "${mail}" in ["risk:write"] appliesTo {\n    principal: [Caller, Anonymous],\n    resource: Capability,\n    context: { "input": { "to": String, "urgent"?: Bool, "___entity"?: String }, "inputDigest": String, "jobId": String, "stepId": String, "approved": Bool, "actors": Set<String>, "effectiveScopes": Set<String>, "actor"?: { "id": String, "scopes": Set<String> } }\n  };`,
      ),
      schema,
    );
    // An input Cedar cannot type is still present, as an empty record.
    assert.ok(
      schema.includes(
        `action "${note}" in ["risk:read"] appliesTo {\n    principal: [Caller, Anonymous],\n    resource: Capability,\n    context: { "input": {}, "inputDigest"`,
      ),
      schema,
    );
    assert.match(schema, /^ {2}entity Null;\n {2}entity Number;$/m);
    // A capability with `prepare`: its effect, a record Cedar cannot type, and its digest.
    assert.ok(
      schema.includes(
        `action "${prepared}" in ["risk:read"] appliesTo {\n    principal: [Caller, Anonymous],\n    resource: Capability,\n    context: { "input": {}, "inputDigest": String, "jobId": String, "stepId": String, "approved": Bool, "actors": Set<String>, "effectiveScopes": Set<String>, "actor"?: { "id": String, "scopes": Set<String> }, "effect"?: {}, "effectDigest"?: String }\n  };`,
      ),
      schema,
    );
  });
});

describe('validateCedarPolicies', () => {
  it('accepts policies that fit the schema', () => {
    assert.deepEqual(
      validateCedarPolicies(
        `permit(principal, action == Warrant::Action::"${mail}", resource) when { context has input && context.input.to like "*@example.com" };\n` +
          'forbid(principal, action in Warrant::Action::"risk:write", resource) when { principal is Warrant::Caller && principal.scopes.isEmpty() };',
      ),
      [],
    );
  });

  it('accepts a forbid that reads the input without `has`, and policies on the markers and escaped keys', () => {
    assert.deepEqual(
      validateCedarPolicies(
        `forbid(principal, action == Warrant::Action::"${mail}", resource) when { context.input.to like "*@evil.example" };\n` +
          `forbid(principal, action == Warrant::Action::"${mail}", resource) when { context.input has ___entity && context.input.___entity == "x" };\n` +
          `forbid(principal, action == Warrant::Action::"${note}", resource) when { context.inputDigest == "" };\n` +
          'forbid(principal, action, resource) when { Warrant::Null::"null" is Warrant::Null && Warrant::Number::"1e-7" is Warrant::Number };\n' +
          // A prepared effect is read after `has` (docs/api.md, "Prepared effects").
          `forbid(principal, action == Warrant::Action::"${prepared}", resource) when { context has effect && context.effect has url && context.effect.url like "http://*" };\n` +
          `forbid(principal, action == Warrant::Action::"${prepared}", resource) when { context has effectDigest && context.effectDigest == "" };`,
      ),
      [],
    );
  });

  it('names each problem with its line and policy: an unknown capability, an unknown attribute', () => {
    const problems = validateCedarPolicies(
      `permit(principal, action, resource);\n\n@id("typo") permit(principal, action == Warrant::Action::"no.such.capability", resource);\n` +
        `permit(principal, action == Warrant::Action::"${mail}", resource) when { context has input && context.input.price == 1 };`,
    );
    assert.deepEqual(
      problems.map(({ line, policy }) => [line, policy]),
      [
        [3, 'typo'],
        [4, 'policy2'],
      ],
    );
    assert.match(
      problems[0]?.message ?? '',
      /unrecognized action `Warrant::Action::"no\.such\.capability"`/,
    );
    assert.match(problems[1]?.message ?? '', /attribute `price`|input\.price/);
  });

  it('names text that does not parse by its line, and duplicate ids', () => {
    const [parse] = validateCedarPolicies(
      'permit(principal, action, resource);\npermit(principal action, resource);',
    );
    assert.equal(parse?.line, 2);
    assert.deepEqual(
      validateCedarPolicies(
        '@id("a") permit(principal, action, resource);\n@id("a") permit(principal, action, resource);',
      ),
      [{ message: 'Duplicate policy id "a": policies 0 and 1' }],
    );
  });
});
