/**
 * The one rule both SQL stores open their schema by: no version row yet is a new store to
 * create; a newer version than this code knows is refused (STORE_SCHEMA_TOO_NEW), since an older
 * Warrant cannot tell what it would break; an older one is migrated step by step by the store, in
 * the transaction it opened.
 */
import { ErrorCode } from '../../errors/error-codes.js';
import { createError } from '../../errors/warrant-error.js';

export type SchemaStep = 'create' | 'current' | 'migrate';

/**
 * What to do with a store whose schema is at `found` (undefined: no version row) for code that
 * writes `current`; `store` names it in the refusal ("SQLite store at \"jobs.db\"").
 * @throws Error (STORE_SCHEMA_TOO_NEW) when `found` is newer than `current`.
 */
export function schemaStep(found: number | undefined, current: number, store: string): SchemaStep {
  if (found === undefined) return 'create';
  if (found > current)
    throw createError(
      Error,
      ErrorCode.STORE_SCHEMA_TOO_NEW,
      `The ${store} has schema version ${found}; this Warrant knows up to ${current}. Upgrade Warrant to open it.`,
    );
  return found < current ? 'migrate' : 'current';
}
