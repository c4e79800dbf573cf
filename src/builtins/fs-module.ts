/**
 * `fs.read` (read), `fs.write` (write) and `fs.status`, confined to one root directory. Paths are
 * resolved against the root and refused when they leave it, lexically (`..`, absolute paths) or
 * through a symbolic link (the real path of the target, or of its parent for a new file, must
 * stay under the real path of the root).
 */
import { mkdir, readFile, realpath, stat, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path';
import { createCapability, type CapabilityModule } from '../index.js';

export interface FsModuleOptions {
  /** The only directory the capabilities may touch. */
  readonly root: string;
  /** Largest file `fs.read` returns, in bytes. Default 1 MiB. */
  readonly maxBytes?: number;
}

function inside(root: string, target: string): boolean {
  const path = relative(root, target);
  return path === '' || (!path.startsWith(`..${sep}`) && path !== '..' && !isAbsolute(path));
}

/** The real path of `target`, or of its nearest existing ancestor joined with the rest. */
async function realPathOf(target: string): Promise<string> {
  let existing = target;
  for (;;) {
    try {
      return resolve(await realpath(existing), relative(existing, target));
    } catch (error) {
      const parent = dirname(existing);
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || parent === existing) throw error;
      existing = parent;
    }
  }
}

export function createFsModule(options: FsModuleOptions): CapabilityModule {
  const root = resolve(options.root);
  const maxBytes = options.maxBytes ?? 1024 * 1024;

  async function confine(path: string): Promise<string> {
    const target = resolve(root, path);
    if (!inside(root, target))
      throw new Error(`Path ${JSON.stringify(path)} is outside the fs root`);
    const real = await realPathOf(target);
    if (!inside(await realpath(root), real)) {
      throw new Error(`Path ${JSON.stringify(path)} leaves the fs root through a symbolic link`);
    }
    return real;
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
        execute: async ({ input }) => {
          const file = await confine(input.path);
          const info = await stat(file);
          if (!info.isFile()) throw new Error(`${JSON.stringify(input.path)} is not a file`);
          if (info.size > maxBytes)
            throw new Error(`${JSON.stringify(input.path)} is larger than ${maxBytes} bytes`);
          return { path: input.path, size: info.size, content: await readFile(file, 'utf8') };
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
        execute: async ({ input }) => {
          // Confined before anything is created, and again once the parents exist.
          await mkdir(dirname(await confine(input.path)), { recursive: true });
          await writeFile(await confine(input.path), input.content, 'utf8');
          return { path: input.path, bytes: Buffer.byteLength(input.content) };
        },
      }),
      createCapability<unknown, { provider: string; ready: boolean; root: string }>({
        name: 'fs.status',
        version: '1.0.0',
        description: 'Reports whether the fs root is reachable',
        risk: 'read',
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
