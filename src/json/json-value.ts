/**
 * The one JSON encoding of job values (inputs, results, metadata, events) for the durable stores
 * and for every edge that prints or sends them (HTTP, MCP, the CLI's `--json`): any value,
 * including what JSON cannot hold, becomes a JSON value without throwing (docs/guide/stores.md,
 * "Values JSON cannot hold").
 *
 * First what `JSON.stringify` does: a value with a `toJSON` method (URL, Date, Buffer, your own)
 * is replaced by what `toJSON(key)` returns, and a boxed number, string, boolean or bigint by its
 * primitive. Then the substitutions for what JSON cannot hold: bigint -> decimal string;
 * function -> "[Function name]"; symbol -> its description string; NaN and ±Infinity -> "NaN" /
 * "Infinity" / "-Infinity"; -0 -> 0; an invalid Date -> null; Map -> object of its entries;
 * Set -> array; undefined or a hole in an array -> null; undefined properties are dropped; a
 * cycle -> "[Circular]"; deeper than 200 levels -> "[Too deep]"; a value whose getters, proxy
 * traps or `toJSON` throw -> "[Unreadable]". Strings are kept exactly (lone surrogates too:
 * `JSON.stringify` writes them as `\udXXX` escapes, which read back as the same code unit).
 */
import { types } from 'node:util';

/** Deeper than this many levels, a value is recorded as "[Too deep]". */
const MAX_DEPTH = 200;

/** What `toJSON` gives, as `JSON.stringify` asks for it: only when it is a function. */
function applyToJson(value: object | bigint, key: string): unknown {
  const toJson: unknown = (value as { toJSON?: unknown }).toJSON;
  return typeof toJson === 'function' ? Reflect.apply(toJson, value, [key]) : value;
}

/** The primitive of a boxed number, string, boolean or bigint, as `JSON.stringify` reads it. */
function unbox(value: object): unknown {
  if (!types.isBoxedPrimitive(value)) return value;
  if (types.isNumberObject(value)) return Number(value);
  if (types.isStringObject(value)) return String(value);
  if (types.isBooleanObject(value)) return Boolean.prototype.valueOf.call(value);
  if (types.isBigIntObject(value)) return BigInt.prototype.valueOf.call(value);
  return value; // a boxed symbol is an object without own keys to JSON.stringify
}

function functionLabel(fn: object): string {
  let name: unknown;
  try {
    name = (fn as { name?: unknown }).name;
  } catch {
    return '[Unreadable]';
  }
  return `[Function ${typeof name === 'string' && name !== '' ? name : 'anonymous'}]`;
}

function primitive(value: unknown): unknown {
  switch (typeof value) {
    case 'bigint':
      return value.toString();
    case 'symbol':
      return value.toString();
    case 'number':
      if (Number.isFinite(value)) return value === 0 ? 0 : value;
      return String(value);
    default:
      return value;
  }
}

/** Levels of ancestors compared one by one; deeper ones are kept in a Set. */
const NEAR_LEVELS = 32;

/**
 * The containers on the path from the root to the value being walked: a cycle is a value that
 * is its own ancestor. `near[d]` is the ancestor at depth d for the first NEAR_LEVELS levels,
 * compared one by one: nothing hashed and nothing to remove on the way back up, for the shallow
 * values a record mostly holds (adding to and deleting from a Set was most of this walk's time
 * in a profile of bench/runtime/execute.bench.ts). Deeper ancestors go in `far`, made only when
 * a value is that deep, so a deep value costs at most NEAR_LEVELS comparisons per place.
 */
interface Ancestors {
  readonly near: (object | undefined)[];
  far: Set<object> | undefined;
}

function isAncestor(ancestors: Ancestors, value: object, depth: number): boolean {
  const { near } = ancestors;
  const end = depth < NEAR_LEVELS ? depth : NEAR_LEVELS;
  for (let level = 0; level < end; level++) if (near[level] === value) return true;
  return depth > NEAR_LEVELS && ancestors.far !== undefined && ancestors.far.has(value);
}

function walk(key: string, original: unknown, depth: number, seen: Ancestors): unknown {
  let current = original;
  let proto: unknown;
  const kind = typeof current;
  if ((kind === 'object' && current !== null) || kind === 'function' || kind === 'bigint') {
    if (kind !== 'bigint' && depth > MAX_DEPTH) return '[Too deep]';
    try {
      current = applyToJson(current as object | bigint, key);
      if (typeof current === 'object' && current !== null) {
        proto = Object.getPrototypeOf(current);
        // Plain objects and arrays are never boxed primitives: no call into the binding.
        if (proto !== Object.prototype && proto !== Array.prototype && proto !== null)
          current = unbox(current);
      }
    } catch {
      return '[Unreadable]';
    }
  }
  if (typeof current === 'function') return functionLabel(current);
  if (typeof current !== 'object' || current === null) return primitive(current);
  if (isAncestor(seen, current, depth)) return '[Circular]';
  const far = depth < NEAR_LEVELS ? undefined : (seen.far ??= new Set<object>());
  if (far === undefined) seen.near[depth] = current;
  else far.add(current);
  try {
    if (Array.isArray(current)) {
      const length = current.length;
      const out = new Array<unknown>(length);
      for (let index = 0; index < length; index++) {
        const item = walk(String(index), (current as unknown[])[index], depth + 1, seen);
        out[index] = item === undefined ? null : item;
      }
      return out;
    }
    if (proto !== Object.prototype && proto !== null) {
      if (current instanceof Date)
        return Number.isNaN(current.getTime()) ? null : current.toISOString();
      if (current instanceof Map) return walk(key, Object.fromEntries(current), depth + 1, seen);
      if (current instanceof Set) return walk(key, [...current], depth + 1, seen);
    }
    const out: Record<string, unknown> = {};
    for (const name of Object.keys(current)) {
      const item = walk(name, (current as Record<string, unknown>)[name], depth + 1, seen);
      if (item === undefined) continue;
      // Assigning '__proto__' would set the prototype: that one key is defined as data.
      if (name === '__proto__')
        Object.defineProperty(out, name, {
          value: item,
          enumerable: true,
          writable: true,
          configurable: true,
        });
      else out[name] = item;
    }
    return out;
  } catch {
    return '[Unreadable]';
  } finally {
    far?.delete(current);
  }
}

/** The ancestors no encoding is using (see toJsonSafe). */
let spareAncestors: Ancestors | undefined;

/**
 * `key` is the property the value is recorded under, handed to a `toJSON(key)` as
 * `JSON.stringify` would hand it when writing that property ('' for a root value).
 */
export function toJsonSafe(value: unknown, key = ''): unknown {
  if (typeof value !== 'object' && typeof value !== 'function' && typeof value !== 'bigint')
    return primitive(value);
  // One set of ancestors serves every encoding, emptied after each; a `toJSON` that encodes
  // again meanwhile gets a set of its own (docs/decisions.md, "Allocation on the hot path").
  const seen = spareAncestors ?? { near: [], far: undefined };
  spareAncestors = undefined;
  try {
    return walk(key, value, 0, seen);
  } finally {
    // Nothing of the value stays reachable from here.
    seen.near.fill(undefined);
    seen.far = undefined;
    spareAncestors = seen;
  }
}

/**
 * The JSON text of a value in the one encoding (`toJsonSafe`); `indent` as `JSON.stringify`'s
 * third argument. Never throws and never returns undefined (a value JSON drops is `null`).
 */
export function toJsonText(value: unknown, indent?: number): string {
  return JSON.stringify(toJsonSafe(value), null, indent) ?? 'null';
}
