/**
 * ISO timestamps for job records. Formatting a Date was a fifth of the governed hot path in the
 * profile of bench/runtime/execute.bench.ts, so the text is reused while the millisecond has not
 * changed: the same value, at the same (millisecond) precision, for far less work.
 */
let lastMs = -1;
let lastIso = '';

export function isoNow(): string {
  const ms = Date.now();
  if (ms !== lastMs) {
    lastMs = ms;
    lastIso = new Date(ms).toISOString();
  }
  return lastIso;
}
