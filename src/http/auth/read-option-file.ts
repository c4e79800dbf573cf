/**
 * Reads a file named by a `warrant serve` option (a callers file, a public key, a JWKS): it must
 * be a regular file of at most `maxBytes`. The checks are made on the opened descriptor, so the
 * file read is the file checked. Every failure is one coded line naming the option.
 */
import { constants, type Stats } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { authOptionsError, isAuthOptionsError } from './authenticator.js';

export interface OptionFile {
  readonly text: string;
  /** Permission bits of the file (`mode & 0o777`). */
  readonly mode: number;
}

function errnoCode(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : 'unreadable';
}

function checkStats(stats: Stats, label: string, maxBytes: number): void {
  if (!stats.isFile()) throw authOptionsError(`${label}: not a regular file`);
  if (stats.size > maxBytes)
    throw authOptionsError(`${label}: larger than ${maxBytes} bytes (${stats.size})`);
}

/** `label` is how messages name the file, e.g. `--callers ./callers.json`. */
export async function readOptionFile(
  path: string,
  label: string,
  maxBytes: number,
): Promise<OptionFile> {
  let handle;
  try {
    // O_NONBLOCK: a FIFO given as the file does not block the start.
    handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    throw authOptionsError(`${label}: cannot open (${errnoCode(error)})`, error);
  }
  try {
    const stats = await handle.stat();
    checkStats(stats, label, maxBytes);
    const buffer = Buffer.alloc(maxBytes + 1);
    let length = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, null);
      if (bytesRead === 0) break;
      length += bytesRead;
      if (length > maxBytes) throw authOptionsError(`${label}: larger than ${maxBytes} bytes`);
    }
    let text: string;
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(buffer.subarray(0, length));
    } catch {
      throw authOptionsError(`${label}: not UTF-8 text`);
    }
    return { text, mode: stats.mode & 0o777 };
  } catch (error) {
    if (isAuthOptionsError(error)) throw error;
    throw authOptionsError(`${label}: cannot read (${errnoCode(error)})`, error);
  } finally {
    await handle.close();
  }
}

/** Checks, without reading it, that `path` is a regular file of at most `maxBytes`. */
export async function checkOptionFile(
  path: string,
  label: string,
  maxBytes: number,
): Promise<void> {
  let stats: Stats;
  try {
    stats = await stat(path);
  } catch (error) {
    throw authOptionsError(`${label}: cannot open (${errnoCode(error)})`, error);
  }
  checkStats(stats, label, maxBytes);
}
