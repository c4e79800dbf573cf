/**
 * Callers that come from outside the runtime (a callers file, a resolver module) are checked and
 * copied once: JSON data only (plain objects, arrays, strings, finite numbers, booleans, null), a
 * non-empty string `id`, `scopes` an array of strings, `metadata` an object. The copy is deeply
 * frozen, so nothing the source does later changes it (docs/decisions.md "Authentication modes").
 */
import type { ExecutionCaller } from '../../index.js';

const MAX_DEPTH = 32;

class NotCallerData extends Error {}

function isPlainObject(value: object): boolean {
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

function copyJson(value: unknown, path: string, depth: number): unknown {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new NotCallerData(`${path} is not a finite number`);
    return value;
  }
  if (typeof value !== 'object') throw new NotCallerData(`${path} is not JSON data`);
  if (depth >= MAX_DEPTH)
    throw new NotCallerData(`${path} is nested deeper than ${MAX_DEPTH} levels (or cyclic)`);
  if (Array.isArray(value)) {
    if (Object.getPrototypeOf(value) !== Array.prototype)
      throw new NotCallerData(`${path} is not a plain array`);
    const copy: unknown[] = [];
    for (let index = 0; index < value.length; index += 1)
      copy.push(copyJson(value[index], `${path}[${index}]`, depth + 1));
    return Object.freeze(copy);
  }
  if (!isPlainObject(value)) throw new NotCallerData(`${path} is not a plain object`);
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    if (key === '__proto__') throw new NotCallerData(`${path} has a "__proto__" key`);
    copy[key] = copyJson((value as Record<string, unknown>)[key], `${path}.${key}`, depth + 1);
  }
  return Object.freeze(copy);
}

export type CallerCheck =
  | { readonly ok: true; readonly caller: ExecutionCaller }
  | { readonly ok: false; readonly reason: string };

/**
 * A deeply frozen copy of `value` when it is a caller made of JSON data, else the first reason
 * it is not (naming the field from `path`). Never throws: getters or proxy traps that throw make
 * it `ok: false`.
 */
export function frozenCallerCopy(value: unknown, path = 'caller'): CallerCheck {
  let copy: unknown;
  try {
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      return { ok: false, reason: `${path} must be an object` };
    copy = copyJson(value, path, 0);
  } catch (error) {
    if (error instanceof NotCallerData) return { ok: false, reason: error.message };
    return { ok: false, reason: `${path} could not be read` };
  }
  const { id, scopes, metadata } = copy as Record<string, unknown>;
  if (typeof id !== 'string' || id === '')
    return { ok: false, reason: `${path}.id must be a non-empty string` };
  if (
    scopes !== undefined &&
    !(Array.isArray(scopes) && scopes.every((s) => typeof s === 'string'))
  )
    return { ok: false, reason: `${path}.scopes must be an array of strings` };
  if (
    metadata !== undefined &&
    (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata))
  )
    return { ok: false, reason: `${path}.metadata must be an object` };
  return { ok: true, caller: copy as ExecutionCaller };
}
