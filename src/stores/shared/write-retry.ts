/**
 * Retries a durable store's writes through a dropped connection or a locked database (docs/api.md,
 * "Store outages"; docs/decisions.md, "Store outages"). The one place the SQLite and PostgreSQL
 * stores' job writes go through on their way to the driver: a write that fails on a transient
 * error (a connection closed under it, a server shutting down, a database locked beyond its busy
 * time-out) is tried again after a back-off, on a fresh connection, at most WRITE_RETRY.attempts
 * times within WRITE_RETRY.totalMs; any other error, or the last transient one, ends it.
 *
 * A write is never applied twice. When the connection died after the statement was sent, the
 * commit may have landed or not: before each new attempt the store looks (`settle`, with
 * `unwrittenOf`): what it finds written, with the same chain hashes, is done; only the rest is
 * written again. A write
 * that ran out of attempts rejects with STORE_UNAVAILABLE (a one-line message without the
 * driver's text; the driver's error is `cause`).
 *
 * It loads no driver: errors are told apart by their codes and messages alone.
 */
import { ErrorCode } from '../../errors/error-codes.js';
import { createError } from '../../errors/warrant-error.js';

export interface WriteRetryPolicy {
  /** Attempts in all, the first included. */
  readonly attempts: number;
  /** No attempt starts later than this after the first one (ms). */
  readonly totalMs: number;
  /** Wait before the second attempt (ms); doubled before each next one, up to `maxDelayMs`. */
  readonly firstDelayMs: number;
  readonly maxDelayMs: number;
}

/** The stores' policy: 5 attempts within 10 s, waiting 100, 200, 400, 800 ms between them. */
export const WRITE_RETRY: WriteRetryPolicy = Object.freeze({
  attempts: 5,
  totalMs: 10_000,
  firstDelayMs: 100,
  maxDelayMs: 2_000,
});

/**
 * PostgreSQL SQLSTATEs after which the same write may succeed on another connection: class 08
 * (connection exception), 57P01-57P03 (admin or crash shutdown, cannot connect now) and 53300
 * (too many connections).
 */
const PG_TRANSIENT = /^(08[0-9A-Z]{3}|57P0[123]|53300)$/;

/** Socket errors of a connection that went away. */
const SOCKET_TRANSIENT = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'EPIPE',
  'ETIMEDOUT',
  'ECONNABORTED',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);

/** node-postgres's own errors for a connection that ended (they carry no code). */
const PG_CLIENT_TRANSIENT =
  /^(Connection terminated|Client has encountered a connection error|Client was closed|timeout exceeded when trying to connect|Connection terminated due to connection timeout)/;

/**
 * True for an error after which the same write may succeed later or on a fresh connection:
 * a lost PostgreSQL connection or a server going down, and SQLite's SQLITE_BUSY and SQLITE_LOCKED
 * (their extended codes too). SQLITE_FULL, SQLITE_IOERR, constraint and data errors are not:
 * trying again changes nothing, or hides a fault.
 */
export function isTransientStoreError(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (PG_TRANSIENT.test(code) || SOCKET_TRANSIENT.has(code)) return true;
    if (/^SQLITE_(BUSY|LOCKED)(_|$)/.test(code)) return true;
    return false;
  }
  const message = (error as { message?: unknown }).message;
  return typeof message === 'string' && PG_CLIENT_TRANSIENT.test(message);
}

/** True for the error a write rejects with once the store stayed unavailable (STORE_UNAVAILABLE). */
export function isStoreUnavailable(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === ErrorCode.STORE_UNAVAILABLE;
}

/** Told when the store's writes start failing on transient errors, and when one succeeds again. */
export type StoreOutageListener = (state: 'down' | 'up') => void;

/**
 * Whether a store's writes are failing on transient errors: `down` on the first such failure,
 * `up` on the next write that succeeds, each told once per outage.
 */
export class StoreHealth {
  readonly #listener: StoreOutageListener | undefined;
  #down = false;

  constructor(listener?: StoreOutageListener) {
    this.#listener = listener;
  }

  get down(): boolean {
    return this.#down;
  }

  failed(): void {
    if (this.#down) return;
    this.#down = true;
    this.#tell('down');
  }

  succeeded(): void {
    if (!this.#down) return;
    this.#down = false;
    this.#tell('up');
  }

  #tell(state: 'down' | 'up'): void {
    try {
      this.#listener?.(state);
    } catch {
      // A failing listener changes nothing about the write.
    }
  }
}

function unavailable(cause: unknown, attempts: number, elapsedMs: number): Error {
  const what =
    typeof (cause as { code?: unknown } | null)?.code === 'string' &&
    /^SQLITE_/.test((cause as { code: string }).code)
      ? 'the database stayed locked'
      : 'the connection to the database was lost';
  return createError(
    Error,
    ErrorCode.STORE_UNAVAILABLE,
    `The job store is unavailable: ${what} (${attempts} ${attempts === 1 ? 'attempt' : 'attempts'} in ${elapsedMs} ms)`,
    cause,
  );
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Runs `write` until it succeeds, fails on an error that is not transient (rejected as is), or
 * runs out of attempts or time (STORE_UNAVAILABLE). Before every attempt after the first,
 * `settle` finds out what the lost attempt did write; when it answers true, nothing is left to
 * write. A transient failure of `settle` itself counts as an attempt. `failed` is the error of a
 * first attempt the caller made already (a synchronous store tries once before it awaits).
 */
export async function retryTransient(
  write: () => void | Promise<void>,
  settle: () => boolean | Promise<boolean>,
  health: StoreHealth,
  failed?: unknown,
  policy: WriteRetryPolicy = WRITE_RETRY,
): Promise<void> {
  const started = Date.now();
  let delay = policy.firstDelayMs;
  for (let attempt = 1; ; attempt++) {
    try {
      if (attempt === 1 && failed !== undefined) throw failed;
      if (attempt === 1 || !(await settle())) await write();
      health.succeeded();
      return;
    } catch (error) {
      if (!isTransientStoreError(error)) throw error;
      health.failed();
      const elapsed = Date.now() - started;
      if (attempt >= policy.attempts || elapsed + delay > policy.totalMs)
        throw unavailable(error, attempt, elapsed);
    }
    await sleep(delay);
    delay = Math.min(delay * 2, policy.maxDelayMs);
  }
}

/** Where a change's last event is stored: its job, its position, the chain hash it carries. */
export interface LastEvent {
  readonly id: string;
  readonly position: number;
  readonly hash: string | undefined;
}

/**
 * The lost-commit detection of `settle` above, one rule for both durable stores: a change the lost
 * attempt committed after all has its last event stored with the same chain hash (a change
 * commits all of its events or none of them). Those are handed to `written`, in order; the others
 * are returned, to be written again. A change with no event (`lastOf` answers undefined) is
 * returned: writing it again sets the same values. `stored` reads the hash stored at a position:
 * undefined when no event is there, null for an event without one.
 */
export function unwrittenOf<W>(
  writes: readonly W[],
  lastOf: (write: W) => LastEvent | undefined,
  stored: (last: LastEvent) => string | null | undefined,
  written: (write: W) => void,
): W[] {
  return writes.filter((write) => {
    const last = lastOf(write);
    if (last === undefined) return true;
    const hash = stored(last);
    // Another hash at that position is not this change: writing it fails on the key.
    if (hash === undefined || hash !== last.hash) return true;
    written(write);
    return false;
  });
}

/**
 * A test seam of the durable stores (`faults` in their options; not part of the package root):
 * called before each statement of the write path is sent (`before`) and after it returned
 * (`after`); an error it returns is thrown there, as the driver would. So a test drives the real
 * store on a real database and loses a statement before it ran, or the answer of one that
 * committed.
 */
export type WriteFault = (phase: 'before' | 'after') => Error | undefined;
