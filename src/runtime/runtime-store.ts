/**
 * The store of one runtime (docs/api.md, "new OperatorRuntime"): opened on first use (the memory
 * store at once, a durable one in a promise: its module loads then, docs/decisions.md "Light
 * import"), with the notifications outbox attached and delivered from the moment it is open, and
 * the executor's dependencies on it, made once per store. A failed open is tried again next time.
 */
import { ErrorCode } from '../errors/error-codes.js';
import { createError } from '../errors/warrant-error.js';
import type { JobStore, StoreAvailability } from '../jobs/job-store.js';
import { hasAvailability, hasOutbox } from '../jobs/store-parts.js';
import { openStore } from '../stores/open-store.js';
import { NotificationDeliverer } from '../notifications/deliverer.js';
import { outboxWriter } from '../notifications/notification-body.js';
import type { NotificationsConfig } from '../notifications/notification-options.js';
import type { ExecutorDependencies } from './executor.js';

/** What `storeAvailability()` answers for a store that can write (or is not open yet). */
const WRITABLE_STORE: StoreAvailability = Object.freeze({ writable: true });

export interface RuntimeStoreOptions {
  /** The `store` option (undefined: memory), and a store object given instead (tests). */
  readonly store: string | undefined;
  readonly givenStore: JobStore | undefined;
  readonly maxJobs: number;
  readonly auditKey: string | undefined;
  readonly onOutage: (state: 'down' | 'up') => void;
  readonly notifications: NotificationsConfig | undefined;
  /** The executor's dependencies but the store. */
  readonly executor: Omit<ExecutorDependencies, 'store'>;
  /** Throws RUNTIME_CLOSED once the runtime is closed. */
  readonly assertOpen: () => void;
  /** Runs once a durable store has opened, before any use of it resolves (recovery). */
  readonly opened: (store: JobStore) => Promise<void>;
}

export class RuntimeStore {
  readonly #options: RuntimeStoreOptions;
  #store: JobStore | undefined;
  /** A durable store being opened (its module loading), until it is in `#store`. */
  #opening: Promise<JobStore> | undefined;
  #dependencies: ExecutorDependencies | undefined;
  /** Delivers the store's outbox, from the moment the store is open. */
  #deliverer: NotificationDeliverer | undefined;

  constructor(options: RuntimeStoreOptions) {
    this.#options = options;
    this.#store = options.givenStore;
  }

  /** The open store, if it is open. */
  get current(): JobStore | undefined {
    return this.#store;
  }

  /** The store, opened on first use. */
  open(): JobStore | Promise<JobStore> {
    const options = this.#options;
    options.assertOpen();
    if (this.#store !== undefined) {
      if (options.notifications !== undefined && this.#deliverer === undefined)
        this.#startNotifications(this.#store, options.notifications);
      return this.#store;
    }
    if (this.#opening !== undefined) return this.#opening;
    const opened = openStore(options.store, {
      maxJobs: options.maxJobs,
      auditKey: options.auditKey,
      onOutage: options.onOutage,
    });
    if (!(opened instanceof Promise)) return this.#opened(opened);
    this.#opening = opened.then(
      async (store) => {
        this.#opened(store);
        await options.opened(store);
        this.#opening = undefined;
        return store;
      },
      (error: unknown) => {
        this.#opening = undefined;
        throw error;
      },
    );
    return this.#opening;
  }

  /**
   * Calls `use` on the store: at once when it is open (a read begun before `close()` reaches an
   * open store), else once it has opened.
   */
  with<T>(use: (store: JobStore) => T): T | Promise<T> {
    const store = this.open();
    return store instanceof Promise ? store.then(use) : use(store);
  }

  /** The executor's dependencies on the store, opening it if need be. */
  dependencies(): ExecutorDependencies | Promise<ExecutorDependencies> {
    return this.with((store) => this.dependenciesOn(store));
  }

  /** The executor's dependencies on `store`: one object per store. */
  dependenciesOn(store: JobStore): ExecutorDependencies {
    if (this.#dependencies?.store !== store)
      this.#dependencies = { store, ...this.#options.executor };
    return this.#dependencies;
  }

  /** Whether the open store can write now, from what it knows (docs/api.md, "runtime.storeAvailability"). */
  availability(): StoreAvailability {
    const store = this.#store;
    return store !== undefined && hasAvailability(store) ? store.availability() : WRITABLE_STORE;
  }

  /**
   * One last delivery pass (what stays pending goes out with the next process on the store),
   * then the store is closed: one still opening once open; a failed open left none.
   */
  async close(): Promise<void> {
    await this.#deliverer?.stop();
    if (this.#opening !== undefined) await this.#opening.catch(() => {});
    const store = this.#store;
    this.#store = undefined;
    if (store !== undefined) await store.close();
  }

  /** Keeps the store just opened; with notifications, attaches its outbox and starts delivering. */
  #opened(store: JobStore): JobStore {
    const { notifications } = this.#options;
    if (notifications !== undefined) this.#startNotifications(store, notifications);
    this.#store = store;
    return store;
  }

  /**
   * Notifications (docs/api.md, "Notifications"): the store's outbox written from now on, and
   * delivered by this process, rows an earlier run left included.
   */
  #startNotifications(store: JobStore, config: NotificationsConfig): void {
    if (!hasOutbox(store))
      throw createError(
        TypeError,
        ErrorCode.RUNTIME_OPTIONS_INVALID,
        'options.notifications need a store with an outbox (memory, SQLite or PostgreSQL)',
      );
    const { outbox } = store;
    const deliverer = new NotificationDeliverer(outbox, config);
    outbox.attachOutbox(outboxWriter(config, () => deliverer.wake()));
    this.#deliverer = deliverer;
    deliverer.start();
  }
}
