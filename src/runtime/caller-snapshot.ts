import { ErrorCode } from '../errors/error-codes.js';
import { types } from 'node:util';
import type { ExecutionCaller } from '../authorization/authorizer.js';
import { createError } from '../errors/warrant-error.js';
import { toJsonSafe } from '../jobs/json-value.js';
import { boundText, describeThrown, describeValue, quoteText } from '../errors/describe-value.js';

/** Deepest nesting of a caller: the caller object is level 0, `caller.metadata` level 1. */
export const MAX_CALLER_DEPTH = 64;

/** Most values (objects, arrays and primitives, each counted where it appears) in one caller. */
export const MAX_CALLER_VALUES = 10_000;

/** Longest path named in a message. */
const MAX_PATH_CHARS = 200;

function invalid(message: string): TypeError {
  return createError(TypeError, ErrorCode.EXECUTE_OPTIONS_INVALID, message);
}

/** A value that is not JSON data, found at `path`. */
class NotJsonData {
  constructor(
    readonly path: string,
    readonly problem: string,
  ) {}
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

function keyPath(path: string, key: string): string {
  return IDENTIFIER.test(key) ? `${path}.${boundText(key, 80)}` : `${path}[${quoteText(key)}]`;
}

function primitiveProblem(value: unknown): string | undefined {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return undefined;
    case 'number':
      return Number.isFinite(value) ? undefined : `is ${String(value)}`;
    case 'undefined':
      return 'is undefined';
    case 'object':
      return undefined;
    default:
      return `is a ${typeof value}`;
  }
}

function unreadable(error: unknown): string {
  return `could not be read (${boundText(describeThrown(error), 80)})`;
}

/** One property, read once (a getter runs once); a throw is reported at the property's path. */
function readItem(container: object, key: string, where: string): unknown {
  try {
    return (container as Record<string, unknown>)[key];
  } catch (error) {
    throw new NotJsonData(where, unreadable(error));
  }
}

/** Copies JSON data (see snapshotCaller), building frozen plain objects and arrays. */
class JsonCopier {
  #values = MAX_CALLER_VALUES;
  readonly #ancestors = new Set<object>();
  /** Every container was frozen, no proxy, and every property a data property: it cannot change. */
  immutable = true;
  /** A -0 was copied (the record's encoding writes it as 0). */
  negativeZero = false;

  copy(value: unknown, path: string, depth: number): unknown {
    if (--this.#values < 0) {
      throw new NotJsonData(path, `holds more than ${MAX_CALLER_VALUES} values`);
    }
    const problem = primitiveProblem(value);
    if (problem !== undefined) throw new NotJsonData(path, problem);
    if (typeof value !== 'object' || value === null) {
      if (Object.is(value, -0)) this.negativeZero = true;
      return value;
    }
    if (this.immutable && (types.isProxy(value) || !Object.isFrozen(value))) this.immutable = false;
    if (depth > MAX_CALLER_DEPTH) {
      throw new NotJsonData(path, `is nested deeper than ${MAX_CALLER_DEPTH} levels`);
    }
    if (this.#ancestors.has(value)) {
      throw new NotJsonData(path, 'refers back to an object that contains it (a cycle)');
    }
    this.#ancestors.add(value);
    try {
      return this.#container(value, path, depth);
    } catch (error) {
      if (error instanceof NotJsonData) throw error;
      throw new NotJsonData(path, unreadable(error));
    } finally {
      this.#ancestors.delete(value);
    }
  }

  #container(value: object, path: string, depth: number): object {
    const prototype: unknown = Object.getPrototypeOf(value);
    if (Array.isArray(value)) {
      if (prototype !== Array.prototype) {
        throw new NotJsonData(path, 'is an instance of an Array subclass');
      }
      return this.#array(value as unknown[], path, depth);
    }
    if (prototype !== Object.prototype && prototype !== null) {
      throw new NotJsonData(path, 'is not a plain object or array (a class instance?)');
    }
    const copy: Record<string, unknown> = {};
    for (const key of Reflect.ownKeys(value)) {
      if (typeof key === 'symbol') throw new NotJsonData(path, 'has a symbol key');
      const descriptor = Reflect.getOwnPropertyDescriptor(value, key);
      if (descriptor !== undefined && !('value' in descriptor)) this.immutable = false;
      // JSON holds own enumerable string keys only; other properties are not copied.
      if (descriptor === undefined || descriptor.enumerable !== true) continue;
      const where = keyPath(path, key);
      // A data property even for "__proto__", so the copy never gains a prototype.
      Object.defineProperty(copy, key, {
        value: this.copy(readItem(value, key, where), where, depth + 1),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return Object.freeze(copy);
  }

  #array(value: unknown[], path: string, depth: number): readonly unknown[] {
    const length = value.length;
    if (length > this.#values) {
      throw new NotJsonData(path, `holds more than ${MAX_CALLER_VALUES} values`);
    }
    for (const key of Reflect.ownKeys(value)) {
      if (typeof key === 'symbol') throw new NotJsonData(path, 'has a symbol key');
      if (key === 'length') continue;
      const index = Number(key);
      if (!(String(index) === key && Number.isInteger(index) && index >= 0 && index < length)) {
        throw new NotJsonData(keyPath(path, key), 'is a named key of an array, not an index');
      }
    }
    const copy: unknown[] = [];
    for (let index = 0; index < length; index++) {
      const where = `${path}[${index}]`;
      if (!Object.hasOwn(value, index)) throw new NotJsonData(where, 'is a hole of a sparse array');
      if (this.immutable && !('value' in (Reflect.getOwnPropertyDescriptor(value, index) ?? {})))
        this.immutable = false;
      copy.push(this.copy(readItem(value, String(index), where), where, depth + 1));
    }
    return Object.freeze(copy);
  }
}

/**
 * A deep, deeply frozen snapshot of the caller, taken once per plan: the same object reaches every
 * authorizer call and every capability context of the job, and nobody (the submitter, an
 * authorizer, a capability, an observer) can change what a later step's authorizer sees.
 *
 * The caller must be JSON data: plain objects (or null-prototype objects) and arrays, strings,
 * finite numbers, booleans and null, at most MAX_CALLER_DEPTH levels deep and MAX_CALLER_VALUES
 * values in all; `id`, when present, a string; `scopes`, when present, an array of strings; `metadata` an object. Each property
 * is read once (a getter runs once); a getter or proxy trap that throws, a cycle, a sparse array
 * or any other value rejects the call (docs/decisions.md, "Callers").
 * @throws TypeError (EXECUTE_OPTIONS_INVALID) naming the path of the first offending value.
 */
export function snapshotCaller(caller: unknown): ExecutionCaller | undefined {
  if (caller === undefined) return undefined;
  if (typeof caller !== 'object' || caller === null) {
    throw invalid(`options.caller must be an object, got ${describeValue(caller)}`);
  }
  const known = SNAPSHOTS.get(caller);
  if (known !== undefined) return known;
  let copy: unknown;
  const copier = new JsonCopier();
  try {
    copy = copier.copy(caller, 'caller', 0);
  } catch (error) {
    if (!(error instanceof NotJsonData)) throw error;
    const path = boundText(error.path, MAX_PATH_CHARS);
    throw invalid(`options.caller must be JSON data: ${path} ${error.problem}`);
  }
  if (Array.isArray(copy)) throw invalid('options.caller must be an object, got an array');
  const { id, scopes, metadata } = copy as Record<string, unknown>;
  // Approvals compare ids (self-approval) and the record names the caller by it: a string only.
  if (id !== undefined && typeof id !== 'string') {
    throw invalid(`options.caller.id must be a string, got ${describeValue(id)}`);
  }
  if (
    scopes !== undefined &&
    (!Array.isArray(scopes) || !scopes.every((scope) => typeof scope === 'string'))
  ) {
    throw invalid('options.caller.scopes must be an array of strings');
  }
  if (
    metadata !== undefined &&
    (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata))
  ) {
    throw invalid(`options.caller.metadata must be an object, got ${describeValue(metadata)}`);
  }
  const snapshot = copy as ExecutionCaller;
  // A snapshot cannot change, and neither can a caller that was deeply frozen data: given again,
  // either gets this same snapshot, with nothing read or copied (docs/decisions.md, "Callers").
  SNAPSHOTS.set(snapshot, snapshot);
  if (copier.immutable) SNAPSHOTS.set(caller, snapshot);
  if (!copier.negativeZero) RECORDED_AS_IS.add(snapshot);
  return snapshot;
}

/** Each snapshot, by itself and by the deeply frozen caller it was taken from. */
const SNAPSHOTS = new WeakMap<object, ExecutionCaller>();

/** Snapshots that are their own record: JSON data that `toJsonSafe` would copy unchanged. */
const RECORDED_AS_IS = new WeakSet<object>();

/**
 * The caller as the job record keeps it: a snapshot is deeply frozen JSON data, so the record
 * shares it (one object for every job of that caller) unless it holds a -0, which the record's
 * encoding writes as 0.
 */
export function recordedCaller(caller: ExecutionCaller | undefined): unknown {
  if (caller === undefined || RECORDED_AS_IS.has(caller)) return caller;
  return toJsonSafe(caller, 'caller');
}
