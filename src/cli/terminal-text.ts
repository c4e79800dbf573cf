/**
 * Everything the program prints reaches a terminal (docs/guide/cli.md, "The `warrant` program",
 * "Terminal output"): text from a plan, an authorizer, an approver or a capability is shown with
 * its control characters escaped, never interpreted (no clear screen, no window title, no rewritten
 * line). One rule for every output: C0 and C1 controls, DEL, the line and paragraph separators and
 * the bidirectional overrides are shown as `\n`, `\r`, `\t` or `\uXXXX`.
 *
 * - `shownText` is for one value inside a line (a goal, a step id, a reason, an error): every such
 *   character is escaped, line breaks included, so the value stays on its line.
 * - `terminalSafe` is for a whole output: every such character but the newline is escaped. It is
 *   the last step of every write (src/cli/output.ts), so a value a command forgot to pass through
 *   `shownText` still cannot drive the terminal. In JSON output the characters it escapes can only
 *   stand inside strings, so the JSON stays valid and means the same values.
 */

/** C0 and C1 controls, DEL, line and paragraph separators, bidirectional overrides and isolates. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const CONTROL_BUT_NEWLINE =
  // eslint-disable-next-line no-control-regex -- the same, less the newline
  /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

const NAMED: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function escaped(char: string): string {
  return NAMED[char] ?? `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/** Longest value shown inside a line, unless the caller says otherwise. */
export const MAX_SHOWN_CHARS = 120;

/** One value, shown on one line with its control characters escaped, cut to `max` characters. */
export function shownText(text: string, max = MAX_SHOWN_CHARS): string {
  const shown = text.length > max ? `${text.slice(0, Math.max(0, max - 3))}...` : text;
  return shown.replace(CONTROL, escaped);
}

/** A whole output: every control character but the newline escaped. */
export function terminalSafe(text: string): string {
  return text.replace(CONTROL_BUT_NEWLINE, escaped);
}
