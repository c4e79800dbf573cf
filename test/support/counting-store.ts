// A real store that counts the jobs it hands out (get, held, list, listAwaiting): the rows a
// runtime read, for tests that bound how much a request reads (not a timing).
import type { JobStore } from '../../src/jobs/job-store.js';

const READS = new Set<PropertyKey>(['get', 'held', 'list', 'listAwaiting']);

function rowsIn(value: unknown): number {
  if (value === undefined) return 0;
  return Array.isArray(value) ? value.length : 1;
}

export interface CountingStore {
  readonly store: JobStore;
  /** Jobs handed out since the last reset. */
  rows(): number;
  reset(): void;
}

export function countingStore(inner: JobStore): CountingStore {
  let rows = 0;
  const count = (value: unknown): unknown => {
    if (value instanceof Promise)
      return value.then((settled: unknown) => {
        rows += rowsIn(settled);
        return settled;
      });
    rows += rowsIn(value);
    return value;
  };
  const store = new Proxy(inner, {
    get(target, key) {
      const value: unknown = Reflect.get(target, key, target);
      if (typeof value !== 'function') return value;
      const method = value as (...args: unknown[]) => unknown;
      if (!READS.has(key)) return method.bind(target);
      return (...args: unknown[]) => count(method.apply(target, args));
    },
  });
  return {
    store,
    rows: () => rows,
    reset: () => {
      rows = 0;
    },
  };
}
