/** A mistake in how the program was called: reported as one line, exit code 2, no stack. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}
