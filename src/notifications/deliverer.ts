/**
 * Delivers the outbox (docs/api.md, "Notifications"), in the process that owns the store: at
 * least once, each job's notifications in order, with exponential backoff, then marked failed.
 * It runs beside the jobs and never in their way: a slow or dead receiver costs a timer and a
 * socket, never a step. Each destination is a lane of its own (its claims, its requests in
 * flight, its timer), so a receiver that never answers holds up only its own rows, never
 * another destination's.
 */
import type { JobStoreOutbox, OutboxRecord } from '../jobs/job-store.js';
import type { CheckedDestination, NotificationsConfig } from './notification-options.js';
import { ErrorCode } from '../errors/error-codes.js';
import { webhookHeaders } from './webhook-signature.js';

/** Requests in flight at most per destination (rows claimed for it at once included). */
const IN_FLIGHT_LIMIT = 16;

/** A failure reported with the delay before the next attempt. */
function describeFailure(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown } } | null)?.cause?.code;
  const message = error instanceof Error ? error.message : String(error);
  return (typeof cause === 'string' ? `${message} (${cause})` : message).slice(0, 200);
}

/** One destination's deliveries. */
interface Lane {
  readonly destination: CheckedDestination;
  /** Its requests in flight, each settling its row when it ends. */
  readonly inFlight: Set<Promise<void>>;
  /** The running claim, if one runs. */
  claiming: Promise<void> | undefined;
  /** Asked to claim while a claim ran: claim again at its end. */
  again: boolean;
  timer: ReturnType<typeof setTimeout> | undefined;
  /** When the timer fires (ms since the epoch). */
  timerAt: number;
}

export class NotificationDeliverer {
  readonly #outbox: JobStoreOutbox;
  readonly #config: NotificationsConfig;
  readonly #byLabel: ReadonlyMap<string, CheckedDestination>;
  readonly #lanes: readonly Lane[];
  #stopped = false;

  constructor(outbox: JobStoreOutbox, config: NotificationsConfig) {
    this.#outbox = outbox;
    this.#config = config;
    this.#byLabel = new Map(
      config.destinations.map((destination) => [destination.label, destination]),
    );
    this.#lanes = config.destinations.map((destination) => ({
      destination,
      inFlight: new Set(),
      claiming: undefined,
      again: false,
      timer: undefined,
      timerAt: 0,
    }));
  }

  /** Looks at the outbox now (rows left by an earlier run included), then every `pollMs`. */
  start(): void {
    this.wake();
  }

  /** Claims soon, for every destination: called once new rows are committed. */
  wake(): void {
    for (const lane of this.#lanes) this.#schedule(lane, 0);
  }

  /**
   * Stops: no new claim after one last one per destination (what the jobs just wrote goes out
   * before the process ends, each request bounded by `timeoutMs`); what is still pending is
   * delivered by the next process on the store.
   */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    for (const lane of this.#lanes) clearTimeout(lane.timer);
    await Promise.all(
      this.#lanes.map(async (lane) => {
        await lane.claiming;
        await Promise.all(lane.inFlight);
        // The last claim: rows the requests just settled let through included.
        await this.#claim(lane, IN_FLIGHT_LIMIT).catch(() => {});
        await Promise.all(lane.inFlight);
      }),
    );
  }

  /** Claims for `lane` in `delay` ms, unless a timer of its fires sooner. */
  #schedule(lane: Lane, delay: number): void {
    if (this.#stopped) return;
    const at = Date.now() + delay;
    if (lane.timer !== undefined && lane.timerAt <= at) return;
    clearTimeout(lane.timer);
    lane.timerAt = at;
    lane.timer = setTimeout(() => {
      lane.timer = undefined;
      this.#fill(lane);
    }, delay);
    lane.timer.unref();
  }

  /** Claims as many of `lane`'s due rows as it has room in flight for. */
  #fill(lane: Lane): void {
    if (this.#stopped) return;
    if (lane.claiming !== undefined) {
      lane.again = true;
      return;
    }
    const room = IN_FLIGHT_LIMIT - lane.inFlight.size;
    // Full: each request that ends claims again.
    if (room <= 0) return;
    lane.again = false;
    lane.claiming = this.#claim(lane, room).then(
      () => {
        lane.claiming = undefined;
        this.#schedule(lane, lane.again ? 0 : this.#config.delivery.pollMs);
      },
      () => {
        // A store fault (the file locked, the server gone): tried again on the next poll.
        lane.claiming = undefined;
        this.#schedule(lane, this.#config.delivery.pollMs);
      },
    );
  }

  /** Claims at most `limit` of `lane`'s due rows and starts their requests. */
  async #claim(lane: Lane, limit: number): Promise<void> {
    const { delivery } = this.#config;
    const now = Date.now();
    // A claim outlives the longest request, so no other process takes a row still in flight.
    const lease = delivery.timeoutMs * 2 + 1_000;
    const rows = await this.#outbox.claimNotifications(now, lease, limit, lane.destination.label);
    for (const row of rows) {
      const request: Promise<void> = this.#deliver(row)
        // A settle the store refused: the lease ends and the row is claimed again.
        .catch(() => {})
        .finally(() => {
          lane.inFlight.delete(request);
          // Its room, and the job's next row, may be claimed now.
          this.#schedule(lane, 0);
        });
      lane.inFlight.add(request);
    }
  }

  async #deliver(row: OutboxRecord): Promise<void> {
    const destination = this.#byLabel.get(row.destination);
    if (destination === undefined) {
      // Claims name the lane's destination, so only an outbox that ignores it (a host's own)
      // answers a row of another; one this process does not know waits for a process that has it.
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

  /**
   * One POST; resolves undefined when the receiver answered 2xx, else what went wrong. The host
   * is resolved, its addresses held to the address rule (docs/api.md, "Notifications"), and the
   * request goes to those addresses only, following no redirect.
   */
  async #post(destination: CheckedDestination, row: OutboxRecord): Promise<string | undefined> {
    // The HTTP stack loads with the first delivery (docs/decisions.md, "Light import"), before
    // the request's time-out starts: loading it is not the receiver's time.
    const { refusal, resolveHost, sendPinned } = await import('../net/guarded-http.js');
    const controller = new AbortController();
    // A timer held until the answer arrives (AbortSignal.timeout alone may never fire).
    const timer = setTimeout(() => controller.abort(), this.#config.delivery.timeoutMs);
    try {
      const url = new URL(destination.url);
      const addresses = await resolveHost(url);
      const rule = { allowPrivate: destination.allowPrivate };
      const refused = refusal(url, addresses, rule, undefined, "the destination's allowPrivate");
      if (refused !== undefined) return `${ErrorCode.EFFECT_REFUSED}: ${refused.message}`;
      const timestamp = Math.floor(Date.now() / 1000);
      const response = await sendPinned(url, addresses, {
        method: 'POST',
        headers: webhookHeaders(destination.key, row.id, timestamp, row.body),
        body: row.body,
        signal: controller.signal,
      });
      // The answer's body is not read: the receiver's status is all that counts.
      response.destroy();
      const status = response.statusCode ?? 0;
      if (status >= 200 && status < 300) return undefined;
      return `HTTP ${status}`;
    } catch (error) {
      return controller.signal.aborted
        ? `no answer within ${this.#config.delivery.timeoutMs} ms`
        : describeFailure(error);
    } finally {
      clearTimeout(timer);
    }
  }
}
