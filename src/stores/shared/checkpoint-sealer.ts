/**
 * When a durable store writes its next checkpoint (record/checkpoint.ts, docs/api.md "Store
 * checkpoints"): one second after a commit, or at once when 1,000 events have been committed
 * since the last checkpoint, whichever comes first, never on the path of a step (the store counts
 * its commits here, after they are done). The timer does not keep the process alive; `close`
 * seals what is left. A seal that fails is tried again on the next commit or at close: the events
 * stay marked unsealed in the store until one succeeds.
 */

/** Events committed after which a checkpoint is written without waiting for the second. */
export const SEAL_EVERY_EVENTS = 1_000;
/** The longest a committed event waits for its checkpoint, in milliseconds. */
export const SEAL_EVERY_MS = 1_000;

export class CheckpointSealer {
  readonly #seal: () => unknown;
  #pending = 0;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;

  /** `seal` writes one checkpoint of whatever is unsealed (sync or a promise). */
  constructor(seal: () => unknown) {
    this.#seal = seal;
  }

  /** A commit of `events` events is done. */
  committed(events: number): void {
    if (events === 0) return;
    this.#pending += events;
    if (this.#pending >= SEAL_EVERY_EVENTS) {
      this.#schedule(0);
    } else if (this.#timer === undefined) {
      this.#schedule(SEAL_EVERY_MS);
    }
  }

  #schedule(delay: number): void {
    if (this.#timer !== undefined && delay > 0) return;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.run();
    }, delay);
    this.#timer.unref();
  }

  /** Seals now (one seal at a time); never rejects. */
  run(): Promise<void> {
    this.#running ??= (async () => {
      const pending = this.#pending;
      this.#pending = 0;
      try {
        await this.#seal();
      } catch {
        // Still marked unsealed in the store: the next seal takes it.
        this.#pending += pending;
      } finally {
        this.#running = undefined;
      }
    })();
    return this.#running;
  }

  /**
   * Stops the timer; true when this process committed events since the last checkpoint (a
   * synchronous store then seals them itself, at once).
   */
  stop(): boolean {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const pending = this.#pending > 0;
    this.#pending = 0;
    return pending;
  }

  /** Stops the timer and seals what this process committed since the last checkpoint. */
  async close(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#running !== undefined) await this.#running;
    if (this.#pending > 0) await this.run();
  }
}
