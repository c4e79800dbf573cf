/**
 * The heads of the event chains a durable store is writing (docs/decisions.md, "The decision
 * record"): the last chain hash of each running job, kept in memory between its writes so the
 * next change continues the chain without reading it back (each job has one writer). A job's
 * head is dropped when it finishes, when one of its changes fails, and when another process
 * may have written it (a claimed approval); the store then continues from the stored hash.
 */
import { chainHashes } from '../../record/event-chain.js';
import type { JobEvent } from '../../jobs/job.js';

export class ChainHeads {
  readonly #heads = new Map<string, string>();
  readonly #auditKey: string | undefined;

  /** `auditKey`: the key of the chain's HMAC (record/event-chain.ts); plain SHA-256 without one. */
  constructor(auditKey: string | undefined) {
    this.#auditKey = auditKey;
  }

  /** The last hash kept for a job; undefined when none is kept (read the stored one). */
  last(id: string): string | undefined {
    return this.#heads.get(id);
  }

  /** A job this store creates: its chain starts with nothing before its first event. */
  start(id: string): void {
    this.#heads.set(id, '');
  }

  /**
   * The hashes of events appended to a job after `previous`, in order; the new head is kept
   * while the job runs, and dropped once it has finished.
   */
  append(id: string, previous: string, events: readonly JobEvent[], finished: boolean): string[] {
    const hashes = chainHashes(previous, events, this.#auditKey);
    if (finished) this.#heads.delete(id);
    else if (hashes.length > 0) this.#heads.set(id, hashes[hashes.length - 1] as string);
    return hashes;
  }

  /** Drops a job's head: its next change continues from the stored hash. */
  forget(id: string): void {
    this.#heads.delete(id);
  }

  /** Drops every head (the writer lost its owner: whoever writes these jobs next reads them). */
  clear(): void {
    this.#heads.clear();
  }
}
