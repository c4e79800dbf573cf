/**
 * Safe text for values that came from users: quoted with JSON.stringify where possible and cut to
 * 80 characters (STYLE.md rule 12). Never throws, whatever the value (proxies, cycles, bigint).
 */
export function describeValue(value: unknown): string {
  let text: string;
  try {
    if (typeof value === 'string') text = JSON.stringify(value);
    else if (value === undefined) text = 'undefined';
    else if (typeof value === 'bigint') text = `${value}n`;
    else if (typeof value === 'function') text = 'a function';
    else if (typeof value === 'symbol') text = 'a symbol';
    else if (Array.isArray(value)) text = 'an array';
    else if (typeof value === 'object' && value !== null) text = 'an object';
    else text = String(value);
  } catch {
    text = 'an unreadable value';
  }
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/** The message of a thrown value, for recording in a job. Never throws. */
export function describeThrown(thrown: unknown): string {
  try {
    if (thrown instanceof Error) {
      const message = thrown.message;
      return typeof message === 'string' && message !== '' ? message : thrown.name || 'Error';
    }
    if (typeof thrown === 'string') return thrown === '' ? 'Error' : thrown;
  } catch {
    return 'An unreadable error was thrown';
  }
  return `A non-error value was thrown: ${describeValue(thrown)}`;
}
