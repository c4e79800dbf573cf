import { ErrorCode } from '../errors/error-codes.js';
import { types } from 'node:util';
import type { ExecutionCaller } from './execution-caller.js';
import { chainProblem } from './actor-chain.js';
import { createError } from '../errors/warrant-error.js';
import { boundText, describeThrown, describeValue, quoteText } from '../errors/describe-value.js';

/** Deepest nesting of a caller: the caller object is level 0, `caller.metadata` level 1. */
export const MAX_CALLER_DEPTH = 64;

/** Most values (objects, arrays and primitives, each counted where it appears) in one caller. */
export const MAX_CALLER_VALUES = 10_000;

/** Longest path named in a message. */
export const MAX_PATH_CHARS = 200;

function invalid(message: string): TypeError {
  return createError(TypeError, ErrorCode.EXECUTE_OPTIONS_INVALID, message);
}

/**
 * What makes a value not caller data. The runtime words each as `problem` says; an edge may word
 * some its own way (src/callers/caller-check.ts), but refuses exactly the same values.
 */
export type CallerDataProblem =
  | 'too-many-values'
  | 'not-finite'
  | 'not-data'
  | 'too-deep'
  | 'cycle'
  | 'array-subclass'
  | 'not-plain'
  | 'symbol-key'
  | 'named-array-key'
  | 'hole'
  | 'unreadable'
  | 'proto-key';

/** A value that is not JSON data, found at `path`. */
export class NotJsonData {
  constructor(
    readonly path: string,
    readonly kind: CallerDataProblem,
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
    throw new NotJsonData(where, 'unreadable', unreadable(error));
  }
}

/** Copies JSON data (see snapshotCaller), building frozen plain objects and arrays. */
class JsonCopier {
  readonly #refuseProtoKey: boolean;
  #values = MAX_CALLER_VALUES;
  readonly #ancestors = new Set<object>();
  /** Every container was frozen, no proxy, and every property a data property: it cannot change. */
  immutable = true;
  /** A -0 was copied (the record's encoding writes it as 0). */
  negativeZero = false;

  /** `refuseProtoKey`: a `"__proto__"` key is refused rather than copied as an own data property. */
  constructor(refuseProtoKey: boolean) {
    this.#refuseProtoKey = refuseProtoKey;
  }

  copy(value: unknown, path: string, depth: number): unknown {
    if (--this.#values < 0) {
      throw new NotJsonData(path, 'too-many-values', `holds more than ${MAX_CALLER_VALUES} values`);
    }
    const problem = primitiveProblem(value);
    if (problem !== undefined) {
      throw new NotJsonData(path, typeof value === 'number' ? 'not-finite' : 'not-data', problem);
    }
    if (typeof value !== 'object' || value === null) {
      if (Object.is(value, -0)) this.negativeZero = true;
      return value;
    }
    if (this.immutable && (types.isProxy(value) || !Object.isFrozen(value))) this.immutable = false;
    if (depth > MAX_CALLER_DEPTH) {
      throw new NotJsonData(path, 'too-deep', `is nested deeper than ${MAX_CALLER_DEPTH} levels`);
    }
    if (this.#ancestors.has(value)) {
      throw new NotJsonData(path, 'cycle', 'refers back to an object that contains it (a cycle)');
    }
    this.#ancestors.add(value);
    try {
      return this.#container(value, path, depth);
    } catch (error) {
      if (error instanceof NotJsonData) throw error;
      throw new NotJsonData(path, 'unreadable', unreadable(error));
    } finally {
      this.#ancestors.delete(value);
    }
  }

  #container(value: object, path: string, depth: number): object {
    const prototype: unknown = Object.getPrototypeOf(value);
    if (Array.isArray(value)) {
      if (prototype !== Array.prototype) {
        throw new NotJsonData(path, 'array-subclass', 'is an instance of an Array subclass');
      }
      return this.#array(value as unknown[], path, depth);
    }
    if (prototype !== Object.prototype && prototype !== null) {
      throw new NotJsonData(
        path,
        'not-plain',
        'is not a plain object or array (a class instance?)',
      );
    }
    const copy: Record<string, unknown> = {};
    for (const key of Reflect.ownKeys(value)) {
      if (typeof key === 'symbol') throw new NotJsonData(path, 'symbol-key', 'has a symbol key');
      const descriptor = Reflect.getOwnPropertyDescriptor(value, key);
      if (descriptor !== undefined && !('value' in descriptor)) this.immutable = false;
      // JSON holds own enumerable string keys only; other properties are not copied.
      if (descriptor === undefined || descriptor.enumerable !== true) continue;
      if (key === '__proto__' && this.#refuseProtoKey) {
        throw new NotJsonData(path, 'proto-key', 'has a "__proto__" key');
      }
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
      throw new NotJsonData(path, 'too-many-values', `holds more than ${MAX_CALLER_VALUES} values`);
    }
    for (const key of Reflect.ownKeys(value)) {
      if (typeof key === 'symbol') throw new NotJsonData(path, 'symbol-key', 'has a symbol key');
      if (key === 'length') continue;
      const index = Number(key);
      if (!(String(index) === key && Number.isInteger(index) && index >= 0 && index < length)) {
        throw new NotJsonData(
          keyPath(path, key),
          'named-array-key',
          'is a named key of an array, not an index',
        );
      }
    }
    const copy: unknown[] = [];
    for (let index = 0; index < length; index++) {
      const where = `${path}[${index}]`;
      if (!Object.hasOwn(value, index))
        throw new NotJsonData(where, 'hole', 'is a hole of a sparse array');
      if (this.immutable && !('value' in (Reflect.getOwnPropertyDescriptor(value, index) ?? {})))
        this.immutable = false;
      copy.push(this.copy(readItem(value, String(index), where), where, depth + 1));
    }
    return Object.freeze(copy);
  }
}

/** A deeply frozen copy of caller data, and what the copy learned about its source. */
export interface CallerDataCopy {
  readonly copy: unknown;
  /** The source was deeply frozen data (no proxy, no getter): it cannot change. */
  readonly immutable: boolean;
  /** The copy holds a -0 (the record's encoding writes it as 0). */
  readonly negativeZero: boolean;
}

/**
 * Copies `value` as caller data (see snapshotCaller), naming paths from `path`; the one check every
 * caller goes through, in the runtime and at the edges (docs/decisions.md, "Callers").
 * @throws NotJsonData at the first offending value; an edge also refuses a `"__proto__"` key.
 */
export function copyCallerData(
  value: object,
  path: string,
  refuseProtoKey: boolean,
): CallerDataCopy {
  const copier = new JsonCopier(refuseProtoKey);
  const copy = copier.copy(value, path, 0);
  return { copy, immutable: copier.immutable, negativeZero: copier.negativeZero };
}

/**
 * The first malformed field of copied caller data: `id` a string (non-empty when `idRequired`),
 * `scopes` an array of strings, `metadata` an object, `tenant` a string (a tenant of any other type
 * would read as no tenant, docs/api.md "Reading and tenants"); undefined when all hold.
 */
export function malformedField(
  caller: Readonly<Record<string, unknown>>,
  idRequired: boolean,
): 'id' | 'scopes' | 'metadata' | 'tenant' | undefined {
  const { id, scopes, metadata, tenant } = caller;
  if (idRequired ? typeof id !== 'string' || id === '' : id !== undefined && typeof id !== 'string')
    return 'id';
  if (
    scopes !== undefined &&
    (!Array.isArray(scopes) || !scopes.every((scope) => typeof scope === 'string'))
  )
    return 'scopes';
  if (
    metadata !== undefined &&
    (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata))
  )
    return 'metadata';
  if (tenant !== undefined && typeof tenant !== 'string') return 'tenant';
  return undefined;
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
 * @throws TypeError (EXECUTE_OPTIONS_INVALID) naming the path of the first offending value;
 * TypeError (CALLER_INVALID) for an `actor` chain the chain rules refuse (actor-chain.ts).
 */
export function snapshotCaller(caller: unknown): ExecutionCaller | undefined {
  if (caller === undefined) return undefined;
  if (typeof caller !== 'object' || caller === null) {
    throw invalid(`options.caller must be an object, got ${describeValue(caller)}`);
  }
  const known = SNAPSHOTS.get(caller);
  if (known !== undefined) return known;
  let copied: CallerDataCopy;
  try {
    copied = copyCallerData(caller, 'caller', false);
  } catch (error) {
    if (!(error instanceof NotJsonData)) throw error;
    const path = boundText(error.path, MAX_PATH_CHARS);
    throw invalid(`options.caller must be JSON data: ${path} ${error.problem}`);
  }
  const { copy } = copied;
  if (Array.isArray(copy)) throw invalid('options.caller must be an object, got an array');
  const fields = copy as Record<string, unknown>;
  // Approvals compare ids (self-approval) and the record names the caller by it: a string only.
  switch (malformedField(fields, false)) {
    case 'id':
      throw invalid(`options.caller.id must be a string, got ${describeValue(fields.id)}`);
    case 'scopes':
      throw invalid('options.caller.scopes must be an array of strings');
    case 'metadata':
      throw invalid(
        `options.caller.metadata must be an object, got ${describeValue(fields.metadata)}`,
      );
    case 'tenant':
      throw invalid(`options.caller.tenant must be a string, got ${describeValue(fields.tenant)}`);
  }
  // The actor chain (docs/api.md, "Callers: acting for someone"): its own code, so that a host
  // tells a refused chain from a caller that is not data.
  const chain = chainProblem(fields);
  if (chain !== undefined)
    throw createError(TypeError, ErrorCode.CALLER_INVALID, `options.caller.${chain}`);
  const snapshot = copy as ExecutionCaller;
  // A snapshot cannot change, and neither can a caller that was deeply frozen data: given again,
  // either gets this same snapshot, with nothing read or copied (docs/decisions.md, "Callers").
  SNAPSHOTS.set(snapshot, snapshot);
  if (copied.immutable) SNAPSHOTS.set(caller, snapshot);
  if (!copied.negativeZero) RECORDED_AS_IS.add(snapshot);
  return snapshot;
}

/** Each snapshot, by itself and by the deeply frozen caller it was taken from. */
const SNAPSHOTS = new WeakMap<object, ExecutionCaller>();

/** Snapshots that are their own record: JSON data that `toJsonSafe` would copy unchanged. */
const RECORDED_AS_IS = new WeakSet<object>();

/**
 * True when the snapshot is its own record: deeply frozen JSON data that the record's encoding
 * would copy unchanged (it holds no -0, which the encoding writes as 0).
 */
export function isRecordedAsIs(snapshot: ExecutionCaller): boolean {
  return RECORDED_AS_IS.has(snapshot);
}
