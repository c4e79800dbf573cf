/**
 * The observer bus (docs/api.md, "runtime.subscribe"). Publication awaits every handler, concurrently; a
 * handler's throw or rejection is reported through `onError` and changes nothing else. There is
 * no observer time-out. Handlers are snapshotted when a publication starts: one that
 * unsubscribes another mid-publication takes effect from the next event.
 */
import { ErrorCode } from '../errors/error-codes.js';
import { createError } from '../errors/warrant-error.js';
import { JOB_EVENT_TYPES, type JobEvent, type JobEventType } from '../jobs/job.js';
import type { RuntimeEvent, RuntimeEventHandler } from './runtime-event.js';

/**
 * Told about an observer's throw or rejection. It may be async (a `void` return type accepts
 * that): its own throw or rejection is ignored, never an unhandled rejection.
 */
export type ObserverErrorHandler = (error: unknown, event: RuntimeEvent) => void;

const ignore = (): void => {};

const SUBSCRIBABLE: ReadonlySet<string> = new Set<string>([...JOB_EVENT_TYPES, '*']);

export class EventBus {
  readonly #handlers = new Map<string, RuntimeEventHandler[]>();
  readonly #onError: ObserverErrorHandler;
  #count = 0;

  constructor(onError: ObserverErrorHandler) {
    this.#onError = onError;
  }

  /** @throws TypeError (SUBSCRIPTION_INVALID) for an unknown type or a non-function handler. */
  subscribe(type: JobEventType | '*', handler: RuntimeEventHandler): () => void {
    if (typeof type !== 'string' || !SUBSCRIBABLE.has(type)) {
      throw createError(
        TypeError,
        ErrorCode.SUBSCRIPTION_INVALID,
        `Cannot subscribe to ${JSON.stringify(String(type))}: use '*' or one of ${JOB_EVENT_TYPES.join(', ')}`,
      );
    }
    if (typeof handler !== 'function') {
      throw createError(
        TypeError,
        ErrorCode.SUBSCRIPTION_INVALID,
        'subscribe() needs a handler function',
      );
    }
    // Copy-on-write: a publication in progress keeps iterating the array it started with.
    this.#handlers.set(type, [...(this.#handlers.get(type) ?? []), handler]);
    this.#count++;
    let active = true;
    return () => {
      if (!active) return;
      active = false;
      const list = this.#handlers.get(type) ?? [];
      const at = list.indexOf(handler);
      if (at !== -1) {
        this.#handlers.set(type, [...list.slice(0, at), ...list.slice(at + 1)]);
        this.#count--;
      }
    };
  }

  /** True when nobody listens: the executor then builds no RuntimeEvent (docs/decisions.md, "House rules"). */
  get idle(): boolean {
    return this.#count === 0;
  }

  /** Delivers a recorded job event; resolves when every handler has settled. Never rejects. */
  publish(event: JobEvent): Promise<void> | undefined {
    if (this.#count === 0) return undefined;
    const specific = this.#handlers.get(event.type);
    const any = this.#handlers.get('*');
    if (specific === undefined && any === undefined) return undefined;
    const stepId = event.data?.stepId;
    // Plain assignments, not conditional spreads: this runs for every event of every job.
    const runtimeEvent: { -readonly [K in keyof RuntimeEvent]: RuntimeEvent[K] } = {
      id: event.id,
      type: event.type,
      timestamp: event.timestamp,
      jobId: event.jobId,
    };
    if (typeof stepId === 'string') runtimeEvent.stepId = stepId;
    if (event.data !== undefined) runtimeEvent.data = event.data;
    const pending: Promise<void>[] = [];
    for (const list of [specific, any]) {
      if (list === undefined) continue;
      for (const handler of list) {
        const settled = this.#deliver(handler, runtimeEvent);
        if (settled !== undefined) pending.push(settled);
      }
    }
    if (pending.length === 0) return undefined;
    return Promise.all(pending).then(() => undefined);
  }

  #deliver(handler: RuntimeEventHandler, event: RuntimeEvent): Promise<void> | undefined {
    let returned: unknown;
    try {
      returned = handler(event);
    } catch (error) {
      this.#report(error, event);
      return undefined;
    }
    if (typeof returned !== 'object' || returned === null) return undefined;
    try {
      // Adopting an arbitrary thenable can throw synchronously (hostile `constructor`/`then`).
      return Promise.resolve(returned).then(
        () => undefined,
        (error: unknown) => this.#report(error, event),
      );
    } catch (error) {
      this.#report(error, event);
      return undefined;
    }
  }

  #report(error: unknown, event: RuntimeEvent): void {
    try {
      const returned: unknown = this.#onError(error, event);
      // An async reporter that rejects must not end the process with an unhandled rejection.
      if (typeof returned === 'object' && returned !== null)
        Promise.resolve(returned).catch(ignore);
    } catch {
      // An error reporter that throws (or returns a hostile thenable) must not reach execution.
    }
  }
}
