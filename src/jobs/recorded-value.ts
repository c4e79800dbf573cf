/**
 * A value as the record keeps it, with its digest: the one encoding (`toJsonSafe`,
 * docs/guide/stores.md, "Values JSON cannot hold") and SHA-256 over the RFC 8785 canonical JSON of
 * exactly that encoding, so a verifier that reads the recorded value and canonicalizes it gets the
 * same digest (docs/api.md, "The decision record").
 */
import { digestJson } from '../json/canonical-json.js';
import { toJsonSafe } from '../json/json-value.js';
import { lazyField, setLazyField } from '../values/lazy-field.js';

export interface RecordedValue {
  /** JSON data: what stores keep and `getJob` returns. */
  readonly value: unknown;
  /** `'sha256:'` + 64 lowercase hex. */
  readonly digest: string;
}

/** Recorded in place of a value whose encoding could not be completed at all. */
const UNREADABLE = '[Unreadable]';

/** The digest of a recorded value; an absent value (undefined) is digested as `null`. */
export function digestRecorded(recorded: unknown): string {
  return digestJson(recorded === undefined ? null : recorded);
}

/**
 * Encodes a value once, as recorded under `key` (see toJsonSafe), and digests the encoding. Never throws: `toJsonSafe` substitutes what it
 * cannot read, and a value whose encoding still fails (out of memory for its text) is recorded
 * as "[Unreadable]" and digested as such.
 */
export function recordValue(value: unknown, key: string): RecordedValue {
  try {
    const recorded = toJsonSafe(value, key);
    return { value: recorded, digest: digestRecorded(recorded) };
  } catch {
    return { value: UNREADABLE, digest: digestRecorded(UNREADABLE) };
  }
}

/**
 * Sets `target[key]` to `digestOf(source)` as a field computed once, on first read
 * (src/values/lazy-field.ts; docs/decisions.md, "The record nearly free"): `source` must not
 * change meanwhile in what `digestOf` reads. A digest whose text cannot be made (longer than a
 * string can be) reads as the digest of "[Unreadable]".
 */
export function setDigestOnRead<S>(
  target: object,
  key: string,
  source: S,
  digestOf: (source: S) => string,
): void {
  setLazyField(target, key, DIGEST, new LazyDigest(source, digestOf));
}

/**
 * Encodes a value once, as recorded under `key`, and sets `target[digestKey]` to the digest of
 * that encoding, computed on first read: a step's result, whose digest only its
 * `capability.completed` event carries. Returns the encoding; never throws, as recordValue.
 */
export function recordWithLazyDigest(
  value: unknown,
  key: string,
  target: object,
  digestKey: string,
): unknown {
  let recorded: unknown;
  try {
    recorded = toJsonSafe(value, key);
  } catch {
    recorded = UNREADABLE;
  }
  setDigestOnRead(target, digestKey, recorded, digestRecorded);
  return recorded;
}

/** A digest of its source, computed once. */
class LazyDigest<S> {
  readonly #source: S;
  readonly #digestOf: (source: S) => string;
  #digest: string | undefined;

  constructor(source: S, digestOf: (source: S) => string) {
    this.#source = source;
    this.#digestOf = digestOf;
  }

  get digest(): string {
    if (this.#digest === undefined) {
      try {
        this.#digest = this.#digestOf(this.#source);
      } catch {
        this.#digest = digestRecorded(UNREADABLE);
      }
    }
    return this.#digest;
  }
}

const DIGEST = lazyField((source: { readonly digest: string }) => source.digest);

/** True when two recorded values (JSON data) are the same data. */
export function sameRecordedValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let index = 0; index < a.length; index++) {
      if (!sameRecordedValue(a[index], b[index])) return false;
    }
    return true;
  }
  if (Array.isArray(b)) return false;
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  const keys = Object.keys(left);
  if (keys.length !== Object.keys(right).length) return false;
  for (const key of keys) {
    if (!Object.hasOwn(right, key) || !sameRecordedValue(left[key], right[key])) return false;
  }
  return true;
}
