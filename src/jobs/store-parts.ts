/**
 * Which named parts a store has beyond the `JobStore` core (docs/api.md, "Stores"): a part counts
 * only when every one of its methods is there, so the runtime asks once, here, and then calls the
 * part's methods as they are (no method-by-method optional calls across the runtime).
 */
import type {
  ApprovalLedger,
  AvailabilityStore,
  AwaitingIndex,
  CancelStore,
  ChainStore,
  CheckpointStore,
  IdempotencyStore,
  JobStore,
  LimitStore,
  OutboxStore,
  OwnedStore,
  QueueStore,
  SealScanStore,
} from './job-store.js';

/** True when every one of `names` is a method of `store`. */
function methods(store: JobStore, ...names: string[]): boolean {
  return names.every(
    (name) => typeof (store as unknown as Record<string, unknown>)[name] === 'function',
  );
}

export function hasAwaitingIndex(store: JobStore): store is JobStore & AwaitingIndex {
  return methods(store, 'listAwaiting');
}

export function hasChain(store: JobStore): store is JobStore & ChainStore {
  return methods(store, 'readChain');
}

export function hasCheckpoints(store: JobStore): store is JobStore & CheckpointStore {
  return methods(store, 'readChain', 'seal', 'readSeals', 'readSeal');
}

export function hasSealScan(store: JobStore): store is JobStore & SealScanStore {
  return hasCheckpoints(store) && methods(store, 'scanSeals');
}

export function hasLedger(store: JobStore): store is JobStore & ApprovalLedger {
  return methods(store, 'consumedIn');
}

export function hasCancels(store: JobStore): store is JobStore & CancelStore {
  return methods(store, 'requestCancel', 'cancelRequests');
}

export function hasIdempotency(store: JobStore): store is JobStore & IdempotencyStore {
  return methods(store, 'claimIdempotency');
}

export function isOwned(store: JobStore): store is JobStore & OwnedStore {
  return (
    typeof (store as Partial<OwnedStore>).owner === 'string' &&
    methods(store, 'claimOrphans', 'orphaned')
  );
}

export function hasQueue(store: JobStore): store is JobStore & QueueStore {
  return isOwned(store) && methods(store, 'takeQueued', 'updateWhileQueued');
}

export function hasAvailability(store: JobStore): store is JobStore & AvailabilityStore {
  return methods(store, 'availability');
}

export function hasLimits(store: JobStore): store is JobStore & LimitStore {
  return methods(store, 'takeLimits', 'limitCounters');
}

export function hasOutbox(store: JobStore): store is JobStore & OutboxStore {
  const outbox = (store as Partial<OutboxStore>).outbox;
  return typeof outbox === 'object' && outbox !== null;
}
