import { ErrorCode } from '../errors/error-codes.js';
import { createError } from '../errors/warrant-error.js';
import { describeValue } from '../errors/describe-value.js';
import type { JobStore } from '../jobs/job-store.js';
import { MemoryJobStore } from './memory/memory-store.js';
import { statementTimeoutOf } from './postgres/postgres-url.js';
import type { StoreOutageListener } from './shared/write-retry.js';

export interface StoreOptions {
  readonly maxJobs: number;
  /** Key of the durable stores' event chain (HMAC-SHA-256); plain SHA-256 without one. */
  readonly auditKey?: string | undefined;
  /**
   * Told when a durable store's writes start failing on transient errors and end to
   * (stores/shared/write-retry.ts).
   */
  readonly onOutage?: StoreOutageListener | undefined;
}

const SQLITE = 'sqlite:';
const POSTGRES = /^postgres(ql)?:\/\//;

/** Whether a `store` option names a PostgreSQL store (workers need one: docs/api.md, "Workers"). */
export function isPostgresStore(store: string | undefined): boolean {
  return store !== undefined && POSTGRES.test(store);
}

function invalid(message: string): TypeError {
  return createError(TypeError, ErrorCode.RUNTIME_OPTIONS_INVALID, message);
}

/** The methods of the `JobStore` core (docs/api.md, "Stores"). */
const CORE_METHODS = ['create', 'update', 'get', 'list', 'close'] as const;

/**
 * Checks a `store` option without opening anything (constructors stay inert): `'memory'`
 * (default), `'sqlite:<file>'` (`sqlite::memory:` for an in-memory SQLite database), a
 * `postgres://` / `postgresql://` connection URL (whose `statement_timeout` parameter, if
 * present, must be a whole number of milliseconds), or a store object with the `JobStore` core
 * methods (docs/api.md, "Stores"). Returns the store object, or undefined for a string.
 */
export function checkStoreOption(store: unknown): JobStore | undefined {
  if (store === undefined || store === 'memory') return undefined;
  if (typeof store === 'object' && store !== null) return checkStoreObject(store);
  if (typeof store === 'string' && store.startsWith(SQLITE)) {
    if (store.length === SQLITE.length)
      throw invalid(`options.store 'sqlite:' needs a file: 'sqlite:<file>'`);
    return undefined;
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
    return undefined;
  }
  throw invalid(
    `options.store must be 'memory', 'sqlite:<file>', a postgres:// URL or a store object, got ${describeValue(store)}`,
  );
}

/** A store object: each core method read once (a throwing getter or proxy trap is refused). */
function checkStoreObject(store: object): JobStore {
  for (const name of CORE_METHODS) {
    let method: unknown;
    try {
      method = (store as Record<string, unknown>)[name];
    } catch {
      throw invalid(`options.store.${name} could not be read`);
    }
    if (typeof method !== 'function')
      throw invalid(
        `options.store must be 'memory', 'sqlite:<file>', a postgres:// URL or a store object with the methods ${CORE_METHODS.join(', ')}: ${name} is ${describeValue(method)}`,
      );
  }
  return store as JobStore;
}

/**
 * Opens the store named by a checked `store` option. The only place that knows store kinds. The
 * memory store opens at once; a durable store's module, and with it its driver (better-sqlite3,
 * pg), loads only now, so importing the package loads neither (docs/decisions.md, "Light
 * import"), and the store comes in a promise.
 */
export function openStore(
  store: string | undefined,
  options: StoreOptions,
): JobStore | Promise<JobStore> {
  if (store !== undefined && store.startsWith(SQLITE))
    return openSqlite(store.slice(SQLITE.length), options);
  if (store !== undefined && POSTGRES.test(store)) return openPostgres(store, options);
  return new MemoryJobStore(options.maxJobs);
}

async function openSqlite(file: string, options: StoreOptions): Promise<JobStore> {
  const { SqliteJobStore } = await loadDriver(
    'better-sqlite3',
    () => import('./sqlite/sqlite-store.js'),
  );
  try {
    return new SqliteJobStore(file, { auditKey: options.auditKey, onOutage: options.onOutage });
  } catch (error) {
    throw bindingProblem(error) ?? error;
  }
}

async function openPostgres(url: string, options: StoreOptions): Promise<JobStore> {
  const { PostgresJobStore } = await loadDriver('pg', () => import('./postgres/postgres-store.js'));
  return new PostgresJobStore(url, { auditKey: options.auditKey, onOutage: options.onOutage });
}

function storeOpenFailed(message: string, cause: unknown): Error {
  return createError(Error, ErrorCode.STORE_OPEN_FAILED, message, cause);
}

/** Loads a store module; a driver that is not installed is named, with the command that installs it. */
async function loadDriver<T>(driver: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    const missing =
      (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') &&
      String((error as Error).message).includes(`'${driver}'`);
    if (!missing) throw error;
    throw storeOpenFailed(
      `Cannot open the store: its driver ${driver} is not installed (run \`npm install ${driver}\`)`,
      error,
    );
  }
}

/**
 * What to run when better-sqlite3's compiled binding cannot be loaded (docs/guide/stores.md,
 * "Drivers").
 */
const REBUILD =
  'run `npm rebuild better-sqlite3` (pnpm skips build scripts: `pnpm approve-builds`, then `pnpm rebuild better-sqlite3`)';

/**
 * better-sqlite3 loads its compiled binding when the first database opens. When that binding was
 * never built (a package manager that skips build scripts: the error lists every path it
 * "Tried:") or was built for another Node.js (ERR_DLOPEN_FAILED), its message spans several
 * lines and its first line does not say what to do; this says it in one line.
 */
function bindingProblem(error: unknown): Error | undefined {
  const cause = (error as { cause?: unknown } | null)?.cause ?? error;
  const message = String((cause as { message?: unknown } | null)?.message ?? '');
  const code = (cause as { code?: unknown } | null)?.code;
  if (message.startsWith('Could not locate the bindings file'))
    return storeOpenFailed(
      `Cannot open the SQLite store: better-sqlite3's native binding is not built; ${REBUILD}`,
      error,
    );
  if (code === 'ERR_DLOPEN_FAILED' && message.includes('better_sqlite3'))
    return storeOpenFailed(
      `Cannot open the SQLite store: better-sqlite3's native binding does not load in Node.js ${process.versions.node} (built for another version or platform); ${REBUILD}`,
      error,
    );
  return undefined;
}
