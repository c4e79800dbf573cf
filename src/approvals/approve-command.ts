/**
 * The one `warrant approvals approve` command line, as `warrant run`, `warrant approvals`, the
 * MCP "awaiting approval" answer and notifications print it (docs/api.md, "Notifications"): each
 * word exactly what the shell reads back, whatever the planner put in an id.
 */

/**
 * Characters that would break a line or reorder what is shown: the control characters (line
 * feeds, carriage returns, tabs, escapes, C1), the Unicode line and paragraph separators and the
 * bidirectional marks, overrides and isolates (docs/decisions.md, "Slack text").
 */
export const UNSAFE_CHARS = /[\p{Cc}\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu;
const HAS_UNSAFE_CHAR = new RegExp(UNSAFE_CHARS.source, 'u');
const SHORT_ESCAPES: Readonly<Record<string, string>> = { '\n': 'n', '\r': 'r', '\t': 't' };

/** `\n`, `\r`, `\t`, `\xHH` (other ASCII) or `\uHHHH` for one character of UNSAFE_CHARS. */
export function escapeOf(char: string): string {
  const short = SHORT_ESCAPES[char];
  if (short !== undefined) return `\\${short}`;
  const code = char.codePointAt(0) as number;
  return code < 0x80
    ? `\\x${code.toString(16).padStart(2, '0')}`
    : `\\u${code.toString(16).padStart(4, '0')}`;
}

/**
 * A shell word, exactly `value` once the shell reads it: bare when plain, in single quotes
 * otherwise, and as `$'...'` (ANSI-C quoting, bash and zsh) when it holds a character of
 * UNSAFE_CHARS, each written as an escape (never as itself).
 */
export function shellWord(value: string): string {
  if (/^[A-Za-z0-9._:@/-]+$/.test(value)) return value;
  if (!HAS_UNSAFE_CHAR.test(value)) return `'${value.replaceAll("'", `'\\''`)}'`;
  const escaped = value
    .replaceAll('\\', '\\\\')
    .replaceAll("'", "\\'")
    .replace(UNSAFE_CHARS, escapeOf);
  return `$'${escaped}'`;
}

/**
 * The command that approves step `stepId` of job `jobId` whose request carries `digest`, with
 * `flags` (the words the decision needs to run the step as the submitting process would): an id
 * that starts with `-` is never read as an option, the ids then follow `--`. Without `stepId`,
 * the plan request of the job (`--plan`, docs/api.md "Plan warrants").
 */
export function approveCommandLine(
  jobId: string,
  stepId: string | undefined,
  digest: string,
  flags: readonly string[],
): string {
  if (stepId === undefined) {
    const words = ['--plan', '--digest', digest, ...flags].map(shellWord).join(' ');
    return jobId.startsWith('-')
      ? `warrant approvals approve ${words} -- ${shellWord(jobId)}`
      : `warrant approvals approve ${shellWord(jobId)} ${words}`;
  }
  const ids = `${shellWord(jobId)} ${shellWord(stepId)}`;
  const words = flags.map(shellWord).join(' ');
  const extra = words === '' ? '' : ` ${words}`;
  return jobId.startsWith('-') || stepId.startsWith('-')
    ? `warrant approvals approve --digest ${shellWord(digest)}${extra} -- ${ids}`
    : `warrant approvals approve ${ids} --digest ${shellWord(digest)}${extra}`;
}
