/**
 * The tool calls an `McpAdapter` answered "awaiting approval", so that the same call retried while
 * its request is pending answers that request again instead of asking for a new one (docs/api.md,
 * "new McpAdapter"; docs/decisions.md, "MCP job status"). A call is keyed by the SHA-256 of the
 * canonical JSON of `[tool name, caller id, caller tenant, arguments]`; only callers with an id
 * are keyed (as for idempotency keys, calls without a caller id are never deduplicated). The
 * table holds at most `MAX_PENDING_CALLS` keys: the oldest goes first.
 */
import type { ExecutionCaller } from '../callers/execution-caller.js';
import { canonicalJson, sha256Digest } from '../json/canonical-json.js';

/** The most calls one adapter remembers. */
export const MAX_PENDING_CALLS = 1000;

/** The key of a call, or undefined when the call is never deduplicated. */
export function pendingCallKey(
  tool: string,
  caller: ExecutionCaller | undefined,
  args: unknown,
): string | undefined {
  const id = caller?.id;
  if (typeof id !== 'string') return undefined;
  const tenant = typeof caller?.tenant === 'string' ? caller.tenant : null;
  try {
    return sha256Digest(canonicalJson([tool, id, tenant, args]));
  } catch {
    // Arguments canonical JSON cannot encode: the call is simply not remembered.
    return undefined;
  }
}

/**
 * Key → the call in flight or answered: a promise of the job id it left awaiting approval
 * (undefined when it did not stop for approval). A Map in insertion order, so the oldest key is
 * the first.
 */
export class PendingCalls {
  readonly #calls = new Map<string, Promise<string | undefined>>();
  readonly #max: number;

  constructor(max: number = MAX_PENDING_CALLS) {
    this.#max = max;
  }

  get size(): number {
    return this.#calls.size;
  }

  get(key: string): Promise<string | undefined> | undefined {
    return this.#calls.get(key);
  }

  /** Remembers a call; the oldest one goes when the table is full. */
  set(key: string, call: Promise<string | undefined>): void {
    this.#calls.delete(key);
    this.#calls.set(key, call);
    while (this.#calls.size > this.#max) {
      const oldest = this.#calls.keys().next().value as string;
      this.#calls.delete(oldest);
    }
  }

  /** Forgets `key` if it still holds `call` (a later call may have replaced it). */
  forget(key: string, call: Promise<string | undefined>): void {
    if (this.#calls.get(key) === call) this.#calls.delete(key);
  }
}
