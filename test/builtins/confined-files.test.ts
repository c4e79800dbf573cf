import assert from 'node:assert/strict';
import {
  linkSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import {
  FsRefusal,
  openUnderRoot,
  prepareUnderRoot,
  rootPath,
  type DirectoryLookup,
} from '../../src/builtins/confined-files.js';

function tree() {
  const base = mkdtempSync(join(tmpdir(), 'warrant-confined-'));
  const root = join(base, 'root');
  mkdirSync(join(root, 'dir'), { recursive: true });
  writeFileSync(join(base, 'outside.txt'), 'outside');
  writeFileSync(join(root, 'dir', 'file.txt'), 'inside');
  linkSync(join(base, 'outside.txt'), join(root, 'hard.txt'));
  symlinkSync(join(base, 'outside.txt'), join(root, 'soft.txt'));
  symlinkSync(base, join(root, 'up'));
  return { base, root };
}

describe('rootPath()', () => {
  it('resolves lexically under the root and shows the path relative to it', () => {
    assert.deepEqual(rootPath('/r', 'a/./b/../c.txt'), { parts: ['a', 'c.txt'], shown: 'a/c.txt' });
    assert.deepEqual(rootPath('/r', '.'), { parts: [], shown: '.' });
  });

  it('refuses paths that leave the root and NUL characters', () => {
    for (const path of ['../x', '/etc/passwd', 'a/../../x', 'a\0b']) {
      assert.throws(() => rootPath('/r', path), FsRefusal, path);
    }
  });
});

for (const lookup of ['proc', 'path'] satisfies DirectoryLookup[]) {
  describe(`openUnderRoot() with ${lookup} lookups`, () => {
    it('opens a regular file for reading and creates one (with its parents) for writing', async () => {
      const { root } = tree();
      const read = await openUnderRoot(lookup, root, rootPath(root, 'dir/file.txt'), false);
      assert.equal(await read.readFile('utf8'), 'inside');
      await read.close();
      const written = await openUnderRoot(lookup, root, rootPath(root, 'new/deep/x.txt'), true);
      await written.writeFile('made');
      await written.close();
      assert.equal(readFileSync(join(root, 'new', 'deep', 'x.txt'), 'utf8'), 'made');
    });

    it('refuses a hard link, a symbolic link and a linked directory, for read and write', async () => {
      const { base, root } = tree();
      for (const path of ['hard.txt', 'soft.txt', 'up/outside.txt']) {
        for (const forWriting of [false, true]) {
          await assert.rejects(
            openUnderRoot(lookup, root, rootPath(root, path), forWriting),
            (error: unknown) =>
              error instanceof FsRefusal && !error.message.includes(base) && error.message !== '',
            `${path} ${forWriting ? 'write' : 'read'}`,
          );
        }
      }
      assert.equal(readFileSync(join(base, 'outside.txt'), 'utf8'), 'outside');
    });

    it('refuses the root itself and a directory as a file', async () => {
      const { root } = tree();
      await assert.rejects(openUnderRoot(lookup, root, rootPath(root, '.'), false), FsRefusal);
      await assert.rejects(openUnderRoot(lookup, root, rootPath(root, 'dir'), false), FsRefusal);
    });
  });
}

// docs/api.md, "Prepared effects": the deepest existing directory is the anchor the open finds
// again, or refuses to go on from another one.
describe('prepareUnderRoot()', () => {
  for (const lookup of ['proc', 'path'] as DirectoryLookup[]) {
    it(`prepares the real path and the anchor, and an open from another directory is refused (${lookup})`, async () => {
      const { root } = tree();
      const prepared = await prepareUnderRoot(lookup, root, rootPath(root, 'dir/new/x.txt'));
      const info = statSync(join(root, 'dir'), { bigint: true });
      assert.deepEqual(prepared, {
        real: join(realpathSync(root), 'dir', 'new', 'x.txt'),
        anchor: { depth: 1, dev: String(info.dev), ino: String(info.ino) },
      });
      await assert.rejects(
        prepareUnderRoot(lookup, root, rootPath(root, 'up/x.txt')),
        /"up" is a symbolic link/,
      );
      const wrong = { ...prepared.anchor, ino: '1' };
      await assert.rejects(
        openUnderRoot(lookup, root, rootPath(root, 'dir/new/x.txt'), true, wrong),
        /^Error: "dir" is no longer the directory it was when the step was prepared$/,
      );
      const handle = await openUnderRoot(
        lookup,
        root,
        rootPath(root, 'dir/new/x.txt'),
        true,
        prepared.anchor,
      );
      await handle.close();
    });
  }
});
