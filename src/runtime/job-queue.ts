/**
 * The in-process queue of submitted jobs (docs/api.md, "runtime.submitPlan"): jobs start in
 * submission order, at most `concurrency` at once. A job still waiting can be taken out (a
 * cancel); a started one runs to its end, and its end starts the next.
 */
export class JobQueue {
  readonly #concurrency: number;
  /** Waiting jobs by id; a Map keeps insertion (= submission) order. */
  readonly #waiting = new Map<string, () => Promise<unknown>>();
  #running = 0;
  readonly #done = (): void => {
    this.#running--;
    this.#drain();
  };

  constructor(concurrency: number) {
    this.#concurrency = concurrency;
  }

  /** Jobs started and not yet ended. */
  get running(): number {
    return this.#running;
  }

  /** Queues a job; `start` runs it and settles when it ended (its rejection is its own). */
  add(id: string, start: () => Promise<unknown>): void {
    this.#waiting.set(id, start);
    this.#drain();
  }

  /** Takes a waiting job out; false when it already started (or was never queued). */
  remove(id: string): boolean {
    return this.#waiting.delete(id);
  }

  #drain(): void {
    while (this.#running < this.#concurrency) {
      const next = this.#waiting.entries().next();
      if (next.done === true) return;
      const [id, start] = next.value;
      this.#waiting.delete(id);
      this.#running++;
      let started: Promise<unknown>;
      try {
        started = start();
      } catch (error) {
        started = Promise.reject(error as Error);
      }
      started.then(this.#done, this.#done);
    }
  }
}
