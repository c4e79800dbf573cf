import { createError } from '../errors/warrant-error.js';
import { describeValue } from '../errors/describe-value.js';
import type { JobStore } from './job-store.js';
import { MemoryJobStore } from './stores/memory-store.js';

export interface StoreOptions {
  readonly maxJobs: number;
}

/** Checks a `store` option without opening anything (constructors stay inert). */
export function checkStoreOption(store: unknown): void {
  if (store === undefined || store === 'memory') return;
  throw createError(
    TypeError,
    'RUNTIME_OPTIONS_INVALID',
    `options.store must be 'memory', got ${describeValue(store)}`,
  );
}

/** Opens the store named by a checked `store` option. */
export function openStore(_store: unknown, options: StoreOptions): JobStore {
  return new MemoryJobStore(options.maxJobs);
}
