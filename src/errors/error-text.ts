/**
 * Error text that crosses a process boundary (HTTP answers, MCP results) is one line with no
 * stack frames, whatever an authorizer or a capability put in its message (docs/decisions.md
 * "HTTP and the program"): the first line that is neither blank nor a stack frame, trimmed.
 * What is recorded in a job stays as it was; only what leaves the process is cut.
 */

// Every line terminator of JavaScript, so no line survives inside the one that is kept.
const LINE_BREAK = /\r\n|[\n\r\u2028\u2029]/;
// A V8 stack frame: indentation, then "at " (`    at fn (file.js:1:2)`).
const STACK_FRAME = /^\s+at\s/;

/** The first line of `text` that is neither blank nor a stack frame, trimmed; else `'Error'`. */
export function oneLineError(text: string): string {
  for (const line of text.split(LINE_BREAK)) {
    if (STACK_FRAME.test(line)) continue;
    const trimmed = line.trim();
    if (trimmed !== '') return trimmed;
  }
  return 'Error';
}
