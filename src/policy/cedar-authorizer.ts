/**
 * `cedarAuthorizer({ policies, name? })`: an ExecutionAuthorizer that decides each step with
 * Cedar policies (docs/api.md, "Policy as code: Cedar"). Cedar loads when this is called, never at
 * import; the policies are parsed once, here, and the entities of each capability built once.
 * A Cedar decision is a pure function of the request and the policy set, so decisions are
 * cached by the canonical digest of the request.
 */
import type {
  CapabilityAuthorizationContext,
  CapabilityAuthorizationDecision,
  ExecutionAuthorizer,
} from '../authorization/authorizer.js';
import { markDecisionPolicies } from '../authorization/decision-policies.js';
import { describeValue } from '../errors/describe-value.js';
import { ErrorCode } from '../errors/error-codes.js';
import { createError } from '../errors/warrant-error.js';
import { recordValue } from '../jobs/recorded-value.js';
import { sha256Digest } from '../json/canonical-json.js';
import { loadCedar, type Cedar } from './cedar-wasm.cjs';
import {
  capabilityEntities,
  cedarContext,
  cedarInput,
  cedarRequest,
  principalOf,
  requestKeyText,
  type CapabilityEntities,
  type CedarRequest,
} from './cedar-request.js';
import { parsePolicySet, type ParsedPolicy, type ParsedPolicySet } from './policy-set.js';

export interface CedarAuthorizerOptions {
  /** Cedar policy text (what a `.cedar` file holds). */
  readonly policies: string;
  /** The authorizer's name in the decision record; default `'cedar'`. */
  readonly name?: string;
}

/** How many decisions one authorizer keeps (the oldest goes first). */
export const DECISION_CACHE_SIZE = 256;
const RISK_GROUP = 'risk:';
let sets = 0;

type Decision = CapabilityAuthorizationDecision;

/** A frozen decision marked with its determining policies. */
function decided(decision: Decision, policies: readonly ParsedPolicy[]): Decision {
  const frozen = Object.freeze(decision);
  markDecisionPolicies(
    frozen,
    policies.map((policy) => policy.id),
  );
  return frozen;
}

function invalidOptions(message: string): Error {
  return createError(TypeError, ErrorCode.CEDAR_POLICY_INVALID, message);
}

/** The options, read once: `{ policies: string, name?: string }`. */
function readOptions(options: unknown): { policies: string; name: string } {
  if (typeof options !== 'object' || options === null)
    throw invalidOptions(
      `cedarAuthorizer options must be { policies, name? }, got ${describeValue(options)}`,
    );
  const { policies, name } = options as { policies?: unknown; name?: unknown };
  if (typeof policies !== 'string')
    throw invalidOptions(
      `cedarAuthorizer policies must be Cedar policy text (a string), got ${describeValue(policies)}`,
    );
  if (name !== undefined && typeof name !== 'string')
    throw invalidOptions(`cedarAuthorizer name must be a string, got ${describeValue(name)}`);
  return { policies, name: name ?? 'cedar' };
}

/** Builds the decision from Cedar's answer (docs/api.md, "Policy as code: Cedar": outcomes). */
function decide(
  cedar: Cedar,
  set: ParsedPolicySet,
  setId: string,
  request: CedarRequest,
  approved: boolean,
): Decision {
  const answer = cedar.statefulIsAuthorized({
    principal: request.principal,
    action: request.action,
    resource: request.resource,
    context: request.context as never,
    entities: request.entities as never,
    preparsedPolicySetId: setId,
  });
  if (answer.type === 'failure') {
    // Fail closed: the executor records a throwing authorizer as `error` and fails the step.
    throw new Error(
      `Cedar could not evaluate the request: ${answer.errors[0]?.message ?? 'unknown error'}`,
    );
  }
  const { decision, diagnostics } = answer.response;
  const applying = new Set(diagnostics.reason);
  // A forbid whose condition errors counts as applying; a permit whose condition errors does not.
  for (const error of diagnostics.errors)
    if (set.byId.get(error.policyId)?.effect === 'forbid') applying.add(error.policyId);
  const forbids = set.policies.filter(
    (policy) => policy.effect === 'forbid' && applying.has(policy.id),
  );
  if (forbids.length > 0) {
    const ids = forbids.map((policy) => policy.id).join(', ');
    return decided({ decision: 'deny', reason: `Forbidden by policy ${ids}` }, forbids);
  }
  const permits = set.policies.filter(
    (policy) => policy.effect === 'permit' && applying.has(policy.id),
  );
  if (decision !== 'allow' || permits.length === 0)
    return decided({ decision: 'deny', reason: 'No policy permits' }, []);
  const asking = permits.filter((policy) => policy.requiresApproval);
  if (asking.length > 0 && !approved) {
    const ids = asking.map((policy) => policy.id).join(', ');
    return decided(
      { decision: 'require_approval', reason: `Approval required by policy ${ids}` },
      permits,
    );
  }
  return decided({ decision: 'allow' }, permits);
}

/**
 * An authorizer deciding with Cedar policies. Throws CEDAR_POLICY_INVALID for options other than
 * `{ policies: string, name?: string }` and for policy text Cedar refuses (naming its line), a
 * template, an unknown `@warrant` value or a duplicate policy id.
 */
export function cedarAuthorizer(options: CedarAuthorizerOptions): ExecutionAuthorizer {
  const { policies, name } = readOptions(options);
  const cedar = loadCedar();
  const set = parsePolicySet(cedar, policies);
  const setId = `warrant-policies-${++sets}`;
  const preparsed = cedar.preparsePolicySet(setId, { staticPolicies: { ...set.texts } });
  if (preparsed.type === 'failure')
    throw createError(
      Error,
      ErrorCode.CEDAR_POLICY_INVALID,
      `Cedar refused the policies: ${preparsed.errors[0]?.message ?? 'unknown error'}`,
    );
  const capabilities = new Map<string, CapabilityEntities>();
  const cache = new Map<string, Decision>();

  const authorize = (asked: CapabilityAuthorizationContext): Decision => {
    const { capability } = asked;
    if (capability.name.startsWith(RISK_GROUP))
      return decided(
        {
          decision: 'deny',
          reason: `Capability names starting with "${RISK_GROUP}" are denied by the Cedar authorizer`,
        },
        [],
      );
    const key = `${capability.name}@${capability.version}\u0000${capability.risk}`;
    let entities = capabilities.get(key);
    if (entities === undefined) {
      entities = capabilityEntities(capability);
      capabilities.set(key, entities);
    }
    // The whole input reaches the policies, or the step is denied: never a part, never none.
    const input = cedarInput(asked.input);
    if (!input.ok)
      return decided(
        { decision: 'deny', reason: `Input cannot be given to Cedar: ${input.reason}` },
        [],
      );
    // The effect too, whole or the step denied (docs/api.md, "Prepared effects").
    const effect = asked.effect === undefined ? undefined : cedarInput(asked.effect);
    if (effect?.ok === false)
      return decided(
        {
          decision: 'deny',
          reason: `Effect cannot be given to Cedar: ${effect.reason.replace(/^at input/, 'at effect')}`,
        },
        [],
      );
    const inputDigest = asked.inputDigest ?? recordValue(asked.input, 'input').digest;
    const principal = principalOf(asked.caller);
    const context = cedarContext(asked, inputDigest, input.value, effect?.value);
    const digest = sha256Digest(requestKeyText(principal, key, context));
    const cached = cache.get(digest);
    if (cached !== undefined) return cached;
    const request = cedarRequest(principal, entities, context);
    const decision = decide(cedar, set, setId, request, asked.approval !== undefined);
    if (cache.size >= DECISION_CACHE_SIZE) cache.delete(cache.keys().next().value as string);
    cache.set(digest, decision);
    return decision;
  };
  return Object.freeze({ name, authorize });
}
