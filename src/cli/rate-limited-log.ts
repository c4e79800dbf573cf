/**
 * A diagnostic log that cannot flood stderr (docs/guide/http.md, "HTTP routes"): the first line of
 * an interval is written at once, later lines of the same interval are only counted, and the count
 * is written when the interval ends (which starts the next one). So a steady stream of failures
 * costs one line per interval, every failure is accounted for, and the first failure after a quiet
 * interval is written in full.
 */

export interface RateLimitedLog {
  /** Writes `line`, or counts it when a line was written less than an interval ago. */
  write(line: string): void;
  /** Writes the pending count, if any, and stops the timer. */
  close(): void;
}

export interface RateLimitedLogOptions {
  /** Default 1000 ms. */
  readonly intervalMs?: number;
  /** The line that reports `count` lines left out. */
  readonly suppressed?: (count: number) => string;
  /** Runs `callback` after `ms`; returns a cancel function. Default: an unref'd setTimeout, so
   * a pending count never keeps the process alive. */
  readonly schedule?: (callback: () => void, ms: number) => () => void;
}

function unrefTimeout(callback: () => void, ms: number): () => void {
  const timer = setTimeout(callback, ms);
  timer.unref();
  return () => clearTimeout(timer);
}

const defaultSuppressed = (count: number) =>
  `${count} more ${count === 1 ? 'line' : 'lines'} suppressed`;

export function createRateLimitedLog(
  emit: (line: string) => void,
  options: RateLimitedLogOptions = {},
): RateLimitedLog {
  const intervalMs = options.intervalMs ?? 1000;
  const suppressed = options.suppressed ?? defaultSuppressed;
  const schedule = options.schedule ?? unrefTimeout;
  let cancel: (() => void) | undefined;
  let count = 0;

  const endInterval = (): void => {
    cancel = undefined;
    if (count === 0) return;
    emit(suppressed(count));
    count = 0;
    cancel = schedule(endInterval, intervalMs);
  };

  return {
    write(line) {
      if (cancel !== undefined) {
        count += 1;
        return;
      }
      emit(line);
      cancel = schedule(endInterval, intervalMs);
    },
    close() {
      cancel?.();
      cancel = undefined;
      if (count > 0) emit(suppressed(count));
      count = 0;
    },
  };
}
