/**
 * Jobs this process owns whose last write was lost (docs/api.md, "Store outages"): a job run
 * that rejected with JOB_STORE_FAILED and its `jobId` is stored as this live owner left it,
 * `queued` or `executing`, and nothing else would ever end it (recovery takes up only the jobs of
 * gone owners). Its id is kept here and the job is settled, by the rule recovery applies to a
 * gone owner's jobs, as soon as the store answers: retried on an unref'd timer, 1 s after the
 * failure, then every 2, 4, ... up to 30 s while the store stays down, and at once when the
 * store tells it is up again. At most MAX_STRANDED ids are kept; a job beyond them, or one whose
 * settling fails on something else than the store, is reported on the logger and left to the
 * recovery of the next process that opens the store. A job refused because its owner lost its
 * lock (JOB_OWNER_LOST) is not kept: the recovery of gone owners takes it up.
 */
import { describeThrown } from '../errors/describe-value.js';
import { ErrorCode } from '../errors/error-codes.js';
import { isStoreUnavailable, isTransientStoreError } from '../stores/shared/write-retry.js';

/** The most job ids kept at once. */
export const MAX_STRANDED = 1_000;

export interface StrandedTiming {
  readonly firstDelayMs: number;
  readonly maxDelayMs: number;
}

const TIMING: StrandedTiming = Object.freeze({ firstDelayMs: 1_000, maxDelayMs: 30_000 });

/**
 * True for a write refused because the owner the job ran under lost its lock (JOB_OWNER_LOST,
 * as it is or as the `cause` of JOB_STORE_FAILED): that job is no longer this owner's to settle;
 * the recovery of gone owners takes it up (docs/api.md, "Recovery").
 */
export function isOwnerLost(error: unknown): boolean {
  const { code, cause } = (error ?? {}) as { code?: unknown; cause?: unknown };
  return (
    code === ErrorCode.JOB_OWNER_LOST ||
    (code === ErrorCode.JOB_STORE_FAILED &&
      (cause as { code?: unknown } | null)?.code === ErrorCode.JOB_OWNER_LOST)
  );
}

/** The id of the job a store failure gave up, if the error is one (not a lost owner's job). */
export function strandedJobId(error: unknown): string | undefined {
  if ((error as { code?: unknown } | null)?.code !== ErrorCode.JOB_STORE_FAILED) return undefined;
  if (isOwnerLost(error)) return undefined;
  const jobId = (error as { jobId?: unknown }).jobId;
  return typeof jobId === 'string' ? jobId : undefined;
}

/** True for a failure of the store itself (settling is tried again later). */
function storeFault(error: unknown): boolean {
  return (
    isStoreUnavailable(error) ||
    isTransientStoreError(error) ||
    (error as { code?: unknown } | null)?.code === ErrorCode.JOB_STORE_FAILED
  );
}

export class StrandedJobs {
  readonly #ids = new Set<string>();
  readonly #settle: (jobId: string) => Promise<void>;
  readonly #warn: (line: string) => void;
  readonly #timing: StrandedTiming;
  #delay: number;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #pass: Promise<void> | undefined;
  #stopped = false;

  /**
   * `settle` records one job as recovery's rule says (and resolves when it is recorded or has
   * nothing left to record); `warn` takes a line for the logger.
   */
  constructor(
    settle: (jobId: string) => Promise<void>,
    warn: (line: string) => void,
    timing: StrandedTiming = TIMING,
  ) {
    this.#settle = settle;
    this.#warn = warn;
    this.#timing = timing;
    this.#delay = timing.firstDelayMs;
  }

  /** The ids kept, oldest first. */
  get ids(): readonly string[] {
    return [...this.#ids];
  }

  /** Keeps the job a rejection gave up, if it is one; anything else is ignored. */
  add(error: unknown): void {
    const jobId = strandedJobId(error);
    if (jobId !== undefined) this.keep(jobId);
  }

  /** Keeps a job of this owner to be settled (one taken up whose recovery failed, say). */
  keep(jobId: string): void {
    if (this.#stopped || this.#ids.has(jobId)) return;
    if (this.#ids.size >= MAX_STRANDED) {
      this.#warn(
        `warrant: job ${jobId} could not be recorded and ${MAX_STRANDED} jobs wait already; it is left to recovery at the next start`,
      );
      return;
    }
    this.#ids.add(jobId);
    this.#schedule();
  }

  /** The store answers again: try now. */
  wake(): void {
    if (this.#ids.size === 0 || this.#stopped) return;
    this.#delay = this.#timing.firstDelayMs;
    if (this.#pass !== undefined) return;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    void this.#run();
  }

  /** Stops retrying once the pass under way ends; resolves with the ids left. */
  async stop(): Promise<readonly string[]> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#pass;
    return this.ids;
  }

  #schedule(): void {
    if (this.#timer !== undefined || this.#pass !== undefined || this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.#run();
    }, this.#delay);
    this.#timer.unref();
  }

  #run(): Promise<void> {
    this.#pass = this.#settleAll().finally(() => {
      this.#pass = undefined;
      if (this.#ids.size === 0) this.#delay = this.#timing.firstDelayMs;
      else this.#schedule();
    });
    return this.#pass;
  }

  /** One pass, oldest first; the first store fault ends it (the store is still down). */
  async #settleAll(): Promise<void> {
    for (const jobId of [...this.#ids]) {
      try {
        await this.#settle(jobId);
      } catch (error) {
        // Its owner lost its lock meanwhile: the job is recovery's now, not this owner's.
        if (isOwnerLost(error)) {
          this.#ids.delete(jobId);
          continue;
        }
        if (storeFault(error)) {
          this.#delay = Math.min(this.#delay * 2, this.#timing.maxDelayMs);
          return;
        }
        this.#warn(
          `warrant: job ${jobId} could not be recorded after a store outage: ${describeThrown(error)}; it is left to recovery at the next start`,
        );
      }
      this.#ids.delete(jobId);
    }
  }
}
