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
 * Encodes a value now, as recordValue, and digests the encoding on first read of `digest`
 * (docs/decisions.md, "The record nearly free"): a step's input as authorized, whose digest the
 * authorizer, the decision and its event carry as fields read from this one (`setDigestField`).
 * The encoding is a detached copy made before the authorizer is asked, so nothing the authorizer
 * or the capability does later changes what the digest is taken of. Never throws.
 */
export function recordLazily(value: unknown, key: string): RecordedValue {
  let recorded: unknown;
  try {
    recorded = toJsonSafe(value, key);
  } catch {
    recorded = UNREADABLE;
  }
  return new LazilyDigested(recorded);
}

/** An internal record of a value (never handed out): its digest computed once, when read. */
class LazilyDigested implements RecordedValue {
  readonly value: unknown;
  #digest: string | undefined;

  constructor(value: unknown) {
    this.value = value;
  }

  get digest(): string {
    if (this.#digest === undefined) {
      try {
        this.#digest = digestRecorded(this.value);
      } catch {
        this.#digest = digestRecorded(UNREADABLE);
      }
    }
    return this.#digest;
  }

  /** True once the digest was read. */
  get digested(): boolean {
    return this.#digest !== undefined;
  }
}

/**
 * `recorded` with an `effect` beside it (docs/api.md, "Prepared effects"), its digest still
 * computed on first read when it was not read yet.
 */
export function recordedWithEffect(
  recorded: RecordedValue,
  effect: RecordedValue,
): RecordedValue & { readonly effect: RecordedValue } {
  if (recorded instanceof LazilyDigested && !recorded.digested)
    return Object.assign(new LazilyDigested(recorded.value), { effect });
  return { value: recorded.value, digest: recorded.digest, effect };
}

/**
 * A value already in the record's encoding (plain JSON data, detached and frozen: a prepared
 * effect, docs/api.md "Prepared effects"), its digest computed on first read.
 */
export function recordedAsIs(value: unknown): RecordedValue {
  return new LazilyDigested(value);
}

const RECORDED_DIGEST = lazyField((recorded: RecordedValue) => recorded.digest);
const EFFECT_DIGEST = lazyField(
  (recorded: { readonly effect: RecordedValue }) => recorded.effect.digest,
);

/** True when reading `recorded.digest` would compute it. */
function notDigested(recorded: RecordedValue): boolean {
  return recorded instanceof LazilyDigested && !recorded.digested;
}

/**
 * Adds `target[key]`, the digest of `recorded`: a plain value when it is already known, else a
 * field computed on first read from `recorded` (src/values/lazy-field.ts: at most one such field
 * per object). `key` must not be on `target` yet: a literal's placeholder turned into an accessor
 * cost the object its fast properties (a 10-step plan took 108 against 82 µs, same run).
 */
export function setDigestField(target: object, key: string, recorded: RecordedValue): void {
  if (notDigested(recorded)) setLazyField(target, key, RECORDED_DIGEST, recorded);
  else (target as Record<string, unknown>)[key] = recorded.digest;
}

/**
 * Adds `target[key]`, the digest of `recorded.effect`, as setDigestField does; the object's lazy
 * fields all read from `recorded` (its input digest's too).
 */
export function setEffectDigestField(
  target: object,
  key: string,
  recorded: RecordedValue & { readonly effect: RecordedValue },
): void {
  if (notDigested(recorded.effect)) setLazyField(target, key, EFFECT_DIGEST, recorded);
  else (target as Record<string, unknown>)[key] = recorded.effect.digest;
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
