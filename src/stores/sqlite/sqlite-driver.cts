/**
 * The SQLite driver: better-sqlite3, in the build that works on this Node.js (docs/decisions.md,
 * "Node versions"). better-sqlite3 12 (built from source at install) derives its classes from
 * Node's raw `ObjectWrap`, whose destructor aborts the process on Node 24 when a statement is
 * collected; 13 uses Node-API with prebuilt binaries but needs Node 22. So Node 20 loads 12 (the
 * `better-sqlite3` dependency) and Node 22 and later load 13 (the optional
 * `better-sqlite3-node22` alias of it), or 12 where that optional install is missing.
 *
 * A CommonJS module in both builds (`.cts`), so that the choice is a plain synchronous `require`
 * and the store keeps opening its database in its constructor.
 */
import type BetterSqlite3 from 'better-sqlite3';

/** The package this Node.js should load: the Node-API build from Node 22 on. */
const CURRENT =
  Number(process.versions.node.split('.')[0]) >= 22 ? 'better-sqlite3-node22' : 'better-sqlite3';

// The choice is made at run time, so these are `require` calls, not `import x = require()`.
/* eslint-disable @typescript-eslint/no-require-imports */
function load(): { Database: typeof BetterSqlite3; driver: string } {
  if (CURRENT !== 'better-sqlite3') {
    try {
      return { Database: require(CURRENT) as typeof BetterSqlite3, driver: CURRENT };
    } catch (error) {
      const code = (error as { code?: unknown } | null)?.code;
      const message = String((error as { message?: unknown } | null)?.message);
      if (code !== 'MODULE_NOT_FOUND' || !message.includes(`'${CURRENT}'`)) throw error;
    }
  }
  return { Database: require('better-sqlite3') as typeof BetterSqlite3, driver: 'better-sqlite3' };
}
/* eslint-enable @typescript-eslint/no-require-imports */

const loaded = load();

/** better-sqlite3's `Database` constructor for this Node.js. */
export const Database: typeof BetterSqlite3 = loaded.Database;
/** The name of the package `Database` came from. */
export const SQLITE_DRIVER: string = loaded.driver;
/**
 * The file `Database` was loaded from: a worker thread that opens the same database loads this
 * very file, so that both threads share one SQLite library and its locks
 * (wal-checkpointer.ts).
 */
export const SQLITE_DRIVER_FILE: string = require.resolve(loaded.driver);
