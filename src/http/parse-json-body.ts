/**
 * The JSON body parser of the server. `JSON.parse` never applies a `__proto__` key (it creates
 * an own property), but code downstream might (Object.assign, merges), so a body holding a
 * `__proto__` key or a `constructor.prototype` path is refused outright. The scan is iterative,
 * so deeply nested bodies cannot overflow the stack. Nesting deeper than `MAX_JSON_DEPTH` is
 * refused before anything else, by one pass over the text.
 */
import { parseJson } from '../json/parse-json.js';
import { MAX_JSON_DEPTH, exceedsJsonDepth } from './json-depth.js';

export class JsonBodyError extends Error {
  override readonly name = 'JsonBodyError';
  readonly statusCode = 400;
}

function hasForbiddenKey(root: unknown): boolean {
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const value = stack.pop();
    if (typeof value !== 'object' || value === null) continue;
    if (Object.hasOwn(value, '__proto__')) return true;
    const constructor = (value as Record<string, unknown>).constructor;
    if (
      Object.hasOwn(value, 'constructor') &&
      typeof constructor === 'object' &&
      constructor !== null &&
      Object.hasOwn(constructor, 'prototype')
    ) {
      return true;
    }
    for (const key of Object.keys(value)) stack.push((value as Record<string, unknown>)[key]);
  }
  return false;
}

export function parseJsonBody(text: string): unknown {
  if (text.trim() === '') throw new JsonBodyError('Empty JSON body');
  if (exceedsJsonDepth(text))
    throw new JsonBodyError(`JSON body is nested deeper than ${MAX_JSON_DEPTH} levels`);
  let value: unknown;
  try {
    value = parseJson(text);
  } catch {
    throw new JsonBodyError('Malformed JSON body');
  }
  if (hasForbiddenKey(value)) {
    throw new JsonBodyError(
      'JSON body contains a forbidden "__proto__" or "constructor.prototype" key',
    );
  }
  return value;
}

/** True for a parsed body that is a JSON object (not an array, not null): the shape the routes
 * that take fields accept. */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
