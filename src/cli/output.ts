/**
 * The program's two outputs (docs/guide/cli.md, "The `warrant` program", "Terminal output"). Every
 * write goes through `terminalSafe`, so no control character from a plan, an authorizer or a
 * capability reaches the terminal. A closed output (`warrant jobs show <id> | head -2`) ends the
 * program quietly: the broken pipe is not an error, what is left to write is dropped, and the
 * command ends with its own exit code.
 */
import { terminalSafe } from './terminal-text.js';

/** What the program writes to: stdout or stderr, or a fake stream in tests. */
export interface OutputStream {
  write(text: string): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
}

const closed = new WeakSet<OutputStream>();

/**
 * Makes a closed `stream` quiet: its EPIPE (the reader went away) and the errors of later writes
 * are swallowed and later writes dropped. Any other error of the stream is reported once on
 * `report` (never thrown: an `'error'` event with no listener would end the program with a stack).
 */
export function guardOutput(stream: OutputStream, report?: (line: string) => void): void {
  stream.on('error', (error: Error) => {
    const first = !closed.has(stream);
    closed.add(stream);
    const code = (error as NodeJS.ErrnoException).code;
    if (first && code !== 'EPIPE' && code !== 'ERR_STREAM_DESTROYED')
      report?.(String(code ?? 'error'));
  });
}

/** Writes `text` to `stream` with its control characters escaped; nothing once it closed. */
export function writeTo(stream: OutputStream, text: string): void {
  if (closed.has(stream)) return;
  stream.write(terminalSafe(text));
}

/** Writes to stdout (see `writeTo`). */
export function writeOut(text: string): void {
  writeTo(process.stdout, text);
}

/** Writes to stderr (see `writeTo`). */
export function writeErr(text: string): void {
  writeTo(process.stderr, text);
}

/** Makes both outputs of the program quiet once closed (see `guardOutput`). */
export function guardProgramOutputs(): void {
  guardOutput(process.stdout, (code) =>
    writeErr(`warrant: stdout failed (${code}); the rest of the output is dropped\n`),
  );
  guardOutput(process.stderr);
}
