/**
 * The caller of a verified JWT (docs/api.md, "JWT authentication"): `sub` is the id, the scopes
 * claim (`--jwt-scopes-claim`, default `scope`: a space-separated string or an array of strings;
 * by default `scp` when there is no `scope`) the scopes, the tenant claim (`--jwt-tenant-claim`,
 * default `tenant`) the tenant, a `roles` claim that is an array of strings the roles, the `act`
 * claim (RFC 8693, nested) the actor chain, and every other claim `metadata` but those the mode
 * verified (`aud`, `exp`, `nbf`, `iat`). The caller then
 * goes through the one caller checker: a token whose caller it refuses is a 401.
 */
import { frozenCallerCopy } from '../../callers/caller-check.js';
import type { ExecutionCaller } from '../../index.js';

/** Which claims hold the tenant and the scopes. */
export interface JwtClaimNames {
  readonly tenant: string;
  readonly scopes: string;
}

export const DEFAULT_JWT_CLAIMS: JwtClaimNames = Object.freeze({
  tenant: 'tenant',
  scopes: 'scope',
});

/**
 * Claims of the subject's level that the mode checked when it verified the token (the audience,
 * and times): not metadata, which would then differ token by token for one caller.
 */
const VERIFIED_CLAIMS: ReadonlySet<string> = new Set(['aud', 'exp', 'nbf', 'iat']);

/** Claims a claim name option may not name: they are read as themselves. */
export const RESERVED_JWT_CLAIMS: readonly string[] = Object.freeze(['sub', 'act', 'roles']);

type Claims = Readonly<Record<string, unknown>>;

/** The most actors a chain holds (docs/api.md, "Callers: acting for someone"): deeper is refused. */
const MAX_ACTORS = 4;

/** A refused claim: the token is a 401. */
const REFUSED = Symbol('refused');

function isObject(value: unknown): value is Claims {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A space-separated string or an array of strings as scopes; REFUSED for anything else. */
function scopeList(value: unknown): string[] | typeof REFUSED {
  if (typeof value === 'string') return value.split(' ').filter((part) => part !== '');
  if (Array.isArray(value) && value.every((item) => typeof item === 'string')) return [...value];
  return REFUSED;
}

/**
 * The members of one level (the token, or an `act` claim) as caller fields: `id` from `sub`,
 * `scopes`, `tenant`, `roles`, `actor` from `act` (`depth` levels deep at most), the rest as
 * `metadata`; REFUSED for a member the mapping refuses.
 */
function fieldsOf(
  claims: Claims,
  names: JwtClaimNames,
  depth: number,
): Record<string, unknown> | typeof REFUSED {
  const fields: Record<string, unknown> = { id: claims.sub };
  // A null prototype: a `__proto__` claim stays an own key, which the checker refuses.
  const metadata = Object.create(null) as Record<string, unknown>;
  const usedScp = depth === 0 && names.scopes === 'scope' && claims.scope === undefined;
  for (const key of Object.keys(claims)) {
    const value = claims[key];
    if (key === 'sub' || (depth === 0 && VERIFIED_CLAIMS.has(key))) continue;
    if (key === names.scopes || (usedScp && key === 'scp')) continue;
    if (key === names.tenant) {
      if (typeof value !== 'string') return REFUSED;
      fields.tenant = value;
    } else if (key === 'act') {
      if (!isObject(value) || depth >= MAX_ACTORS) return REFUSED;
      const actor = fieldsOf(value, names, depth + 1);
      if (actor === REFUSED) return REFUSED;
      fields.actor = actor;
    } else if (key === 'roles' && Array.isArray(value) && value.every((r) => typeof r === 'string'))
      fields.roles = [...(value as string[])];
    else metadata[key] = value;
  }
  const scopes = claims[names.scopes] ?? (usedScp ? claims.scp : undefined);
  if (scopes !== undefined) {
    const list = scopeList(scopes);
    if (list === REFUSED) return REFUSED;
    fields.scopes = list;
  } else if (depth === 0) fields.scopes = [];
  if (Object.keys(metadata).length > 0) fields.metadata = metadata;
  return fields;
}

/**
 * The caller of a verified token's claims, or undefined when the token is refused: no `sub`, a
 * scopes or tenant claim of another type, an `act` claim that is not an object (or nested more
 * than 4 deep), or a caller the caller checker refuses (an actor without `sub`, an actor's tenant
 * other than the subject's, an id twice in the chain). An actor without the scopes claim holds
 * no scopes (`effectiveScopes`).
 */
export function callerOfClaims(
  claims: Claims,
  names: JwtClaimNames = DEFAULT_JWT_CLAIMS,
): ExecutionCaller | undefined {
  if (typeof claims.sub !== 'string' || claims.sub === '') return undefined;
  const fields = fieldsOf(claims, names, 0);
  if (fields === REFUSED) return undefined;
  // The one checker of callers from outside: a caller the runtime would refuse is a 401 here.
  const checked = frozenCallerCopy(fields);
  return checked.ok ? checked.caller : undefined;
}
