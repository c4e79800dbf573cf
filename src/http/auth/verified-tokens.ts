/**
 * Tokens already verified, so a client that sends the same JWT on every request pays for the
 * signature once (docs/decisions.md "Authentication modes"). An entry lives until the token
 * expires (with the clock tolerance) or `maxAgeMs` passes, whichever is first, so a key taken
 * out of a JWKS stops being honoured within `maxAgeMs`. Only accepted tokens enter; the oldest
 * entry leaves when the cache is full. Keys are SHA-256 digests, not the tokens.
 */
import type { AuthSuccess } from './authenticator.js';
import { sha256 } from './token.js';

export interface VerifiedTokensOptions {
  readonly maxEntries: number;
  readonly maxAgeMs: number;
  /** Milliseconds since the epoch; `Date.now` by default. */
  readonly now?: () => number;
}

export class VerifiedTokens {
  readonly #entries = new Map<string, { result: AuthSuccess; expiresAt: number }>();
  readonly #options: VerifiedTokensOptions;
  readonly #now: () => number;

  constructor(options: VerifiedTokensOptions) {
    this.#options = options;
    this.#now = options.now ?? (() => Date.now());
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The accepted result of `token`, while its entry is still valid. */
  get(token: string): AuthSuccess | undefined {
    const key = sha256(token).toString('base64');
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    if (this.#now() < entry.expiresAt) return entry.result;
    this.#entries.delete(key);
    return undefined;
  }

  /** Remembers an accepted token until `expiresAt` (ms), at most `maxAgeMs` from now. */
  set(token: string, result: AuthSuccess, expiresAt: number): void {
    const now = this.#now();
    const until = Math.min(expiresAt, now + this.#options.maxAgeMs);
    if (!(until > now) || this.#options.maxEntries <= 0) return;
    const key = sha256(token).toString('base64');
    this.#entries.delete(key);
    if (this.#entries.size >= this.#options.maxEntries) {
      const oldest = this.#entries.keys().next();
      if (oldest.done !== true) this.#entries.delete(oldest.value);
    }
    this.#entries.set(key, { result, expiresAt: until });
  }
}
