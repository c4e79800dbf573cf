/**
 * The value domain of a 2.0 plan (docs/api.md, "Plan version 2.0"): plain JSON data only, within
 * bounds. `copyGoverned` walks a value once and returns a detached copy of it, or the first
 * reason it is outside the domain. It runs no code of the value: a proxy is refused before any
 * trap could run, and the rest is read through property descriptors (no getter is called).
 * Aliases are kept (the same object twice is copied once, as one object); cycles are refused.
 */
import { types } from 'node:util';
import { ErrorCode } from '../errors/error-codes.js';

/** The bounds of a 2.0 plan's inputs (docs/api.md, "Plan version 2.0"). */
export const GOVERNED_LIMITS = Object.freeze({
  /** Levels of nesting: the outermost object or array is level 1. */
  depth: 128,
  /** Objects and arrays, each distinct one counted once. */
  containers: 10_000,
  /** Properties and array elements, over the distinct containers. */
  edges: 100_000,
  /** UTF-16 code units of every string value and key. */
  chars: 1_048_576,
});

export type GovernedValueCode =
  | typeof ErrorCode.VALUE_NOT_PLAIN_DATA
  | typeof ErrorCode.VALUE_TOO_DEEP
  | typeof ErrorCode.VALUE_TOO_MANY_CONTAINERS
  | typeof ErrorCode.VALUE_TOO_MANY_EDGES
  | typeof ErrorCode.VALUE_TOO_LONG;

/** Why a value is outside the domain: the code, where (keys from the root) and what was found. */
export interface GovernedProblem {
  readonly code: GovernedValueCode;
  readonly path: readonly (string | number)[];
  /** `a Date`, `a cycle`, `more than 128 levels deep`... */
  readonly what: string;
}

/**
 * What the values walked so far have used. One budget is shared by every step input of a plan
 * (so the bounds hold for the plan); a resolved input at step time gets a budget of its own.
 */
export class GovernedBudget {
  containers = 0;
  edges = 0;
  chars = 0;

  /** True once a bound of the budget was passed. */
  spent(): boolean {
    return (
      this.containers > GOVERNED_LIMITS.containers ||
      this.edges > GOVERNED_LIMITS.edges ||
      this.chars > GOVERNED_LIMITS.chars
    );
  }
}

export type GovernedCopy =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly problem: GovernedProblem };

interface Seen {
  readonly copy: object;
  /** Levels of the deepest path below and including this container; -1 while it is walked. */
  height: number;
}

const FAIL: unique symbol = Symbol('governed.fail');
type Walked = unknown;

/** What a non-plain object is, named without running any of its code. */
function kindOf(value: object): string {
  if (types.isDate(value)) return 'a Date';
  if (types.isMap(value)) return 'a Map';
  if (types.isSet(value)) return 'a Set';
  if (types.isRegExp(value)) return 'a RegExp';
  if (types.isBoxedPrimitive(value)) return 'a boxed primitive';
  if (types.isPromise(value)) return 'a Promise';
  if (types.isNativeError(value)) return 'an Error';
  if (types.isTypedArray(value) || types.isAnyArrayBuffer(value)) return 'binary data';
  if (Array.isArray(value)) return 'an array that is not a plain array';
  return 'a class instance';
}

class Walker {
  readonly #budget: GovernedBudget;
  readonly #freeze: boolean;
  readonly #path: (string | number)[] = [];
  // The containers walked so far: the first in two fields, the rest in a map made for a second
  // one (a value of one object, as most effects and inputs are, allocates no map).
  #firstValue: object | undefined;
  #first: Seen | undefined;
  #seen: Map<object, Seen> | undefined;
  /** The height of the container `#value` returned last (0 for a scalar). */
  #height = 0;
  problem: GovernedProblem | undefined;

  constructor(budget: GovernedBudget, freeze: boolean) {
    this.#budget = budget;
    this.#freeze = freeze;
  }

  #fail(code: GovernedValueCode, what: string): typeof FAIL {
    this.problem = { code, path: [...this.#path], what };
    return FAIL;
  }

  /** `depth`: the containers above the value. */
  value(value: unknown, depth: number): Walked {
    this.#height = 0;
    switch (typeof value) {
      case 'string':
        this.#budget.chars += value.length;
        if (this.#budget.chars > GOVERNED_LIMITS.chars)
          return this.#fail(
            ErrorCode.VALUE_TOO_LONG,
            `over ${GOVERNED_LIMITS.chars} characters in all`,
          );
        return value;
      case 'number':
        if (Number.isFinite(value)) return value;
        return this.#fail(ErrorCode.VALUE_NOT_PLAIN_DATA, String(value));
      case 'boolean':
        return value;
      case 'undefined':
        return this.#fail(ErrorCode.VALUE_NOT_PLAIN_DATA, 'undefined');
      case 'bigint':
        return this.#fail(ErrorCode.VALUE_NOT_PLAIN_DATA, 'a bigint');
      case 'symbol':
        return this.#fail(ErrorCode.VALUE_NOT_PLAIN_DATA, 'a symbol');
      case 'function':
        return this.#fail(ErrorCode.VALUE_NOT_PLAIN_DATA, 'a function');
      default:
        return value === null ? null : this.#container(value as object, depth);
    }
  }

  #container(value: object, depth: number): Walked {
    // First: every later read of a proxy would run its traps.
    if (types.isProxy(value)) return this.#fail(ErrorCode.VALUE_NOT_PLAIN_DATA, 'a proxy');
    const seen = this.#firstValue === value ? this.#first : this.#seen?.get(value);
    if (seen !== undefined) {
      if (seen.height < 0) return this.#fail(ErrorCode.VALUE_NOT_PLAIN_DATA, 'a cycle');
      if (depth + seen.height > GOVERNED_LIMITS.depth) return this.#tooDeep();
      this.#height = seen.height;
      return seen.copy;
    }
    if (depth + 1 > GOVERNED_LIMITS.depth) return this.#tooDeep();
    if (++this.#budget.containers > GOVERNED_LIMITS.containers) {
      return this.#fail(
        ErrorCode.VALUE_TOO_MANY_CONTAINERS,
        `over ${GOVERNED_LIMITS.containers} objects and arrays in all`,
      );
    }
    const prototype: unknown = Object.getPrototypeOf(value);
    const isArray = Array.isArray(value);
    if (
      isArray ? prototype !== Array.prototype : prototype !== Object.prototype && prototype !== null
    )
      return this.#fail(ErrorCode.VALUE_NOT_PLAIN_DATA, kindOf(value));
    const keys = Reflect.ownKeys(value);
    const entry: Seen = { copy: isArray ? [] : {}, height: -1 };
    if (this.#first === undefined) {
      this.#firstValue = value;
      this.#first = entry;
    } else (this.#seen ??= new Map()).set(value, entry);
    const walked = isArray
      ? this.#array(value as unknown[], keys, entry.copy as unknown[], depth)
      : this.#object(value, keys, entry.copy as Record<string, unknown>, depth);
    if (walked === FAIL) return FAIL;
    if (this.#freeze) Object.freeze(entry.copy);
    this.#height = entry.height = walked;
    return entry.copy;
  }

  #tooDeep(): typeof FAIL {
    return this.#fail(ErrorCode.VALUE_TOO_DEEP, `over ${GOVERNED_LIMITS.depth} levels deep`);
  }

  /** Counts edges before any is walked, so a huge array is refused at once. */
  #edges(count: number): boolean {
    this.#budget.edges += count;
    return this.#budget.edges <= GOVERNED_LIMITS.edges;
  }

  /** Why an own property is not plain data (an accessor, non-enumerable), or undefined. */
  #problemOf(descriptor: PropertyDescriptor): string | undefined {
    if (!('value' in descriptor)) return 'an accessor (getter or setter)';
    if (descriptor.enumerable !== true) return 'a non-enumerable property';
    return undefined;
  }

  /** Walks the elements; returns the height of the array, or FAIL. */
  #array(array: unknown[], keys: readonly (string | symbol)[], copy: unknown[], depth: number) {
    const { length } = array;
    // An ordinary array lists its index keys first, in order, then `length`.
    if (keys.length < length + 1)
      return this.#fail(ErrorCode.VALUE_NOT_PLAIN_DATA, 'a sparse array');
    if (keys.length > length + 1) {
      const extra = keys.find((key, at) => at >= length && key !== 'length');
      if (typeof extra === 'symbol')
        return this.#fail(ErrorCode.VALUE_NOT_PLAIN_DATA, 'an array with a symbol key');
      return this.#fail(
        ErrorCode.VALUE_NOT_PLAIN_DATA,
        'an array with a property that is not an element',
      );
    }
    if (!this.#edges(length)) return this.#tooManyEdges();
    let height = 0;
    for (let index = 0; index < length; index++) {
      this.#path.push(index);
      const descriptor = Reflect.getOwnPropertyDescriptor(array, index);
      if (descriptor === undefined)
        return this.#fail(ErrorCode.VALUE_NOT_PLAIN_DATA, 'a sparse array');
      const problem = this.#problemOf(descriptor);
      if (problem !== undefined) return this.#fail(ErrorCode.VALUE_NOT_PLAIN_DATA, problem);
      const element = this.value(descriptor.value, depth + 1);
      if (element === FAIL) return FAIL;
      if (this.#height > height) height = this.#height;
      copy.push(element);
      this.#path.pop();
    }
    return height + 1;
  }

  #tooManyEdges(): typeof FAIL {
    return this.#fail(
      ErrorCode.VALUE_TOO_MANY_EDGES,
      `over ${GOVERNED_LIMITS.edges} properties and elements in all`,
    );
  }

  /** Walks the properties; returns the height of the object, or FAIL. */
  #object(
    object: object,
    keys: readonly (string | symbol)[],
    copy: Record<string, unknown>,
    depth: number,
  ) {
    if (!this.#edges(keys.length)) return this.#tooManyEdges();
    let height = 0;
    for (const key of keys) {
      if (typeof key === 'symbol')
        return this.#fail(ErrorCode.VALUE_NOT_PLAIN_DATA, 'a symbol key');
      this.#path.push(key);
      if (key === '__proto__')
        return this.#fail(ErrorCode.VALUE_NOT_PLAIN_DATA, 'an own __proto__ key');
      const descriptor = Reflect.getOwnPropertyDescriptor(object, key) as PropertyDescriptor;
      const problem = this.#problemOf(descriptor);
      if (problem !== undefined) return this.#fail(ErrorCode.VALUE_NOT_PLAIN_DATA, problem);
      this.#budget.chars += key.length;
      if (this.#budget.chars > GOVERNED_LIMITS.chars)
        return this.#fail(
          ErrorCode.VALUE_TOO_LONG,
          `over ${GOVERNED_LIMITS.chars} characters in all`,
        );
      const walked = this.value(descriptor.value, depth + 1);
      if (walked === FAIL) return FAIL;
      if (this.#height > height) height = this.#height;
      copy[key] = walked;
      this.#path.pop();
    }
    return height + 1;
  }
}

/**
 * A detached copy of `value` if it is in the domain (deep-frozen when `freeze`), counted against
 * `budget`; else the first problem found. Never throws and runs no code of the value.
 */
export function copyGoverned(
  value: unknown,
  budget: GovernedBudget = new GovernedBudget(),
  freeze = true,
): GovernedCopy {
  const walker = new Walker(budget, freeze);
  const copy = walker.value(value, 0);
  if (copy === FAIL) return { ok: false, problem: walker.problem as GovernedProblem };
  return { ok: true, value: copy };
}

/**
 * A fresh mutable copy of a value `copyGoverned` made (plain data, no cycles, at most 128 levels
 * deep): what the capability receives, so nothing it does reaches the authorizer's copy or the
 * record. Aliases stay aliases.
 */
export function cloneGoverned(value: unknown, copies?: Map<object, object>): unknown {
  if (typeof value !== 'object' || value === null) return value;
  const done = copies?.get(value);
  if (done !== undefined) return done;
  const seen = copies ?? new Map<object, object>();
  if (Array.isArray(value)) {
    const copy: unknown[] = [];
    seen.set(value, copy);
    for (const element of value) copy.push(cloneGoverned(element, seen));
    return copy;
  }
  const copy: Record<string, unknown> = {};
  seen.set(value, copy);
  for (const key of Object.keys(value))
    copy[key] = cloneGoverned((value as Record<string, unknown>)[key], seen);
  return copy;
}

/** `input.a.0.b` for messages: the field as admission names it. */
export function governedField(path: readonly (string | number)[]): string {
  return path.length === 0 ? 'input' : `input.${path.join('.')}`;
}
