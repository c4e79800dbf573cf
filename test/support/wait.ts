// Bounded waits for tests (docs/decisions.md, "Test runs"). A test waits on an event where there is
// one: runtime.subscribe, waitForJob, a promise a capability resolves, a line a child process
// writes (`Output`), a change its own callbacks announce (`Changes`). `waitFor` polls only what
// has no event in this process: rows another process writes, a file a child appends to, a
// database session ending. Every wait is bounded and its failure says what it waited for.
import type { Readable } from 'node:stream';

export interface WaitOptions {
  /** What is waited for, named in the failure (a function: read when the wait fails). */
  readonly what: string | (() => string);
  /** The longest wait, in milliseconds: 20 s unless told. */
  readonly timeoutMs?: number;
}

export interface PollOptions extends WaitOptions {
  /** Between the end of one check and the next, in milliseconds: 20 unless told. */
  readonly intervalMs?: number;
}

const DEFAULT_TIMEOUT_MS = 20_000;

function failure(options: WaitOptions, timeoutMs: number): Error {
  const what = typeof options.what === 'function' ? options.what() : options.what;
  return new Error(`waited ${timeoutMs} ms for ${what}`);
}

/** A value `waitFor` takes as the condition holding: anything but false, undefined and null. */
type Held<T> = Exclude<T, false | undefined | null>;

/**
 * Checks `condition` until it answers a value other than false, undefined or null, and resolves
 * with that value; rejects naming `what` once `timeoutMs` has passed. For state with no event in
 * this process only (see the top of this file).
 */
export async function waitFor<T>(
  condition: () => T | Promise<T>,
  options: PollOptions,
): Promise<Held<T>> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await condition();
    if (value !== false && value !== undefined && value !== null) return value as Held<T>;
    if (Date.now() > deadline) throw failure(options, timeoutMs);
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 20));
  }
}

/** Resolves as `promise` does; rejects naming `what` if it has not settled after `timeoutMs`. */
export async function within<T>(promise: Promise<T>, options: WaitOptions): Promise<T> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(failure(options, timeoutMs)), timeoutMs);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Changes a test's own callbacks make (a capability entered, a line read): `until` checks its
 * condition at once and again at each `changed()`, never on a timer.
 */
export class Changes {
  readonly #waiters = new Set<() => void>();

  /** Something the conditions read has changed: every waiter checks again. */
  changed(): void {
    for (const check of [...this.#waiters]) check();
  }

  /** Resolves once `condition` holds; rejects naming `what` after `timeoutMs`. */
  until(condition: () => boolean, options: WaitOptions): Promise<void> {
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    return new Promise<void>((resolve, reject) => {
      const done = (error?: Error) => {
        this.#waiters.delete(check);
        clearTimeout(timer);
        if (error === undefined) resolve();
        else reject(error);
      };
      const check = () => {
        let held: boolean;
        try {
          held = condition();
        } catch (error) {
          done(error as Error);
          return;
        }
        if (held) done();
      };
      const timer = setTimeout(() => done(failure(options, timeoutMs)), timeoutMs);
      this.#waiters.add(check);
      check();
    });
  }
}

/**
 * The text of a child process's streams as it arrives, and bounded waits for a pattern in it that
 * end early, with the text so far, once every stream has ended.
 */
export class Output {
  #text = '';
  #open: number;
  readonly #changes = new Changes();

  constructor(...streams: Readable[]) {
    this.#open = streams.length;
    for (const stream of streams) {
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => {
        this.#text += chunk;
        this.#changes.changed();
      });
      stream.once('close', () => {
        this.#open -= 1;
        this.#changes.changed();
      });
    }
  }

  /** Everything written so far. */
  get text(): string {
    return this.#text;
  }

  /** True once every stream has closed. */
  get ended(): boolean {
    return this.#open === 0;
  }

  /**
   * Resolves with the text once `pattern` matches it (a string: once the text includes it);
   * rejects when the streams end without a match, or after `timeoutMs` (20 s unless told).
   */
  async match(pattern: RegExp | string, options: Partial<WaitOptions> = {}): Promise<string> {
    const matches = () =>
      typeof pattern === 'string' ? this.#text.includes(pattern) : pattern.test(this.#text);
    const what = options.what ?? `output matching ${String(pattern)}`;
    await this.#changes.until(() => matches() || this.#open === 0, {
      ...options,
      what: () => `${typeof what === 'function' ? what() : what}; output so far:\n${this.#text}`,
    });
    if (!matches())
      throw new Error(`the output ended without ${String(pattern)}; output:\n${this.#text}`);
    return this.#text;
  }
}
