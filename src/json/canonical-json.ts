/**
 * RFC 8785 (JSON Canonicalization Scheme) text of a JSON value, and the SHA-256 digests the
 * decision record uses (docs/api.md, "The decision record"; docs/decisions.md, "Canonical JSON").
 *
 * The input must already be JSON data: plain objects, arrays, strings, finite numbers, booleans
 * and null, as `toJsonSafe` returns them. JCS serializes strings and numbers exactly as
 * ECMAScript's `JSON.stringify` does, so only the object key order is ours: keys sorted by their
 * UTF-16 code units, which is what `Array.prototype.sort` does without a comparator.
 */
import { createHmac, hash } from 'node:crypto';

/**
 * A string as `JSON.stringify` writes it. Most texts of a record need no escape: they are quoted
 * as they are, without the call (a third of the writer's time for small values,
 * bench/runtime/execute.bench.ts); any control character, quote, backslash or surrogate goes
 * through `JSON.stringify`, which escapes lone surrogates as RFC 8785 wants.
 */
function quote(text: string): string {
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code < 0x20 || code === 0x22 || code === 0x5c || (code >= 0xd800 && code <= 0xdfff))
      return JSON.stringify(text);
  }
  return `"${text}"`;
}

/**
 * Sorts keys by UTF-16 code units, as `Array.prototype.sort` without a comparator does. The few
 * keys of a record's objects are sorted in place by insertion: `sort` copies the array first,
 * which was a tenth of what a job allocated (bench/runtime/execute.bench.ts).
 */
function sortKeys(keys: string[]): void {
  const count = keys.length;
  if (count > 16) {
    keys.sort();
    return;
  }
  for (let index = 1; index < count; index++) {
    const key = keys[index] as string;
    let at = index - 1;
    while (at >= 0 && (keys[at] as string) > key) {
      keys[at + 1] = keys[at] as string;
      at--;
    }
    keys[at + 1] = key;
  }
}

// Strings are built by concatenation: for the small values of a record this was a third
// faster than collecting parts in an array (bench/runtime/execute.bench.ts).
function write(value: unknown): string {
  if (typeof value === 'string') return quote(value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) {
      throw new TypeError('canonical JSON has no form for a non-finite number');
    }
    // ECMAScript's Number-to-String, as JSON.stringify writes a finite number (-0 is "0").
    return `${value}`;
  }
  if (value === null || typeof value !== 'object') {
    const text = JSON.stringify(value);
    if (text === undefined) throw new TypeError(`canonical JSON has no form for ${typeof value}`);
    return text;
  }
  if (Array.isArray(value)) {
    let out = '[';
    for (let index = 0; index < value.length; index += 1) {
      if (index > 0) out += ',';
      out += write(value[index]);
    }
    return `${out}]`;
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record);
  sortKeys(keys);
  let out = '{';
  let first = true;
  for (let index = 0; index < keys.length; index++) {
    const key = keys[index] as string;
    const item = record[key];
    if (item === undefined) continue;
    if (!first) out += ',';
    first = false;
    out += quote(key);
    out += ':';
    out += write(item);
  }
  return `${out}}`;
}

/** The canonical text of a JSON value. Throws TypeError for a value JSON cannot hold. */
export function canonicalJson(value: unknown): string {
  return write(value);
}

/**
 * `'sha256:' + hex(SHA-256(text))` (UTF-8), the form of every digest in the record. The one-shot
 * `crypto.hash` costs a fifth of a `createHash` object for the short texts of a record.
 */
export function sha256Digest(text: string): string {
  return keptFlat(`sha256:${hash('sha256', text, 'hex')}`);
}

/**
 * A digest lives as long as its record (the memory store keeps 1,000 jobs by default, two
 * digests per step). Joined from two parts it is held as both until read; reading a character
 * makes it one flat string, and the collector then drops the parts: a fifth less memory per
 * digest (bench/runtime/execute.bench.ts). The same holds for every text a record keeps that
 * was joined from parts: each event id joins the job id with its sequence number.
 */
export function keptFlat(text: string): string {
  text.charCodeAt(0);
  return text;
}

/** `'hmac-sha256:' + hex(HMAC-SHA-256(key, text))`: a chain hash under an audit key. */
export function hmacSha256Digest(key: string, text: string): string {
  return `hmac-sha256:${createHmac('sha256', key).update(text, 'utf8').digest('hex')}`;
}

/** The digest of a JSON value: SHA-256 of its canonical text. */
export function digestJson(value: unknown): string {
  return sha256Digest(canonicalJson(value));
}
