import assert from 'node:assert/strict';
import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  existsSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createFsModule } from '../../src/builtins/fs-module.js';
import type { Capability } from '../../src/index.js';
import { testContext } from '../support/execution-context.js';

const context = testContext();

function setup() {
  const base = mkdtempSync(join(tmpdir(), 'warrant-fs-'));
  const root = join(base, 'root');
  mkdirSync(join(root, 'sub'), { recursive: true });
  writeFileSync(join(root, 'note.txt'), 'inside');
  writeFileSync(join(base, 'secret.txt'), 'outside');
  symlinkSync(join(base, 'secret.txt'), join(root, 'escape.txt'));
  symlinkSync(base, join(root, 'escape-dir'));
  symlinkSync(join(root, 'note.txt'), join(root, 'alias.txt'));
  const module = createFsModule({ root, maxBytes: 64 });
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

describe('builtin fs module', () => {
  it('declares fs.read (read), fs.write (write) and fs.status in its manifest', () => {
    const module = createFsModule({ root: '.' });
    assert.deepEqual(module.manifest.capabilities, ['fs.read', 'fs.write', 'fs.status']);
    assert.deepEqual(
      module.capabilities.map((capability) => capability.risk),
      ['read', 'write', 'read'],
    );
  });

  it('reads files under the root, including through a symlink that stays inside', async () => {
    const { read } = setup();
    assert.deepEqual(await read.execute({ path: 'note.txt' }, context), {
      path: 'note.txt',
      size: 6,
      content: 'inside',
    });
    assert.equal(
      ((await read.execute({ path: 'alias.txt' }, context)) as { content: string }).content,
      'inside',
    );
  });

  it('refuses traversal, absolute paths and symlink escapes', async () => {
    const { read, base } = setup();
    for (const path of ['../secret.txt', 'sub/../../secret.txt', join(base, 'secret.txt')]) {
      await assert.rejects(
        Promise.resolve(read.execute({ path }, context)),
        /outside the fs root/,
        path,
      );
    }
    await assert.rejects(
      Promise.resolve(read.execute({ path: 'escape.txt' }, context)),
      /through a symbolic link/,
    );
    await assert.rejects(
      Promise.resolve(read.execute({ path: 'escape-dir/secret.txt' }, context)),
      /through a symbolic link/,
    );
  });

  it('refuses files over the size cap and directories', async () => {
    const { read, root } = setup();
    writeFileSync(join(root, 'big.txt'), 'x'.repeat(65));
    await assert.rejects(
      Promise.resolve(read.execute({ path: 'big.txt' }, context)),
      /larger than 64 bytes/,
    );
    await assert.rejects(Promise.resolve(read.execute({ path: 'sub' }, context)), /is not a file/);
  });

  it('writes under the root, creating parents, and never creates anything outside it', async () => {
    const { write, root, base } = setup();
    assert.deepEqual(await write.execute({ path: 'new/dir/out.txt', content: 'hé' }, context), {
      path: 'new/dir/out.txt',
      bytes: 3,
    });
    assert.equal(readFileSync(join(root, 'new/dir/out.txt'), 'utf8'), 'hé');
    await assert.rejects(
      Promise.resolve(write.execute({ path: '../made/x.txt', content: 'x' }, context)),
      /outside the fs root/,
    );
    assert.equal(existsSync(join(base, 'made')), false);
    await assert.rejects(
      Promise.resolve(write.execute({ path: 'escape-dir/made/x.txt', content: 'x' }, context)),
      /symbolic link/,
    );
    assert.equal(existsSync(join(base, 'made')), false);
    await assert.rejects(
      Promise.resolve(write.execute({ path: 'escape.txt', content: 'pwned' }, context)),
      /symbolic link/,
    );
    assert.equal(readFileSync(join(base, 'secret.txt'), 'utf8'), 'outside');
  });

  it('reports its status', async () => {
    const { status, root } = setup();
    assert.deepEqual(await status.execute({}, context), { provider: 'fs', ready: true, root });
  });
});
