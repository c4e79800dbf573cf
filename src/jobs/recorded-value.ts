/**
 * A value as the record keeps it, with its digest: the one encoding (`toJsonSafe`, README
 * "Stores") and SHA-256 over the RFC 8785 canonical JSON of exactly that encoding, so a verifier
 * that reads the recorded value and canonicalizes it gets the same digest (docs/api.md, "The
 * decision record").
 */
import { digestJson } from '../json/canonical-json.js';
import { toJsonSafe } from '../json/json-value.js';
import { lazyField, setLazyField } from '../values/lazy-field.js';

/** Recorded in place of a value whose encoding could not be completed at all. */
const UNREADABLE = '[Unreadable]';

/** The digest of a recorded value; an absent value (undefined) is digested as `null`. */
export function digestRecorded(recorded: unknown): string {
  return digestJson(recorded === undefined ? null : recorded);
}

/**
 * A value as recorded, and its digest, computed on first read (docs/decisions.md, "The record's
 * digests on first read"): the value is JSON data no one changes once recorded, so the digest
 * read later is the one it had when recorded, and a record no one reads costs no SHA-256.
 */
export class RecordedValue {
  /** JSON data: what stores keep and `getJob` returns. */
  readonly value: unknown;
  #digest: string | undefined;

  constructor(value: unknown) {
    this.value = value;
  }

  /** `'sha256:'` + 64 lowercase hex. */
  get digest(): string {
    if (this.#digest === undefined) {
      try {
        this.#digest = digestRecorded(this.value);
      } catch {
        // No canonical text fits in a string (out of memory): the digest says so.
        this.#digest = digestRecorded(UNREADABLE);
      }
    }
    return this.#digest;
  }
}

/**
 * Encodes a value once, as recorded under `key` (see toJsonSafe); its digest is read from the
 * result. Never throws: `toJsonSafe` substitutes what it cannot read, and a value whose encoding
 * still fails (out of memory) is recorded as "[Unreadable]" and digested as such.
 */
export function recordValue(value: unknown, key: string): RecordedValue {
  try {
    return new RecordedValue(toJsonSafe(value, key));
  } catch {
    return new RecordedValue(UNREADABLE);
  }
}

/** A digest field: the digest of its recorded value, computed once, on first read. */
const DIGEST_FIELD = lazyField((source: RecordedValue) => source.digest);

/**
 * Sets `target[key]` to the digest of `source` as a field computed on first read
 * (src/values/lazy-field.ts); `target` may be frozen afterwards. One digest field per object.
 */
export function setDigestField(target: object, key: string, source: RecordedValue): void {
  setLazyField(target, key, DIGEST_FIELD, source);
}

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
