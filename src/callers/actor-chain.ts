/**
 * Acting for someone (docs/api.md, "Callers: acting for someone"): a caller is the subject, and
 * `caller.actor` who acts for it now, `caller.actor.actor` who acted before, and so on. The rules
 * of a chain, checked by the one caller checker (caller-snapshot.ts, caller-check.ts) wherever a
 * caller comes in, and what the rest of the runtime reads of one: its actors, and the scopes
 * every member of it holds.
 */
import type { ExecutionActor, ExecutionCaller } from './execution-caller.js';

/** The most actors a chain holds (the subject is not counted). */
export const MAX_ACTORS = 4;

function isObject(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isStrings(value: unknown): value is readonly string[] {
  return Array.isArray(value) && value.every((item) => typeof item === 'string');
}

/** The first malformed field of one actor, worded after its path; undefined when all hold. */
function actorFieldProblem(actor: unknown, path: string, tenant: unknown): string | undefined {
  if (!isObject(actor)) return `${path} must be an object`;
  const { id, scopes, metadata } = actor;
  if (typeof id !== 'string' || id === '') return `${path}.id must be a non-empty string`;
  if (scopes !== undefined && !isStrings(scopes))
    return `${path}.scopes must be an array of strings`;
  if (metadata !== undefined && !isObject(metadata)) return `${path}.metadata must be an object`;
  if (actor.tenant !== undefined) {
    if (typeof actor.tenant !== 'string') return `${path}.tenant must be a string`;
    // One tenant per chain: tenants never cross (docs/api.md, "Reading and tenants").
    if (actor.tenant !== tenant) return `${path}.tenant must be the caller's tenant`;
  }
  return undefined;
}

/**
 * Why the chain of a copied caller (JSON data, already checked field by field) is refused, the
 * path relative to the caller (`actor.actor.id must be ...`); undefined for a caller without
 * `actor` or with a good chain: at most MAX_ACTORS actors, each an object with a non-empty string
 * `id`, `scopes` strings, `metadata` an object and `tenant`, when present, the caller's; the
 * caller itself has a non-empty string `id`; no id appears twice in the chain (subject included).
 */
export function chainProblem(caller: Readonly<Record<string, unknown>>): string | undefined {
  if (caller.actor === undefined) return undefined;
  const subject = caller.id;
  if (typeof subject !== 'string' || subject === '')
    return 'id must be a non-empty string when the caller has an actor (the subject acted for)';
  const ids = new Set<string>([subject]);
  let path = 'actor';
  let actor: unknown = caller.actor;
  for (let count = 1; actor !== undefined; count++) {
    if (count > MAX_ACTORS) return `holds more than ${MAX_ACTORS} actors`;
    const problem = actorFieldProblem(actor, path, caller.tenant);
    if (problem !== undefined) return problem;
    const { id } = actor as ExecutionActor;
    if (ids.has(id)) return `${path}.id ${JSON.stringify(id)} appears twice in the chain (a cycle)`;
    ids.add(id);
    actor = (actor as ExecutionActor).actor;
    path += '.actor';
  }
  return undefined;
}

/**
 * The actors of a caller, who acts now first. Reads at most MAX_ACTORS of them, and stops at a
 * member that is not an object with a string id (a checked caller has none).
 */
export function actorsOf(caller: ExecutionCaller | undefined): readonly ExecutionActor[] {
  const actors: ExecutionActor[] = [];
  let actor: unknown = caller?.actor;
  while (isObject(actor) && typeof actor.id === 'string' && actors.length < MAX_ACTORS) {
    actors.push(actor as ExecutionActor);
    actor = actor.actor;
  }
  return actors;
}

/** The actor acting now (`caller.actor`), undefined when the caller acts for itself. */
export function currentActor(caller: ExecutionCaller | undefined): ExecutionActor | undefined {
  return actorsOf(caller)[0];
}

/**
 * The scopes the whole chain holds: the caller's scopes that every actor holds too (an actor
 * without `scopes` holds none), in the caller's order, each once. A caller without an actor: its
 * own scopes; no caller: none. The default policy does not read them (docs/api.md, "Callers:
 * acting for someone").
 */
export function effectiveScopes(caller: ExecutionCaller | undefined): string[] {
  const own = caller?.scopes;
  if (!isStrings(own)) return [];
  const held = actorsOf(caller).map(
    (actor) => new Set(isStrings(actor.scopes) ? actor.scopes : []),
  );
  const scopes = new Set<string>();
  for (const scope of own) if (held.every((set) => set.has(scope))) scopes.add(scope);
  return [...scopes];
}

/**
 * Every id of the chain of `caller`: the subject's (when it has one) and each actor's. The ids a
 * job's record names as acting in it (reading, self-approval).
 */
export function chainIds(caller: ExecutionCaller | undefined): string[] {
  const ids = actorsOf(caller).map((actor) => actor.id);
  return typeof caller?.id === 'string' ? [caller.id, ...ids] : ids;
}

/**
 * What an `approval.requested` event (and its notification) says of a chain (docs/api.md,
 * "Approvals"): `{ actor, onBehalfOf }`, the current actor's id and the subject's, when an actor
 * acted; else nothing.
 */
export function actingFor(
  caller: ExecutionCaller | undefined,
): { readonly actor: string; readonly onBehalfOf: string } | Record<string, never> {
  const actor = currentActor(caller);
  const subject = caller?.id;
  return actor === undefined || typeof subject !== 'string'
    ? {}
    : { actor: actor.id, onBehalfOf: subject };
}
