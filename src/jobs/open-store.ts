import { createError } from '../errors/warrant-error.js';
import { describeValue } from '../errors/describe-value.js';
import type { JobStore } from './job-store.js';
import { MemoryJobStore } from './stores/memory-store.js';
import { PostgresJobStore, statementTimeoutOf } from './stores/postgres-store.js';
import { SqliteJobStore } from './stores/sqlite-store.js';

export interface StoreOptions {
  readonly maxJobs: number;
  /** Key of the durable stores' event chain (HMAC-SHA-256); plain SHA-256 without one. */
  readonly auditKey?: string | undefined;
}

const SQLITE = 'sqlite:';
const POSTGRES = /^postgres(ql)?:\/\//;

function invalid(message: string): TypeError {
  return createError(TypeError, 'RUNTIME_OPTIONS_INVALID', message);
}

/**
 * Checks a `store` option without opening anything (constructors stay inert): `'memory'`
 * (default), `'sqlite:<file>'` (`sqlite::memory:` for an in-memory SQLite database) or a
 * `postgres://` / `postgresql://` connection URL (whose `statement_timeout` parameter, if
 * present, must be a whole number of milliseconds).
 */
export function checkStoreOption(store: unknown): void {
  if (store === undefined || store === 'memory') return;
  if (typeof store === 'string' && store.startsWith(SQLITE)) {
    if (store.length === SQLITE.length)
      throw invalid(`options.store 'sqlite:' needs a file: 'sqlite:<file>'`);
    return;
  }
  if (typeof store === 'string' && POSTGRES.test(store)) {
    try {
      new URL(store);
    } catch {
      throw invalid('options.store is not a valid postgres:// URL');
    }
    if (statementTimeoutOf(store) === undefined)
      throw invalid(
        'options.store statement_timeout must be one whole number of milliseconds (0 for none)',
      );
    return;
  }
  throw invalid(
    `options.store must be 'memory', 'sqlite:<file>' or a postgres:// URL, got ${describeValue(store)}`,
  );
}

/** Opens the store named by a checked `store` option. The only place that knows store kinds. */
export function openStore(store: string | undefined, options: StoreOptions): JobStore {
  if (store !== undefined && store.startsWith(SQLITE))
    return new SqliteJobStore(store.slice(SQLITE.length), { auditKey: options.auditKey });
  if (store !== undefined && POSTGRES.test(store))
    return new PostgresJobStore(store, { auditKey: options.auditKey });
  return new MemoryJobStore(options.maxJobs);
}
