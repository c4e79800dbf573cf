/**
 * What the `postgres://` store option says about itself, read without loading `pg`: the option
 * is checked when the runtime is constructed, and the driver loads only when the store opens
 * (docs/decisions.md, "Light import").
 */

/** PostgreSQL's largest `statement_timeout`, in milliseconds. */
export const MAX_STATEMENT_TIMEOUT_MS = 2_147_483_647;

/**
 * The `statement_timeout` parameter of a store URL: null when absent, undefined when it is not
 * one whole number of milliseconds (at most PostgreSQL's 2,147,483,647; 0 for none).
 */
export function statementTimeoutOf(url: string): number | null | undefined {
  let values: string[];
  try {
    values = new URL(url).searchParams.getAll('statement_timeout');
  } catch {
    return undefined;
  }
  if (values.length === 0) return null;
  const text = values.length === 1 ? (values[0] as string) : '';
  const value = /^\d{1,10}$/.test(text) ? Number(text) : Number.NaN;
  return value <= MAX_STATEMENT_TIMEOUT_MS ? value : undefined;
}
