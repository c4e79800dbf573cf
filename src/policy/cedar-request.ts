/**
 * The request each step makes of Cedar (docs/api.md, "Policy as code: Cedar"), fixed so that
 * policies can be written against it: the caller (the subject) as principal, the capability as
 * action (a member of its risk group) and as resource, and the context `{ input, inputDigest,
 * jobId, stepId, approved, actors, effectiveScopes, actor?, effect?, effectDigest?,
 * definitionDigest? }`, the input whole (a decimal, a
 * number or a null as a marker, reserved keys escaped) or the step denied.
 */
import { types } from 'node:util';
import type { CapabilityAuthorizationContext } from '../authorization/authorizer.js';
import type { ExecutionCaller } from '../callers/execution-caller.js';
import { actorsOf, effectiveScopes } from '../callers/actor-chain.js';

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

/**
 * Input nested deeper than this many levels (the outermost object or array is level 1) is
 * denied: Cedar reads a request as JSON of at most 128 levels, of which the request and its
 * context take two and a marker (a decimal, a null, a number) two more, at the deepest level
 * (docs/api.md, "Policy as code: Cedar"; docs/decisions.md, "Cedar requests carry the whole
 * input").
 */
export const MAX_INPUT_DEPTH = 123;

const ANONYMOUS: EntityUid = Object.freeze({ type: 'Warrant::Anonymous', id: 'anonymous' });

/** Cedar's JSON reads an object with one of these keys as an entity, an extension value or an expression. */
const RESERVED_KEY = /^_*__(?:entity|extn|expr)$/;

/**
 * A key as Cedar's context holds it: `__entity`, `__extn` or `__expr` after any number of
 * underscores gets one more underscore in front (`__entity` → `___entity`, `___entity` →
 * `____entity`); every other key is itself. One to one, and no key comes out reserved.
 */
export function cedarKey(key: string): string {
  // 95 is '_': most keys are done with one comparison.
  return key.charCodeAt(0) === 95 && RESERVED_KEY.test(key) ? `_${key}` : key;
}

/** The Cedar value of JSON `null`: an entity reference only this encoding can make. */
const NULL_MARKER = Object.freeze({
  __entity: Object.freeze({ type: 'Warrant::Null', id: 'null' }),
});

/** At most 4 fractional digits and no exponent: what a Cedar decimal can be. */
const DECIMAL_TEXT = /^(-?)(\d+)\.(\d{1,4})$/;
const DECIMAL_LIMIT = 2n ** 63n; // a decimal is a 64-bit integer of ten-thousandths

/** Integers of a smaller magnitude are Longs (a Long is a 64-bit integer). */
const LONG_LIMIT = 2 ** 63;

/**
 * The Cedar value of a number other than a Long: `decimal("<text>")` when its shortest text
 * (`String(n)`) has at most 4 fractional digits, no exponent and is in the decimal range, else
 * the entity `Warrant::Number::"<text>"`.
 */
function cedarNumber(value: number): unknown {
  const text = String(value);
  const parts = DECIMAL_TEXT.exec(text);
  if (parts !== null) {
    const [, sign, whole, fraction] = parts as unknown as [string, string, string, string];
    const scaled = BigInt(whole) * 10_000n + BigInt(fraction.padEnd(4, '0'));
    if (sign === '' ? scaled < DECIMAL_LIMIT : scaled <= DECIMAL_LIMIT)
      return { __extn: { fn: 'decimal', arg: text } };
  }
  return { __entity: { type: 'Warrant::Number', id: text } };
}

/** A string Cedar cannot read: one holding a lone surrogate (Cedar's strings are UTF-8). */
const SURROGATE = /[\ud800-\udfff]/;
const LONE_SURROGATE = /\p{Surrogate}/u;
const unreadable = (text: string): boolean => SURROGATE.test(text) && LONE_SURROGATE.test(text);

/** Why (part of) the input cannot be given to Cedar, and where. */
class Refusal {
  readonly path: (string | number)[] = [];
  constructor(readonly why: string) {}
}

function typeName(value: object): string {
  const prototype = Object.getPrototypeOf(value) as { constructor?: unknown } | null;
  const name = (prototype?.constructor as { name?: unknown } | undefined)?.name;
  return typeof name === 'string' && name !== '' ? `a ${name}` : 'an object of a class';
}

/**
 * `value` as Cedar's context holds it, or the Refusal saying why it cannot be: JSON data only
 * (strings, booleans, numbers, null, arrays, plain objects), at most MAX_INPUT_DEPTH levels.
 * As the record encodes the input (docs/guide/stores.md), an undefined property is absent and an
 * undefined array element (or hole) is null.
 */
function encode(value: unknown, depth: number): unknown {
  switch (typeof value) {
    case 'string':
      return unreadable(value)
        ? new Refusal('a string holds a lone surrogate, which Cedar cannot read')
        : value;
    case 'boolean':
      return value;
    case 'number':
      // An integer is a Long as JSON writes it (its shortest digits, within the Long range
      // when its magnitude is under 2^63); -0 is 0.
      if (Number.isInteger(value) && Math.abs(value) < LONG_LIMIT) return value === 0 ? 0 : value;
      return Number.isFinite(value) ? cedarNumber(value) : new Refusal(`${value} is not JSON data`);
    case 'undefined':
      return NULL_MARKER;
    case 'object': {
      if (value === null) return NULL_MARKER;
      if (depth >= MAX_INPUT_DEPTH)
        return new Refusal(`it is nested deeper than ${MAX_INPUT_DEPTH} levels (or is cyclic)`);
      if (types.isProxy(value)) return new Refusal('a proxy is not JSON data');
      if (Array.isArray(value)) {
        const copy: unknown[] = [];
        for (let index = 0; index < value.length; index++) {
          const kept = encode(value[index], depth + 1);
          if (kept instanceof Refusal) {
            kept.path.unshift(index);
            return kept;
          }
          copy.push(kept);
        }
        return copy;
      }
      const prototype = Object.getPrototypeOf(value) as unknown;
      if (prototype !== Object.prototype && prototype !== null)
        return new Refusal(`${typeName(value)} is not JSON data`);
      // Keys sorted: the copy has one text whatever the input's key order (the cache key).
      const copy: Record<string, unknown> = {};
      for (const key of Object.keys(value).sort()) {
        const item = (value as Record<string, unknown>)[key];
        if (item === undefined) continue;
        const kept = unreadable(key)
          ? new Refusal('a key holds a lone surrogate, which Cedar cannot read')
          : encode(item, depth + 1);
        if (kept instanceof Refusal) {
          kept.path.unshift(key);
          return kept;
        }
        // Assigning '__proto__' would set the prototype: that one key is defined as data.
        if (key === '__proto__')
          Object.defineProperty(copy, key, {
            value: kept,
            enumerable: true,
            writable: true,
            configurable: true,
          });
        else copy[cedarKey(key)] = kept;
      }
      return copy;
    }
    default:
      return new Refusal(`a ${typeof value} is not JSON data`);
  }
}

/** Where in the input a refusal is: `input.a[0].b`, its first 8 steps. */
function where(path: readonly (string | number)[]): string {
  let text = 'input';
  for (const step of path.slice(0, 8)) {
    if (typeof step === 'number') text += `[${step}]`;
    else if (/^[A-Za-z_$][\w$]{0,63}$/.test(step)) text += `.${step}`;
    else text += `[${JSON.stringify(step.length > 64 ? `${step.slice(0, 64)}…` : step)}]`;
  }
  return path.length > 8 ? `${text}…` : text;
}

/** The input as Cedar's context holds it, or why it cannot be given to Cedar. */
export type CedarInput =
  { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly reason: string };

/**
 * The whole input as Cedar's context holds it (docs/api.md, "Policy as code: Cedar"), or the
 * reason it cannot be given to Cedar, for which the step is denied: never a part of it.
 */
export function cedarInput(input: unknown): CedarInput {
  let kept: unknown;
  try {
    kept = encode(input, 0);
  } catch {
    return { ok: false, reason: 'reading it threw' };
  }
  if (!(kept instanceof Refusal)) return { ok: true, value: kept };
  return {
    ok: false,
    reason: kept.path.length === 0 ? kept.why : `at ${where(kept.path)}, ${kept.why}`,
  };
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

/**
 * The context of one step's request: `{ input, inputDigest, jobId, stepId, approved, actors,
 * effectiveScopes, actor? }`, `input` the value `cedarInput` gave; `actors` every actor's id
 * (who acts now first; Cedar reads it as a set), `effectiveScopes` the scopes the whole chain
 * holds, and `actor` the current actor's `{ id, scopes }` when there is one (docs/api.md,
 * "Policy as code: Cedar"); with a prepared effect (docs/api.md, "Prepared effects"), also
 * `effect` (as `cedarInput` gave it) and `effectDigest`; and `definitionDigest` for an outbound MCP tool.
 */
export function cedarContext(
  asked: CapabilityAuthorizationContext,
  inputDigest: string,
  input: unknown,
  effect?: unknown,
): Record<string, unknown> {
  const actors = actorsOf(asked.caller);
  const context: Record<string, unknown> = {
    input,
    inputDigest,
    jobId: asked.jobId,
    stepId: asked.stepId,
    approved: asked.approval !== undefined,
    actors: actors.map((actor) => actor.id),
    effectiveScopes: effectiveScopes(asked.caller),
  };
  const current = actors[0];
  if (current !== undefined)
    context['actor'] = { id: current.id, scopes: strings(current.scopes) ?? [] };
  if (effect !== undefined) {
    context.effect = effect;
    context.effectDigest = asked.effectDigest;
  }
  // An outbound MCP tool's definition, as pinned (docs/api.md, "Pinned tools").
  if (typeof asked.definitionDigest === 'string') context.definitionDigest = asked.definitionDigest;
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
 * with the input's keys sorted, and strings and integers written as RFC 8785 writes them
 * (one text per input: the encoding of the input is one to one).
 */
export function requestKeyText(
  principal: ReturnType<typeof principalOf>,
  capabilityKey: string,
  context: Record<string, unknown>,
): string {
  return JSON.stringify([principal.entity ?? principal.uid, capabilityKey, context]);
}
