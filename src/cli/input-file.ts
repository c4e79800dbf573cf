/**
 * The files the program is given (a plan, `--module` and `--authorizer` files) must be regular
 * files of at most 10 MiB (docs/guide/cli.md, "Before anything runs"): `/dev/zero`, a FIFO or a
 * directory would otherwise make the program read for ever or wait for a writer. The file is opened
 * once, without blocking on a FIFO, and the check is made on the opened descriptor, so what is read
 * is what was checked.
 */
import { constants, type Stats } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { UsageError } from './usage-error.js';

/** Largest plan, module or authorizer file the program accepts. */
export const MAX_INPUT_FILE_BYTES = 10 * 1024 * 1024;

const CHUNK_BYTES = 1024 * 1024;

function kindOf(stats: Stats): string {
  if (stats.isDirectory()) return 'a directory';
  if (stats.isFIFO()) return 'a FIFO';
  if (stats.isCharacterDevice()) return 'a character device';
  if (stats.isBlockDevice()) return 'a block device';
  if (stats.isSocket()) return 'a socket';
  return 'not a regular file';
}

function tooLarge(label: string): UsageError {
  return new UsageError(`${label}: larger than 10 MiB`);
}

/**
 * Opens `path` for reading and checks the opened descriptor. `label` starts every message,
 * e.g. `--module ./caps.js`. The caller closes the handle.
 */
async function openInputFile(path: string, label: string): Promise<FileHandle> {
  let handle: FileHandle;
  try {
    // O_NONBLOCK: opening a FIFO returns at once instead of waiting for a writer; it changes
    // nothing for a regular file.
    handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(
      code === 'ENOENT' || code === 'ENOTDIR'
        ? `${label}: file not found`
        : `${label}: cannot be opened (${code ?? 'unknown error'})`,
    );
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) {
      const kind = kindOf(stats);
      throw new UsageError(
        `${label}: ${kind === 'not a regular file' ? kind : `not a regular file (${kind})`}`,
      );
    }
    if (stats.size > MAX_INPUT_FILE_BYTES) throw tooLarge(label);
    return handle;
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/** Checks that `path` is a regular file of at most 10 MiB (for files Node itself loads). */
export async function checkInputFile(path: string, label: string): Promise<void> {
  const handle = await openInputFile(path, label);
  await handle.close();
}

/**
 * The bytes of a regular file of at most 10 MiB, read from the descriptor that was checked; a
 * file that grows past the limit while it is read is refused too.
 */
export async function readInputFile(path: string, label: string): Promise<Buffer> {
  const handle = await openInputFile(path, label);
  try {
    const chunks: Buffer[] = [];
    let total = 0;
    while (total <= MAX_INPUT_FILE_BYTES) {
      const chunk = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, MAX_INPUT_FILE_BYTES + 1 - total));
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, null);
      if (bytesRead === 0) return Buffer.concat(chunks, total);
      chunks.push(chunk.subarray(0, bytesRead));
      total += bytesRead;
    }
    throw tooLarge(label);
  } catch (error) {
    if (error instanceof UsageError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(`${label}: cannot be read (${code ?? 'unknown error'})`);
  } finally {
    await handle.close();
  }
}
