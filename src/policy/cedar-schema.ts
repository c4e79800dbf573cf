/**
 * The Cedar schema of the registered capabilities, and the check of policies against it
 * (docs/api.md, "Policy as code: Cedar"): what `warrant policy schema` prints and
 * `warrant policy validate` checks. Input attributes come from each capability's input JSON
 * Schema, as far as Cedar can type them.
 */
import { capabilityInputJsonSchema } from '../capabilities/json-schema.js';
import { listCapabilities } from '../capabilities/descriptors.js';
import { capabilityInventory } from '../capabilities/inventory.js';
import { hasToolDefinition } from '../capabilities/tool-definition.js';
import { cedarKey } from './cedar-request.js';
import { loadCedar } from './cedar-wasm.cjs';
import { describeCedarError, lineAt, parsePolicySet } from './policy-set.js';

/** One problem `validateCedarPolicies` found. */
export interface CedarPolicyProblem {
  /** 1-based line in the policy text, when Cedar located the problem. */
  readonly line?: number;
  /** The policy's id (`@id` or `policy<N>`), when the problem is one policy's. */
  readonly policy?: string;
  readonly message: string;
}

const RISKS = ['read', 'write', 'destructive'] as const;
const quote = (text: string): string => JSON.stringify(text);

/**
 * The Cedar type of a JSON Schema, or undefined when Cedar cannot type it: a number (a Long, a
 * decimal or a `Warrant::Number` in the request), a union, null. Property names as the request
 * holds them (`cedarKey`).
 */
function cedarType(schema: unknown, depth: number): string | undefined {
  if (typeof schema !== 'object' || schema === null || depth > 16) return undefined;
  const { type, items, properties, required } = schema as Record<string, unknown>;
  switch (type) {
    case 'string':
      return 'String';
    case 'boolean':
      return 'Bool';
    case 'integer':
      return 'Long';
    case 'array': {
      const element = cedarType(items, depth + 1);
      return element === undefined ? undefined : `Set<${element}>`;
    }
    case 'object': {
      if (typeof properties !== 'object' || properties === null) return '{}';
      const needed = new Set(Array.isArray(required) ? required : []);
      const attributes: string[] = [];
      for (const [key, value] of Object.entries(properties)) {
        const typed = cedarType(value, depth + 1);
        if (typed !== undefined)
          attributes.push(`${quote(cedarKey(key))}${needed.has(key) ? '' : '?'}: ${typed}`);
      }
      return attributes.length === 0 ? '{}' : `{ ${attributes.join(', ')} }`;
    }
    default:
      return undefined;
  }
}

/**
 * The Cedar schema (human format) of every registered capability: the entity types of the
 * request (the null and number markers included), the risk groups, and an action per
 * capability with its context, `input`, `actors` and `effectiveScopes` always present, `actor`
 * when a caller has one. A capability whose
 * name starts with `risk:` is left out (the Cedar authorizer always denies it).
 */
export function cedarSchema(): string {
  const lines = [
    'namespace Warrant {',
    '  entity Caller = { "scopes": Set<String>, "roles"?: Set<String>, "tenant"?: String };',
    '  entity Anonymous;',
    '  entity Capability = { "name": String, "version": String, "risk": String };',
    // The markers of a null and of a number neither a Long nor a decimal (docs/api.md, "Policy
    // as code: Cedar").
    '  entity Null;',
    '  entity Number;',
    `  action ${RISKS.map((risk) => quote(`risk:${risk}`)).join(', ')};`,
  ];
  for (const { name, risk } of listCapabilities()) {
    if (name.startsWith('risk:')) continue;
    const input = cedarType(capabilityInputJsonSchema(name), 0);
    // Always present: the request always carries the input. One Cedar cannot type is declared
    // an empty record, so a policy validated against this schema reads none of its attributes.
    const context = [
      `"input": ${input ?? '{}'}`,
      '"inputDigest": String',
      '"jobId": String',
      '"stepId": String',
      '"approved": Bool',
      // Acting for someone (docs/api.md, "Callers: acting for someone").
      '"actors": Set<String>',
      '"effectiveScopes": Set<String>',
      '"actor"?: { "id": String, "scopes": Set<String> }',
    ];
    // A prepared effect's shape is the capability's own: declared as a record Cedar cannot type,
    // so a policy reads it after `has` (docs/decisions.md, "Effects in Cedar").
    if (capabilityInventory().get(name)?.prepare !== undefined)
      context.push('"effect"?: {}', '"effectDigest"?: String');
    // An outbound MCP tool's requests always carry its definition (docs/api.md, "Pinned tools").
    if (hasToolDefinition(name)) context.push('"definitionDigest": String');
    lines.push(
      `  action ${quote(name)} in [${quote(`risk:${risk}`)}] appliesTo {`,
      '    principal: [Caller, Anonymous],',
      '    resource: Capability,',
      `    context: { ${context.join(', ')} }`,
      '  };',
    );
  }
  lines.push('}');
  return `${lines.join('\n')}\n`;
}

/** Cedar's "for policy `policy3`, " prefix, named by our id instead. */
const POLICY_PREFIX = /^for policy `[^`]*`, /;

/**
 * Checks policy text against `cedarSchema()` in Cedar's strict mode: every problem, with its
 * line (text that does not parse, a duplicate id, an unknown capability or attribute, a type
 * error). An empty list means the policies are valid.
 */
export function validateCedarPolicies(policies: string): CedarPolicyProblem[] {
  const cedar = loadCedar();
  let ids: readonly string[];
  try {
    ids = parsePolicySet(cedar, policies).policies.map((policy) => policy.id);
  } catch (error) {
    const checked = cedar.checkParsePolicySet({ staticPolicies: policies });
    if (checked.type === 'failure')
      return checked.errors.map((problem) => {
        const where = describeCedarError(policies, problem);
        const line = /^ at line (\d+)/.exec(where)?.[1];
        return line === undefined
          ? { message: problem.message }
          : { line: Number(line), message: problem.message };
      });
    return [{ message: (error as Error).message }];
  }
  const answer = cedar.validate({
    schema: cedarSchema(),
    policies: { staticPolicies: policies },
    validationSettings: { mode: 'strict' },
  });
  if (answer.type === 'failure')
    return answer.errors.map((problem) => ({ message: `the schema: ${problem.message}` }));
  return answer.validationErrors.map(({ policyId, error }) => {
    const position = /^policy(\d+)$/.exec(policyId)?.[1];
    const policy = position === undefined ? policyId : (ids[Number(position)] ?? policyId);
    const offset = error.sourceLocations?.[0]?.start;
    const message = error.message.replace(POLICY_PREFIX, '');
    return offset === undefined
      ? { policy, message }
      : { line: lineAt(policies, offset), policy, message };
  });
}
