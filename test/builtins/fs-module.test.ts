import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { createFsModule, type FsModuleOptions } from '../../src/builtins/fs-module.js';
import type { Capability } from '../../src/index.js';
import { testContext } from '../support/execution-context.js';

const context = testContext();

function setup(lookup?: FsModuleOptions['lookup']) {
  const base = mkdtempSync(join(tmpdir(), 'warrant-fs-'));
  const root = join(base, 'root');
  mkdirSync(join(root, 'sub'), { recursive: true });
  mkdirSync(join(base, 'outside'));
  writeFileSync(join(root, 'note.txt'), 'inside');
  writeFileSync(join(root, 'sub', 'data.txt'), 'inside data');
  writeFileSync(join(base, 'secret.txt'), 'outside');
  writeFileSync(join(base, 'outside', 'data.txt'), 'outside data');
  symlinkSync(join(base, 'secret.txt'), join(root, 'escape.txt'));
  symlinkSync(base, join(root, 'escape-dir'));
  symlinkSync(join(root, 'note.txt'), join(root, 'alias.txt'));
  symlinkSync(join(root, 'sub'), join(root, 'sub-alias'));
  const module = createFsModule({ root, maxBytes: 64, ...(lookup ? { lookup } : {}) });
  const byName = (name: string) =>
    module.capabilities.find((capability) => capability.name === name) as Capability;
  return {
    base,
    root,
    read: byName('fs.read'),
    write: byName('fs.write'),
    status: byName('fs.status'),
  };
}

const run = (capability: Capability, input: Record<string, unknown>) =>
  Promise.resolve(capability.execute(input, context));

describe('builtin fs module', () => {
  it('declares fs.read (read), fs.write (write) and fs.status in its manifest', () => {
    const module = createFsModule({ root: '.' });
    assert.deepEqual(module.manifest.capabilities, ['fs.read', 'fs.write', 'fs.status']);
    assert.deepEqual(
      module.capabilities.map((capability) => capability.risk),
      ['read', 'write', 'read'],
    );
  });

  it('refuses an unknown lookup', () => {
    assert.throws(
      () => createFsModule({ root: '.', lookup: 'other' as FsModuleOptions['lookup'] }),
      /lookup must be 'proc' or 'path'/,
    );
  });

  it('reports its status', async () => {
    const { status, root } = setup();
    assert.deepEqual(await status.execute({}, context), { provider: 'fs', ready: true, root });
  });

  // Both ways of reaching a directory's entries (docs/decisions.md "Built-in capabilities")
  // keep the same rules.
  for (const lookup of ['proc', 'path'] as const) {
    describe(`through '${lookup}' lookups`, () => {
      it('reads files under the root, the path shown relative to it', async () => {
        const { read, root } = setup(lookup);
        assert.deepEqual(await run(read, { path: 'note.txt' }), {
          path: 'note.txt',
          size: 6,
          content: 'inside',
        });
        assert.deepEqual(await run(read, { path: join(root, 'sub', '.', 'data.txt') }), {
          path: 'sub/data.txt',
          size: 11,
          content: 'inside data',
        });
      });

      it('refuses traversal, absolute paths outside the root and NUL characters', async () => {
        const { read, base } = setup(lookup);
        for (const path of ['../secret.txt', 'sub/../../secret.txt', join(base, 'secret.txt')]) {
          await assert.rejects(run(read, { path }), /outside the fs root/, path);
        }
        await assert.rejects(run(read, { path: 'note.txt\0' }), /NUL character/);
      });

      it('follows no symbolic link, whether it leaves the root or stays inside', async () => {
        const { read, write, root, base } = setup(lookup);
        for (const path of [
          'escape.txt',
          'escape-dir/secret.txt',
          'alias.txt',
          'sub-alias/data.txt',
        ]) {
          await assert.rejects(
            run(read, { path }),
            /^Error: "[^"]+" is a symbolic link; fs capabilities follow none$/,
            path,
          );
          await assert.rejects(
            run(write, { path, content: 'pwned' }),
            /is a symbolic link; fs capabilities follow none/,
            path,
          );
        }
        await assert.rejects(
          run(write, { path: 'escape-dir/made/x.txt', content: 'x' }),
          /"escape-dir" is a symbolic link/,
        );
        assert.equal(existsSync(join(base, 'made')), false);
        assert.equal(readFileSync(join(base, 'secret.txt'), 'utf8'), 'outside');
        assert.equal(readFileSync(join(root, 'note.txt'), 'utf8'), 'inside');
        assert.equal(readFileSync(join(root, 'sub', 'data.txt'), 'utf8'), 'inside data');
      });

      it('refuses a file with more than one hard link, for reading and writing', async () => {
        const { read, write, root, base } = setup(lookup);
        writeFileSync(join(base, 'linked.txt'), 'outside linked');
        linkSync(join(base, 'linked.txt'), join(root, 'hard.txt'));
        await assert.rejects(
          run(read, { path: 'hard.txt' }),
          /^Error: "hard.txt" has 2 hard links; fs capabilities refuse files with more than one$/,
        );
        await assert.rejects(
          run(write, { path: 'hard.txt', content: 'pwned' }),
          /"hard.txt" has 2 hard links/,
        );
        assert.equal(readFileSync(join(base, 'linked.txt'), 'utf8'), 'outside linked');
      });

      it('refuses files over the size cap, directories and special files', async () => {
        const { read, write, root } = setup(lookup);
        writeFileSync(join(root, 'big.txt'), 'x'.repeat(65));
        await assert.rejects(run(read, { path: 'big.txt' }), /"big.txt" is larger than 64 bytes/);
        await assert.rejects(run(read, { path: 'sub' }), /"sub" is not a regular file/);
        await assert.rejects(run(read, { path: '.' }), /"\." is not a regular file/);
        await assert.rejects(run(write, { path: 'sub', content: 'x' }), /"sub" is not a regular/);
        await assert.rejects(run(write, { path: '' }), /"\." is not a regular file/);
        // A FIFO would block an open for reading or writing; it is refused, not waited on.
        execFileSync('mkfifo', [join(root, 'fifo')]);
        await assert.rejects(run(read, { path: 'fifo' }), /"fifo" is not a regular file/);
        await assert.rejects(run(write, { path: 'fifo', content: 'x' }), /"fifo"/);
      });

      it('writes under the root, creating parents, replacing what was there', async () => {
        const { write, root, base } = setup(lookup);
        assert.deepEqual(await run(write, { path: 'new/dir/out.txt', content: 'hé' }), {
          path: 'new/dir/out.txt',
          bytes: 3,
        });
        assert.equal(readFileSync(join(root, 'new/dir/out.txt'), 'utf8'), 'hé');
        await run(write, { path: 'note.txt', content: 'new' });
        assert.equal(readFileSync(join(root, 'note.txt'), 'utf8'), 'new');
        await assert.rejects(
          run(write, { path: '../made/x.txt', content: 'x' }),
          /outside the fs root/,
        );
        assert.equal(existsSync(join(base, 'made')), false);
      });

      it('shows paths relative to the root in every error, never the host path', async () => {
        const { read, write, root, base } = setup(lookup);
        const messages: string[] = [];
        const collect = (promise: Promise<unknown>) =>
          promise.then(
            () => assert.fail('expected a refusal'),
            (error: Error) => void messages.push(error.message),
          );
        await collect(run(read, { path: 'missing.txt' }));
        await collect(run(read, { path: join(root, 'sub', 'missing.txt') }));
        await collect(run(read, { path: 'note.txt/x' }));
        await collect(run(write, { path: 'note.txt/x', content: 'x' }));
        await collect(run(read, { path: `${'a'.repeat(300)}.txt` }));
        assert.deepEqual(messages, [
          '"missing.txt" does not exist',
          '"sub/missing.txt" does not exist',
          '"note.txt" is not a directory',
          '"note.txt" is not a directory',
          `Cannot open "${'a'.repeat(300)}.txt" (ENAMETOOLONG)`,
        ]);
        for (const message of messages) {
          assert.ok(!message.includes(base) && !message.includes('/proc/'), message);
        }
      });
    });
  }
});

/**
 * A directory swapped for a symbolic link between the checks and the open. The swap runs inside
 * the first `open`, `readFile` or `writeFile` of node:fs/promises that names the file itself, so
 * the race is hit on every run, whatever the implementation checks beforehand.
 */
describe('builtin fs module under a directory swap', () => {
  const fsPromises = createRequire(import.meta.url)('node:fs/promises') as Record<
    string,
    (...args: unknown[]) => unknown
  >;
  const originals = new Map<string, (...args: unknown[]) => unknown>();
  let swap: { file: string; run: () => void } | undefined;
  for (const name of ['open', 'readFile', 'writeFile']) {
    const original = fsPromises[name] as (...args: unknown[]) => unknown;
    originals.set(name, original);
    fsPromises[name] = (...args: unknown[]) => {
      const pending = swap;
      if (pending !== undefined && String(args[0]).endsWith(`/${pending.file}`)) {
        swap = undefined;
        pending.run();
      }
      return original(...args);
    };
  }
  syncBuiltinESMExports();
  after(() => {
    for (const [name, original] of originals) fsPromises[name] = original;
    syncBuiltinESMExports();
  });

  for (const lookup of ['proc', 'path'] as const) {
    describe(`through '${lookup}' lookups`, () => {
      it('writes nothing outside when the parent becomes a link to outside', async () => {
        const { write, root, base } = setup(lookup);
        swap = {
          file: 'out.txt',
          run: () => {
            renameSync(join(root, 'sub'), join(root, 'sub-moved'));
            symlinkSync(join(base, 'outside'), join(root, 'sub'));
          },
        };
        const outcome = run(write, { path: 'sub/out.txt', content: 'pwned' });
        if (lookup === 'proc') {
          // The write goes on in the directory that was opened, renamed but inside the root.
          await outcome;
          assert.equal(readFileSync(join(root, 'sub-moved', 'out.txt'), 'utf8'), 'pwned');
        } else {
          // By path the open went outside; the check on the descriptor refuses it.
          await assert.rejects(outcome, /"sub\/out.txt" left the fs root while it was opened/);
        }
        assert.equal(swap, undefined, 'the swap ran');
        assert.equal(existsSync(join(base, 'outside', 'out.txt')), false);
      });

      it('leaves nothing behind when the parent itself is moved out of the root', async () => {
        const { write, root, base } = setup(lookup);
        swap = {
          file: 'out.txt',
          run: () => {
            renameSync(join(root, 'sub'), join(base, 'moved'));
            symlinkSync(join(base, 'moved'), join(root, 'sub'));
          },
        };
        await assert.rejects(run(write, { path: 'sub/out.txt', content: 'pwned' }), /^Error: "sub/);
        assert.equal(swap, undefined, 'the swap ran');
        assert.equal(existsSync(join(base, 'moved', 'out.txt')), false);
      });

      it('reads nothing from outside when the parent becomes a link to outside', async () => {
        const { read, root, base } = setup(lookup);
        swap = {
          file: 'data.txt',
          run: () => {
            renameSync(join(root, 'sub'), join(root, 'sub-moved'));
            symlinkSync(join(base, 'outside'), join(root, 'sub'));
          },
        };
        const result = await run(read, { path: 'sub/data.txt' }).catch((error: Error) => error);
        assert.equal(swap, undefined, 'the swap ran');
        assert.notEqual((result as { content?: string }).content, 'outside data');
      });
    });
  }
});
