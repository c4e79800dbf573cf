/**
 * Delivers the outbox (docs/api.md, "Notifications"), in the process that owns the store: at
 * least once, each job's notifications in order, with exponential backoff, then marked failed.
 * It runs beside the jobs and never in their way: a slow or dead receiver costs a timer and a
 * socket, never a step.
 */
import type { JobStoreOutbox, OutboxRecord } from '../jobs/job-store.js';
import type { CheckedDestination, NotificationsConfig } from './notification-options.js';
import { webhookHeaders } from './webhook-signature.js';

/** Rows claimed (and requests in flight) at most at once. */
const CLAIM_LIMIT = 16;

/** A failure reported with the delay before the next attempt. */
function describeFailure(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown } } | null)?.cause?.code;
  const message = error instanceof Error ? error.message : String(error);
  return (typeof cause === 'string' ? `${message} (${cause})` : message).slice(0, 200);
}

export class NotificationDeliverer {
  readonly #outbox: JobStoreOutbox;
  readonly #config: NotificationsConfig;
  readonly #byLabel: ReadonlyMap<string, CheckedDestination>;
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** The running pass, if one runs. */
  #pass: Promise<void> | undefined;
  /** A wake came while a pass ran: run another at its end. */
  #again = false;
  #stopped = false;

  constructor(outbox: JobStoreOutbox, config: NotificationsConfig) {
    this.#outbox = outbox;
    this.#config = config;
    this.#byLabel = new Map(
      config.destinations.map((destination) => [destination.label, destination]),
    );
  }

  /** Looks at the outbox now (rows left by an earlier run included), then every `pollMs`. */
  start(): void {
    this.wake();
  }

  /** Runs a pass soon: called once new rows are committed. */
  wake(): void {
    if (this.#stopped) return;
    if (this.#pass !== undefined) {
      this.#again = true;
      return;
    }
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.#run(), 0);
    this.#timer.unref();
  }

  /**
   * Stops: no new pass after one last one (what the jobs just wrote goes out before the process
   * ends, each request bounded by `timeoutMs`); what is still pending is delivered by the next
   * process on the store.
   */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#pass;
    await this.#passOnce().catch(() => {});
  }

  #run(): void {
    this.#pass = this.#passOnce().then(
      (claimed) => {
        this.#pass = undefined;
        if (this.#stopped) return;
        const soon = claimed > 0 || this.#again;
        this.#again = false;
        this.#timer = setTimeout(() => this.#run(), soon ? 0 : this.#config.delivery.pollMs);
        this.#timer.unref();
      },
      () => {
        // A store fault (the file locked, the server gone): tried again on the next poll.
        this.#pass = undefined;
        if (this.#stopped) return;
        this.#timer = setTimeout(() => this.#run(), this.#config.delivery.pollMs);
        this.#timer.unref();
      },
    );
  }

  /** Claims the rows due and delivers them, concurrently; resolves how many were claimed. */
  async #passOnce(): Promise<number> {
    const { delivery } = this.#config;
    const now = Date.now();
    // A claim outlives the longest request, so no other process takes a row still in flight.
    const lease = delivery.timeoutMs * 2 + 1_000;
    const rows = await this.#outbox.claimNotifications(now, lease, CLAIM_LIMIT);
    await Promise.all(rows.map((row) => this.#deliver(row)));
    return rows.length;
  }

  async #deliver(row: OutboxRecord): Promise<void> {
    const destination = this.#byLabel.get(row.destination);
    if (destination === undefined) {
      // Written by a process with another destination: its row waits for a process that has it.
      await this.#outbox.settleNotification(row.seq, {
        delivered: false,
        error: 'no such destination in this process',
        nextAt: Date.now() + this.#config.delivery.pollMs * 10,
      });
      return;
    }
    let failure: string | undefined;
    try {
      failure = await this.#post(destination, row);
    } catch (error) {
      failure = describeFailure(error);
    }
    if (failure === undefined) {
      await this.#outbox.settleNotification(row.seq, { delivered: true });
      return;
    }
    const { attempts, initialDelayMs, maxDelayMs } = this.#config.delivery;
    const nextAt =
      row.attempts >= attempts
        ? undefined
        : Date.now() + Math.min(maxDelayMs, initialDelayMs * 2 ** (row.attempts - 1));
    await this.#outbox.settleNotification(
      row.seq,
      nextAt === undefined
        ? { delivered: false, error: `attempt ${row.attempts}: ${failure}` }
        : { delivered: false, error: `attempt ${row.attempts}: ${failure}`, nextAt },
    );
  }

  /** One POST; resolves undefined when the receiver answered 2xx, else what went wrong. */
  async #post(destination: CheckedDestination, row: OutboxRecord): Promise<string | undefined> {
    const controller = new AbortController();
    // A timer held until the answer's body is read (AbortSignal.timeout alone may never fire).
    const timer = setTimeout(() => controller.abort(), this.#config.delivery.timeoutMs);
    try {
      const timestamp = Math.floor(Date.now() / 1000);
      const response = await fetch(destination.url, {
        method: 'POST',
        headers: webhookHeaders(destination.key, row.id, timestamp, row.body),
        body: row.body,
        signal: controller.signal,
        redirect: 'manual',
      });
      // The answer's body is not read: the receiver's status is all that counts.
      await response.body?.cancel().catch(() => {});
      if (response.status >= 200 && response.status < 300) return undefined;
      return `HTTP ${response.status}`;
    } catch (error) {
      return controller.signal.aborted
        ? `no answer within ${this.#config.delivery.timeoutMs} ms`
        : describeFailure(error);
    } finally {
      clearTimeout(timer);
    }
  }
}
