import { types } from 'node:util';

/** How long a quoted piece of user text may be in a message (reference texts, ids, paths). */
export const MAX_QUOTED_CHARS = 80;

/**
 * `text` cut to at most `max` characters, the cut marked with `...`; a surrogate pair is never
 * split. Costs nothing for short text and never copies more than `max` characters of long text.
 */
export function boundText(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = Math.max(0, max - 3);
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return `${text.slice(0, end)}...`;
}

/**
 * User text quoted for a message: cut to MAX_QUOTED_CHARS first, then JSON-quoted, so a 1 MiB id
 * repeated in many messages costs 80 characters each, never its own length.
 */
export function quoteText(text: string): string {
  return JSON.stringify(boundText(text, MAX_QUOTED_CHARS));
}

/**
 * Safe text for values that came from users: quoted with JSON.stringify where possible and cut to
 * 80 characters (docs/errors.md: one-line messages). Never throws, whatever the value (proxies,
 * cycles, bigint).
 */
export function describeValue(value: unknown): string {
  let text: string;
  try {
    if (typeof value === 'string') text = JSON.stringify(value.slice(0, MAX_QUOTED_CHARS));
    else if (value === undefined) text = 'undefined';
    else if (typeof value === 'bigint') text = `${value}n`;
    else if (typeof value === 'function') text = 'a function';
    else if (typeof value === 'symbol') text = 'a symbol';
    else if (Array.isArray(value)) text = 'an array';
    else if (typeof value === 'object' && value !== null) text = 'an object';
    else text = String(value);
  } catch {
    text = 'an unreadable value';
  }
  return boundText(text, MAX_QUOTED_CHARS);
}

/**
 * True for an error object of any realm: a native error (a brand check, so an error made by
 * `node:vm` or in another realm counts) or anything inheriting from this realm's Error.
 */
function isErrorObject(value: unknown): value is Error {
  return types.isNativeError(value) || value instanceof Error;
}

/** The message of a thrown value, for recording in a job. Never throws. */
export function describeThrown(thrown: unknown): string {
  try {
    if (isErrorObject(thrown)) {
      const message: unknown = thrown.message;
      if (typeof message === 'string' && message !== '') return message;
      const name: unknown = thrown.name;
      return typeof name === 'string' && name !== '' ? name : 'Error';
    }
    if (typeof thrown === 'string') return thrown === '' ? 'Error' : thrown;
  } catch {
    return 'An unreadable error was thrown';
  }
  return `A non-error value was thrown: ${describeValue(thrown)}`;
}
