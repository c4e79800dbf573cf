/**
 * Group commit for the durable stores (docs/decisions.md, "Stores"): the changes reported in one
 * turn of the event loop (jobs in flight together), or while the previous batch is being
 * written, are gathered into one batch and written together on the next turn; each change's
 * promise settles only once the store's write function has committed it (or failed it).
 *
 * The queue owns the order, the batches and when they are written; the store injects how a
 * batch is written (its SQL, transactions and error handling) and what it forgets about a job
 * whose change failed. It loads no driver: a store's driver still loads on its first use.
 */

/** A change waiting in a batch, and how its promise settles. */
export interface QueuedChange<C> {
  readonly change: C;
  /** The change is committed. */
  readonly resolve: () => void;
  /** The change is not written; use GroupCommit.fail, which forgets what the store kept first. */
  readonly reject: (error: unknown) => void;
}

export interface GroupCommitOptions<C> {
  /**
   * Writes a batch, in order, and settles every change of it (`resolve`, or `fail`); it never
   * throws or rejects. Returning a promise means the write goes on asynchronously: the next
   * batch gathers meanwhile and is written only once this one is settled.
   */
  readonly write: (batch: readonly QueuedChange<C>[]) => void | Promise<void>;
  /**
   * When given, a batch holds at most one change per key (a job's id): a second change of a
   * job waits for the next batch, so one statement can write a batch and a job's changes keep
   * their order.
   */
  readonly keyOf?: (change: C) => string;
  /** Called for a change that failed, before its promise rejects (the executor writes nothing more for that job). */
  readonly forget: (change: C) => void;
}

interface Batch<C> {
  /** Batches are numbered in the order they are made, which is the order they are written. */
  readonly number: number;
  readonly changes: QueuedChange<C>[];
  /** The keys of `changes`, when keyOf is given. */
  readonly keys: Set<string> | undefined;
}

export class GroupCommit<C> {
  readonly #write: GroupCommitOptions<C>['write'];
  readonly #keyOf: ((change: C) => string) | undefined;
  readonly #forget: (change: C) => void;
  /** Batches waiting to be written, in order; changes join the last one. */
  readonly #queue: Batch<C>[] = [];
  /** A batch is being written (one at a time: the next one gathers meanwhile). */
  #writing = false;
  #scheduled = false;
  /** The number of the last batch made. */
  #made = 0;
  /** Who waits for the batches made so far, by the number of the last one they wait for. */
  readonly #waiting: { readonly number: number; readonly resolve: () => void }[] = [];

  constructor(options: GroupCommitOptions<C>) {
    this.#write = options.write;
    this.#keyOf = options.keyOf;
    this.#forget = options.forget;
  }

  /** True while a change is queued or a batch is being written. */
  get busy(): boolean {
    return this.#writing || this.#queue.length > 0;
  }

  /**
   * Settles once every change queued before the call is committed or has failed (now, when none
   * is); changes queued later are not waited for, so a steady flow of them cannot hold it back.
   */
  settled(): Promise<void> {
    if (!this.busy) return Promise.resolve();
    return new Promise<void>((resolve) => this.#waiting.push({ number: this.#made, resolve }));
  }

  /** Queues one change; the promise settles once the change is committed or has failed. */
  add(change: C): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const key = this.#keyOf?.(change);
      let batch = this.#queue.at(-1);
      if (batch === undefined || (key !== undefined && batch.keys?.has(key) === true)) {
        batch = {
          number: (this.#made += 1),
          changes: [],
          keys: this.#keyOf === undefined ? undefined : new Set(),
        };
        this.#queue.push(batch);
      }
      batch.changes.push({ change, resolve, reject });
      if (key !== undefined) batch.keys?.add(key);
      this.#schedule();
    });
  }

  /** Rejects a change of a batch, once the store has forgotten what it kept for its job. */
  fail(queued: QueuedChange<C>, error: unknown): void {
    this.#forget(queued.change);
    queued.reject(error);
  }

  /**
   * Writes the next batch now rather than on the next turn (a synchronous store's reads call it,
   * so they see every change reported before them); a turn already scheduled then finds less to
   * write, or nothing.
   */
  readonly flush = (): void => {
    this.#scheduled = false;
    const batch = this.#queue.shift();
    if (batch === undefined) return;
    this.#writing = true;
    const written = this.#write(batch.changes);
    if (written === undefined) this.#wrote(batch.number);
    else void written.finally(() => this.#wrote(batch.number));
  };

  #wrote(number: number): void {
    this.#writing = false;
    if (this.#waiting.length > 0) {
      // Waiters are in the order of their numbers, which never decrease.
      let done = 0;
      while (done < this.#waiting.length && (this.#waiting[done]?.number ?? 0) <= number) done++;
      for (const waiter of this.#waiting.splice(0, done)) waiter.resolve();
    }
    this.#schedule();
  }

  /**
   * Writes the next batch on the next turn, once no batch is being written: even a change alone
   * waits for the turn, so the changes of requests that each arrive in a callback of their own
   * share a commit (docs/decisions.md, "Stores", "SQLite group commit").
   */
  #schedule(): void {
    if (this.#writing || this.#scheduled || this.#queue.length === 0) return;
    this.#scheduled = true;
    setImmediate(this.flush);
  }
}
