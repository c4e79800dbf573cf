/**
 * `fs.read` (read), `fs.write` (write) and `fs.status`, confined to one root directory. Paths are
 * resolved against the root and refused when they leave it (`..`, absolute paths elsewhere), go
 * through a symbolic link (inside the root or not), or name a file with more than one hard link;
 * the check and the open are one operation (src/builtins/confined-files.ts, docs/decisions.md
 * "Built-in capabilities"). Both prepare their effect (docs/api.md, "Prepared effects"): the
 * path as resolved, and the directory the open must find again. Messages show paths relative
 * to the root.
 */
import { createHash } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { createCapability, type CapabilityModule } from '../index.js';
import {
  defaultLookup,
  FsRefusal,
  openUnderRoot,
  prepareUnderRoot,
  rootPath,
  type Anchor,
  type DirectoryLookup,
  type RootPath,
} from './confined-files.js';

/**
 * The effect of `fs.read` and `fs.write` (docs/api.md, "Prepared effects"): the operation, the
 * path resolved under the root (the real path of its deepest existing directory, then the rest),
 * for a write the bytes and `sha256:` of the content, and the directory the walk must find again.
 */
interface FsEffect {
  readonly op: 'read' | 'write';
  readonly path: string;
  readonly bytes?: number;
  readonly contentDigest?: string;
  readonly directory: Anchor;
}

const contentDigest = (content: string): string =>
  `sha256:${createHash('sha256').update(content, 'utf8').digest('hex')}`;

/** The directory a prepared effect names, when it is one a walk can compare. */
function anchorOf(effect: unknown, op: FsEffect['op'], content?: string): Anchor {
  const prepared = effect as Partial<FsEffect> | null;
  const directory = prepared?.directory;
  if (
    prepared?.op !== op ||
    typeof directory?.depth !== 'number' ||
    typeof directory.dev !== 'string' ||
    typeof directory.ino !== 'string'
  )
    throw new FsRefusal('The prepared effect is not one of this capability');
  if (content !== undefined && prepared.contentDigest !== contentDigest(content))
    throw new FsRefusal('The content is not the one prepared');
  return directory;
}

export interface FsModuleOptions {
  /** The only directory the capabilities may touch. */
  readonly root: string;
  /** Largest file `fs.read` returns, in bytes. Default 1 MiB. */
  readonly maxBytes?: number;
  /** How open directories are searched (see confined-files.ts); the default suits the system. */
  readonly lookup?: DirectoryLookup;
}

const CHUNK = 64 * 1024;

/** A failure after the open (a read or write error) as one line naming the relative path. */
function failure(error: unknown, verb: string, path: RootPath): Error {
  if (error instanceof FsRefusal) return error;
  const code = (error as NodeJS.ErrnoException | null)?.code;
  return new FsRefusal(
    `Cannot ${verb} ${JSON.stringify(path.shown)}${typeof code === 'string' ? ` (${code})` : ''}`,
  );
}

export function createFsModule(options: FsModuleOptions): CapabilityModule {
  const root = resolve(options.root);
  const maxBytes = options.maxBytes ?? 1024 * 1024;
  const lookup = options.lookup ?? defaultLookup();
  if (lookup !== 'proc' && lookup !== 'path')
    throw new TypeError(`createFsModule: lookup must be 'proc' or 'path'`);

  async function prepare(op: FsEffect['op'], path: RootPath, content?: string): Promise<FsEffect> {
    const { real, anchor } = await prepareUnderRoot(lookup, root, path);
    if (content === undefined) return { op, path: real, directory: anchor };
    const bytes = Buffer.byteLength(content);
    return { op, path: real, bytes, contentDigest: contentDigest(content), directory: anchor };
  }

  /** The directory prepared: from the runtime's effect, or prepared now for a direct call. */
  async function anchorFor(
    effect: unknown,
    op: FsEffect['op'],
    path: RootPath,
    content?: string,
  ): Promise<Anchor> {
    return effect === undefined
      ? (await prepare(op, path, content)).directory
      : anchorOf(effect, op, content);
  }

  async function readText(
    path: RootPath,
    anchor: Anchor,
  ): Promise<{ size: number; content: string }> {
    const handle = await openUnderRoot(lookup, root, path, false, anchor);
    try {
      const tooLarge = () =>
        new FsRefusal(`${JSON.stringify(path.shown)} is larger than ${maxBytes} bytes`);
      if ((await handle.stat()).size > maxBytes) throw tooLarge();
      // Read at most one byte past the cap: a file that grew since stat is still refused.
      const chunks: Buffer[] = [];
      let size = 0;
      for (;;) {
        const buffer = Buffer.alloc(Math.min(CHUNK, maxBytes + 1 - size));
        const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
        if (bytesRead === 0) break;
        chunks.push(buffer.subarray(0, bytesRead));
        size += bytesRead;
        if (size > maxBytes) throw tooLarge();
      }
      return { size, content: Buffer.concat(chunks).toString('utf8') };
    } catch (error) {
      throw failure(error, 'read', path);
    } finally {
      await handle.close();
    }
  }

  async function writeText(path: RootPath, content: string, anchor: Anchor): Promise<void> {
    const handle = await openUnderRoot(lookup, root, path, true, anchor);
    try {
      // Truncated only now: a refused file (a hard link, say) is left as it was.
      await handle.truncate(0);
      await handle.writeFile(content, 'utf8');
    } catch (error) {
      throw failure(error, 'write', path);
    } finally {
      await handle.close();
    }
  }

  const pathField = {
    type: 'string',
    required: true,
    description: 'Path relative to the fs root',
  } as const;
  return {
    manifest: {
      name: 'builtin-fs',
      version: '1.0.0',
      capabilities: ['fs.read', 'fs.write', 'fs.status'],
    },
    capabilities: [
      createCapability<{ path: string }, { path: string; size: number; content: string }>({
        name: 'fs.read',
        version: '1.0.0',
        description: 'Reads a UTF-8 text file under the fs root',
        risk: 'read',
        inputSchema: { path: pathField },
        outputSchema: {
          type: 'object',
          properties: {
            path: { type: 'string' },
            size: { type: 'number' },
            content: { type: 'string' },
          },
          required: ['path', 'size', 'content'],
        },
        prepare: (input) => prepare('read', rootPath(root, input.path)),
        execute: async ({ input, context }) => {
          const path = rootPath(root, input.path);
          const anchor = await anchorFor(context.effect, 'read', path);
          return { path: path.shown, ...(await readText(path, anchor)) };
        },
      }),
      createCapability<{ path: string; content: string }, { path: string; bytes: number }>({
        name: 'fs.write',
        version: '1.0.0',
        description: 'Writes a UTF-8 text file under the fs root, creating parent directories',
        risk: 'write',
        inputSchema: {
          path: pathField,
          content: { type: 'string', required: true, description: 'Text to write' },
        },
        outputSchema: {
          type: 'object',
          properties: { path: { type: 'string' }, bytes: { type: 'number' } },
          required: ['path', 'bytes'],
        },
        prepare: (input) => prepare('write', rootPath(root, input.path), input.content),
        execute: async ({ input, context }) => {
          const path = rootPath(root, input.path);
          const anchor = await anchorFor(context.effect, 'write', path, input.content);
          await writeText(path, input.content, anchor);
          return { path: path.shown, bytes: Buffer.byteLength(input.content) };
        },
      }),
      createCapability<unknown, { provider: string; ready: boolean; root: string }>({
        name: 'fs.status',
        version: '1.0.0',
        description: 'Reports whether the fs root is reachable',
        risk: 'read',
        outputSchema: {
          type: 'object',
          properties: {
            provider: { type: 'string' },
            ready: { type: 'boolean' },
            root: { type: 'string' },
          },
          required: ['provider', 'ready', 'root'],
        },
        execute: async () => {
          const ready = await stat(root).then(
            (info) => info.isDirectory(),
            () => false,
          );
          return { provider: 'fs', ready, root };
        },
      }),
    ],
  };
}
