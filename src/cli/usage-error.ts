/** A mistake in how the program was called: reported as one line, exit code 2, no stack. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** Longest message text the program prints for a thrown value. */
const MAX_MESSAGE = 500;

function messageOf(thrown: unknown): string {
  if (thrown instanceof Error) return String(thrown.message) || thrown.name || 'Error';
  if (typeof thrown === 'object' && thrown !== null) return 'a non-error object was thrown';
  if (typeof thrown === 'function') return 'a function was thrown';
  return String(thrown);
}

/**
 * The first line of a thrown value's message, at most 500 characters. Never throws: modules and
 * authorizers are user code, and a hostile one throws proxies or values whose getters throw.
 */
export function firstLine(thrown: unknown): string {
  let text: string;
  try {
    text = messageOf(thrown);
  } catch {
    text = 'an unreadable value was thrown';
  }
  const line = text.split('\n')[0] ?? '';
  return line.length > MAX_MESSAGE ? `${line.slice(0, MAX_MESSAGE - 3)}...` : line;
}
