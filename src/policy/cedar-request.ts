/**
 * The request each step makes of Cedar (docs/api.md, "Policy as code: Cedar"), fixed so that
 * policies can be written against it: the caller as principal, the capability as action (a
 * member of its risk group) and as resource, and the context `{ input?, inputDigest, jobId,
 * stepId, approved }`.
 */
import type { CapabilityAuthorizationContext } from '../authorization/authorizer.js';
import type { ExecutionCaller } from '../callers/execution-caller.js';

export interface EntityUid {
  readonly type: string;
  readonly id: string;
}

export interface CedarEntity {
  readonly uid: EntityUid;
  readonly attrs: Record<string, unknown>;
  readonly parents: EntityUid[];
}

export interface CedarRequest {
  readonly principal: EntityUid;
  readonly action: EntityUid;
  readonly resource: EntityUid;
  readonly context: Record<string, unknown>;
  readonly entities: CedarEntity[];
}

/** Deeper input is left out of the context (Cedar's parser recurses per level). */
export const MAX_INPUT_DEPTH = 32;
/** Keys Cedar's JSON reads as an entity, an extension call or an expression. */
const ESCAPES = new Set(['__entity', '__extn', '__expr']);
const NOT_HELD = Symbol('not held');

const ANONYMOUS: EntityUid = Object.freeze({ type: 'Warrant::Anonymous', id: 'anonymous' });

/**
 * A copy of `value` as Cedar holds it, or NOT_HELD: strings, booleans, safe integers, arrays
 * and plain objects only, no escape key at any depth, at most MAX_INPUT_DEPTH levels. Floats,
 * null, undefined and anything else are values Cedar cannot hold (or that could forge one).
 */
function held(value: unknown, depth: number): unknown {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      return Number.isSafeInteger(value) ? value : NOT_HELD;
    case 'object': {
      if (value === null || depth >= MAX_INPUT_DEPTH) return NOT_HELD;
      if (Array.isArray(value)) {
        const copy: unknown[] = [];
        for (const item of value) {
          const kept = held(item, depth + 1);
          if (kept === NOT_HELD) return NOT_HELD;
          copy.push(kept);
        }
        return copy;
      }
      const prototype = Object.getPrototypeOf(value) as unknown;
      if (prototype !== Object.prototype && prototype !== null) return NOT_HELD;
      // Keys sorted: the copy has one text whatever the input's key order (the cache key).
      const copy: Record<string, unknown> = {};
      for (const key of Object.keys(value).sort()) {
        if (ESCAPES.has(key)) return NOT_HELD;
        const kept = held((value as Record<string, unknown>)[key], depth + 1);
        if (kept === NOT_HELD) return NOT_HELD;
        copy[key] = kept;
      }
      return copy;
    }
    default:
      return NOT_HELD;
  }
}

/** The input as Cedar's context holds it, or undefined when Cedar cannot hold all of it. */
export function cedarInput(input: unknown): unknown {
  try {
    const kept = held(input, 0);
    return kept === NOT_HELD ? undefined : kept;
  } catch {
    // A getter or proxy that throws: left out, like any value Cedar cannot hold.
    return undefined;
  }
}

function strings(value: unknown): string[] | undefined {
  if (!Array.isArray(value)) return undefined;
  for (const item of value) if (typeof item !== 'string') return undefined;
  return [...(value as string[])];
}

/** The principal and its entity (none for the anonymous principal). */
export function principalOf(caller: ExecutionCaller | undefined): {
  uid: EntityUid;
  entity?: CedarEntity;
} {
  const id = caller?.id;
  if (caller === undefined || typeof id !== 'string') return { uid: ANONYMOUS };
  const uid = { type: 'Warrant::Caller', id };
  const attrs: Record<string, unknown> = { scopes: strings(caller.scopes) ?? [] };
  const roles = strings(caller['roles']);
  if (roles !== undefined) attrs['roles'] = roles;
  if (typeof caller['tenant'] === 'string') attrs['tenant'] = caller['tenant'];
  return { uid, entity: { uid, attrs, parents: [] } };
}

/** The action, resource and their entities: the same for every request about one capability. */
export interface CapabilityEntities {
  readonly action: EntityUid;
  readonly resource: EntityUid;
  readonly entities: readonly CedarEntity[];
}

export function capabilityEntities(
  capability: CapabilityAuthorizationContext['capability'],
): CapabilityEntities {
  const { name, version, risk } = capability;
  const action = { type: 'Warrant::Action', id: name };
  const group = { type: 'Warrant::Action', id: `risk:${risk}` };
  const resource = { type: 'Warrant::Capability', id: `${name}@${version}` };
  return {
    action,
    resource,
    entities: [
      { uid: action, attrs: {}, parents: [group] },
      { uid: group, attrs: {}, parents: [] },
      { uid: resource, attrs: { name, version, risk }, parents: [] },
    ],
  };
}

/** The context of one step's request: `{ input?, inputDigest, jobId, stepId, approved }`. */
export function cedarContext(
  asked: CapabilityAuthorizationContext,
  inputDigest: string,
): Record<string, unknown> {
  const context: Record<string, unknown> = {};
  const input = cedarInput(asked.input);
  if (input !== undefined) context['input'] = input;
  context['inputDigest'] = inputDigest;
  context['jobId'] = asked.jobId;
  context['stepId'] = asked.stepId;
  context['approved'] = asked.approval !== undefined;
  return context;
}

/**
 * The request of one step, from its principal, its capability's entities and its context.
 * Every part is built in a fixed key order (the input's keys sorted), so
 * `requestKeyText` is one text per request.
 */
export function cedarRequest(
  principal: ReturnType<typeof principalOf>,
  capability: CapabilityEntities,
  context: Record<string, unknown>,
): CedarRequest {
  const entities =
    principal.entity === undefined
      ? [...capability.entities]
      : [principal.entity, ...capability.entities];
  return {
    principal: principal.uid,
    action: capability.action,
    resource: capability.resource,
    context,
    entities,
  };
}

/**
 * The canonical text of a request, for its digest: the principal (with its attributes), the
 * capability (whose entities follow from it) and the context, each built in a fixed key order
 * with the input's keys sorted, and strings and safe integers written as RFC 8785 writes them.
 */
export function requestKeyText(
  principal: ReturnType<typeof principalOf>,
  capabilityKey: string,
  context: Record<string, unknown>,
): string {
  return JSON.stringify([principal.entity ?? principal.uid, capabilityKey, context]);
}
