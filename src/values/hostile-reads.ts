/**
 * Reading values handed to the package root, which may be proxies, revoked proxies or objects with
 * throwing getters. Each helper turns such a throw into the caller's own coded error, so nothing
 * but a coded error escapes the root (docs/errors.md).
 */
import { boundText, describeThrown } from '../errors/describe-value.js';

/** Builds the coded error for a value that could not be read; `problem` is one short clause. */
export type ReadFailure = (problem: string) => Error;

function problemOf(error: unknown): string {
  return `could not be read (${boundText(describeThrown(error), 80)})`;
}

/** `target[key]`, read once; a getter or proxy trap that throws becomes `fail(...)`. */
export function readField(target: object, key: string, fail: ReadFailure): unknown {
  try {
    return (target as Record<string, unknown>)[key];
  } catch (error) {
    throw fail(problemOf(error));
  }
}

/** `Array.isArray(value)`; a revoked proxy (whose check throws) becomes `fail(...)`. */
export function isArrayValue(value: unknown, fail: ReadFailure): boolean {
  try {
    return Array.isArray(value);
  } catch (error) {
    throw fail(problemOf(error));
  }
}

/**
 * A copy of an array's elements, each read once: `length` first (it must be a safe integer no
 * larger than `max`), then every index. A throwing getter or trap becomes `fail(...)`.
 */
export function readArray(list: readonly unknown[], max: number, fail: ReadFailure): unknown[] {
  let length: unknown;
  try {
    length = list.length;
  } catch (error) {
    throw fail(problemOf(error));
  }
  if (typeof length !== 'number' || !Number.isSafeInteger(length) || length < 0 || length > max) {
    throw fail(`has an unusable length (at most ${max} entries are accepted)`);
  }
  const copy: unknown[] = [];
  for (let index = 0; index < length; index++) {
    try {
      copy.push(list[index]);
    } catch (error) {
      throw fail(`[${index}] ${problemOf(error)}`);
    }
  }
  return copy;
}

/** `Object.keys(target)`; a proxy trap that throws becomes `fail(...)`. */
export function readKeys(target: object, fail: ReadFailure): string[] {
  try {
    return Object.keys(target);
  } catch (error) {
    throw fail(problemOf(error));
  }
}

/**
 * True for a plain object: its prototype is `Object.prototype` or null (not an array, a Map, a
 * Date or a class instance). A revoked proxy or a throwing trap becomes `fail(...)`.
 */
export function isPlainObject(value: unknown, fail: ReadFailure): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || isArrayValue(value, fail)) return false;
  let prototype: unknown;
  try {
    prototype = Object.getPrototypeOf(value);
  } catch (error) {
    throw fail(problemOf(error));
  }
  return prototype === Object.prototype || prototype === null;
}
