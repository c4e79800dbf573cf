/**
 * Opening a file under a root directory as one operation: the path is resolved lexically, then
 * opened one component at a time from a descriptor of the root, each component relative to the
 * directory descriptor opened before it and never through a symbolic link (O_NOFOLLOW on every
 * component). The opened file's real path is checked against the root's and a file with more
 * than one hard link is refused, both on the open descriptor. Node has no openat: how a
 * descriptor's entries are reached, and what is left open, is in docs/decisions.md
 * "Built-in capabilities".
 * Every message names paths relative to the root, never the host path.
 */
import { constants, existsSync } from 'node:fs';
import {
  lstat,
  mkdir,
  open,
  readlink,
  realpath,
  stat,
  unlink,
  type FileHandle,
} from 'node:fs/promises';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';

/**
 * How the entries of an open directory are reached. `proc`: through `/proc/self/fd/<fd>/<name>`,
 * the directory the descriptor holds even after a rename (Linux). `path`: through the host path
 * the walk took, with each opened descriptor compared with that path afterwards (elsewhere).
 */
export type DirectoryLookup = 'proc' | 'path';

export function defaultLookup(): DirectoryLookup {
  return existsSync('/proc/self/fd') ? 'proc' : 'path';
}

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL } = constants;
const O_DIRECTORY: number | undefined = constants.O_DIRECTORY;
const O_NOFOLLOW: number | undefined = constants.O_NOFOLLOW;
// A FIFO would block an open for reading; it is refused after the open as not a regular file.
const O_NONBLOCK: number = constants.O_NONBLOCK ?? 0;

/** A refusal whose message is already fit to show (paths relative to the root). */
export class FsRefusal extends Error {}

/** A path under the root: its components, and how it is shown (relative, `/`-separated). */
export interface RootPath {
  readonly parts: readonly string[];
  readonly shown: string;
}

function inside(root: string, target: string): boolean {
  const path = relative(root, target);
  return path === '' || (!path.startsWith(`..${sep}`) && path !== '..' && !isAbsolute(path));
}

/** Resolves `path` against `root` without touching the disk; refuses paths that leave it. */
export function rootPath(root: string, path: string): RootPath {
  if (path.includes('\0')) throw new FsRefusal('Path contains a NUL character');
  const target = resolve(root, path);
  if (!inside(root, target))
    throw new FsRefusal(`Path ${JSON.stringify(path)} is outside the fs root`);
  const parts = relative(root, target).split(sep).filter(Boolean);
  return { parts, shown: parts.length === 0 ? '.' : parts.join('/') };
}

const quoted = (parts: readonly string[]) => JSON.stringify(parts.join('/') || '.');

/** An open descriptor and the host path the walk reached it by (used by `path` lookups). */
interface Opened {
  readonly handle: FileHandle;
  readonly path: string;
}

function errorCode(error: unknown): string | undefined {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * The real path of an open descriptor: through /proc, the kernel's own name for it (read, not
 * resolved again, so no link can alter the answer); with `path` lookups, the real path of the
 * path walked, only if it still leads to the same file.
 */
async function realPathOf(lookup: DirectoryLookup, opened: Opened): Promise<string> {
  if (lookup === 'proc') return readlink(`/proc/self/fd/${opened.handle.fd}`);
  const real = await realpath(opened.path);
  const [held, found] = await Promise.all([opened.handle.stat(), stat(real)]);
  if (held.dev !== found.dev || held.ino !== found.ino)
    throw new FsRefusal('changed while it was opened');
  return real;
}

/** Turns a failed open (or mkdir) of `parts` into a refusal that names it. */
async function refusalFor(
  error: unknown,
  entry: string,
  parts: readonly string[],
): Promise<FsRefusal> {
  if (error instanceof FsRefusal) return error;
  const code = errorCode(error);
  if (code === 'ELOOP' || code === 'ENOTDIR' || code === 'EEXIST') {
    const info = await lstat(entry).catch(() => undefined);
    if (info?.isSymbolicLink())
      return new FsRefusal(`${quoted(parts)} is a symbolic link; fs capabilities follow none`);
    if (code === 'ENOTDIR') return new FsRefusal(`${quoted(parts)} is not a directory`);
  }
  if (code === 'ENOENT') return new FsRefusal(`${quoted(parts)} does not exist`);
  if (code === 'EISDIR') return new FsRefusal(`${quoted(parts)} is not a regular file`);
  return new FsRefusal(`Cannot open ${quoted(parts)}${code === undefined ? '' : ` (${code})`}`);
}

/** One descent from the root: the descriptors it holds, closed together at the end. */
class Walk {
  readonly #lookup: DirectoryLookup;
  readonly #opened: Opened[];
  readonly #rootReal: string;

  private constructor(lookup: DirectoryLookup, root: Opened, rootReal: string) {
    this.#lookup = lookup;
    this.#opened = [root];
    this.#rootReal = rootReal;
  }

  /** Opens the root (operator-chosen: it may itself be reached through a link). */
  static async start(lookup: DirectoryLookup, root: string): Promise<Walk> {
    if (O_DIRECTORY === undefined || O_NOFOLLOW === undefined)
      throw new FsRefusal('fs capabilities need O_NOFOLLOW and O_DIRECTORY (Linux, macOS, BSD)');
    const handle = await open(root, O_RDONLY | O_DIRECTORY).catch((error: unknown) => {
      throw new FsRefusal(`The fs root cannot be opened (${errorCode(error) ?? 'error'})`);
    });
    const opened = { handle, path: root };
    try {
      return new Walk(lookup, opened, await realPathOf(lookup, opened));
    } catch (error) {
      await handle.close();
      throw error instanceof FsRefusal ? error : new FsRefusal('The fs root cannot be opened');
    }
  }

  get #current(): Opened {
    return this.#opened[this.#opened.length - 1] as Opened;
  }

  /** How the entry `name` of the current directory is reached. */
  #entry(name: string): string {
    const directory = this.#current;
    return this.#lookup === 'proc'
      ? `/proc/self/fd/${directory.handle.fd}/${name}`
      : join(directory.path, name);
  }

  /** Throws unless the descriptor's real path is under the root's. */
  async #checkInside(opened: Opened, parts: readonly string[]): Promise<void> {
    const real = await realPathOf(this.#lookup, opened).catch((error: unknown) => {
      const why = error instanceof FsRefusal ? error.message : 'cannot be resolved';
      throw new FsRefusal(`${quoted(parts)} ${why}`);
    });
    if (!inside(this.#rootReal, real))
      throw new FsRefusal(`${quoted(parts)} left the fs root while it was opened`);
  }

  /** Opens the last of `parts` in the current directory, never through a symbolic link. */
  async #open(parts: readonly string[], flags: number, mode?: number): Promise<Opened> {
    const name = parts[parts.length - 1] as string;
    const entry = this.#entry(name);
    const handle = await open(entry, flags | (O_NOFOLLOW as number), mode);
    return { handle, path: join(this.#current.path, name) };
  }

  /**
   * Descends into the directories `parts`, creating missing ones when asked. With `anchor`, the
   * directory at its depth must be the one prepared (the same device and inode), or nothing
   * below it is opened.
   */
  async descend(parts: readonly string[], create: boolean, anchor?: Anchor): Promise<void> {
    if (anchor?.depth === 0) await this.#checkAnchor(anchor, parts.slice(0, 0));
    for (let index = 1; index <= parts.length; index += 1) {
      const prefix = parts.slice(0, index);
      const entry = this.#entry(prefix[index - 1] as string);
      try {
        if (create)
          await mkdir(entry).catch((error: unknown) => {
            if (errorCode(error) !== 'EEXIST') throw error;
          });
        this.#opened.push(await this.#open(prefix, O_RDONLY | (O_DIRECTORY as number)));
      } catch (error) {
        throw await refusalFor(error, entry, prefix);
      }
      if (anchor?.depth === index) await this.#checkAnchor(anchor, prefix);
    }
    await this.#checkInside(this.#current, parts);
  }

  /**
   * Descends into as many of the directories `parts` as exist (creating none): how many were
   * entered. A component that is a link or not a directory is refused as `descend` refuses it.
   */
  async descendExisting(parts: readonly string[]): Promise<number> {
    for (let index = 1; index <= parts.length; index += 1) {
      const prefix = parts.slice(0, index);
      const entry = this.#entry(prefix[index - 1] as string);
      try {
        this.#opened.push(await this.#open(prefix, O_RDONLY | (O_DIRECTORY as number)));
      } catch (error) {
        if (errorCode(error) === 'ENOENT') return index - 1;
        throw await refusalFor(error, entry, prefix);
      }
    }
    return parts.length;
  }

  /** The current directory: its real path (checked under the root) and its identity. */
  async current(parts: readonly string[]): Promise<{ real: string; dev: string; ino: string }> {
    await this.#checkInside(this.#current, parts);
    const real = await realPathOf(this.#lookup, this.#current);
    const info = await this.#current.handle.stat({ bigint: true });
    return { real, dev: String(info.dev), ino: String(info.ino) };
  }

  async #checkAnchor(anchor: Anchor, parts: readonly string[]): Promise<void> {
    const info = await this.#current.handle.stat({ bigint: true });
    if (String(info.dev) !== anchor.dev || String(info.ino) !== anchor.ino)
      throw new FsRefusal(
        `${quoted(parts)} is no longer the directory it was when the step was prepared`,
      );
  }

  /** Opens the file `parts` (its parents already descended into) and checks the descriptor. */
  async openFile(parts: readonly string[], forWriting: boolean): Promise<FileHandle> {
    const entry = this.#entry(parts[parts.length - 1] as string);
    let file: Opened;
    let created = false;
    try {
      if (!forWriting) file = await this.#open(parts, O_RDONLY | O_NONBLOCK);
      else {
        try {
          file = await this.#open(parts, O_WRONLY | O_NONBLOCK | O_CREAT | O_EXCL, 0o666);
          created = true;
        } catch (error) {
          if (errorCode(error) !== 'EEXIST') throw error;
          file = await this.#open(parts, O_WRONLY | O_NONBLOCK);
        }
      }
    } catch (error) {
      throw await refusalFor(error, entry, parts);
    }
    try {
      await this.#checkInside(file, parts);
      const info = await file.handle.stat();
      if (!info.isFile()) throw new FsRefusal(`${quoted(parts)} is not a regular file`);
      if (info.nlink > 1) {
        throw new FsRefusal(
          `${quoted(parts)} has ${info.nlink} hard links; fs capabilities refuse files with more than one`,
        );
      }
      return file.handle;
    } catch (error) {
      if (created) await removeIfSame(entry, file.handle);
      await file.handle.close();
      throw await refusalFor(error, entry, parts);
    }
  }

  async close(): Promise<void> {
    await Promise.all(this.#opened.splice(0).map((opened) => opened.handle.close()));
  }
}

/**
 * The deepest directory of a path that existed when its step was prepared (docs/api.md,
 * "Prepared effects"): how many components under the root it is, and its device and inode
 * (decimal text), which the walk that opens the file must find again.
 */
export interface Anchor {
  readonly depth: number;
  readonly dev: string;
  readonly ino: string;
}

/** A path prepared under the root: its host path (parents' real paths) and its anchor. */
export interface PreparedPath {
  readonly real: string;
  readonly anchor: Anchor;
}

/**
 * Prepares `path` (a `rootPath`) without changing anything: its existing parent directories are
 * entered as the open would enter them (never through a link), and the deepest one is the
 * anchor; the path shown is its real path followed by the components still to be created.
 */
export async function prepareUnderRoot(
  lookup: DirectoryLookup,
  root: string,
  path: RootPath,
): Promise<PreparedPath> {
  if (path.parts.length === 0) throw new FsRefusal(`"." is not a regular file`);
  const walk = await Walk.start(lookup, root);
  try {
    const parents = path.parts.slice(0, -1);
    const depth = await walk.descendExisting(parents);
    const { real, dev, ino } = await walk.current(parents.slice(0, depth));
    return { real: join(real, ...path.parts.slice(depth)), anchor: { depth, dev, ino } };
  } finally {
    await walk.close();
  }
}

/** Removes a file a walk created and then refused, if `entry` still names that file. */
async function removeIfSame(entry: string, handle: FileHandle): Promise<void> {
  const [held, found] = await Promise.all([handle.stat(), lstat(entry).catch(() => undefined)]);
  if (found !== undefined && found.dev === held.dev && found.ino === held.ino)
    await unlink(entry).catch(() => undefined);
}

/**
 * Opens the regular file `path` (a `rootPath`) under `root` for reading or writing (created if
 * missing, with its parent directories when writing; never truncated here); the final component
 * is opened with O_NOFOLLOW, as every other.
 */
export async function openUnderRoot(
  lookup: DirectoryLookup,
  root: string,
  path: RootPath,
  forWriting: boolean,
  /** The directory prepared (`prepareUnderRoot`): the walk refuses to go on from another one. */
  anchor?: Anchor,
): Promise<FileHandle> {
  if (path.parts.length === 0) throw new FsRefusal(`"." is not a regular file`);
  const walk = await Walk.start(lookup, root);
  try {
    await walk.descend(path.parts.slice(0, -1), forWriting, anchor);
    return await walk.openFile(path.parts, forWriting);
  } finally {
    await walk.close();
  }
}
