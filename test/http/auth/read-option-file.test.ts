import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { isAuthOptionsError } from '../../../src/http/auth/authenticator.js';
import { checkOptionFile, readOptionFile } from '../../../src/http/auth/read-option-file.js';
import { tempDir } from './fixtures/helpers.js';

const dir = tempDir();
after(() => dir.remove());

async function refused(promise: Promise<unknown>, message: RegExp): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(isAuthOptionsError(error), `not a coded error: ${String(error)}`);
    assert.match(error.message, message);
    return true;
  });
}

describe('readOptionFile', () => {
  it('reads a regular file (also through a link) with its permission bits', async () => {
    const file = dir.file('ok.json', '{"a":1}', 0o640);
    assert.deepEqual(await readOptionFile(file, '--x ok.json', 100), {
      text: '{"a":1}',
      mode: 0o640,
    });
    const link = join(dir.path, 'link.json');
    symlinkSync(file, link);
    assert.equal((await readOptionFile(link, '--x link.json', 100)).text, '{"a":1}');
  });

  it('reads a file of exactly the limit, refuses one byte more', async () => {
    const file = dir.file('ten.txt', '0123456789');
    assert.equal((await readOptionFile(file, '--x', 10)).text, '0123456789');
    await refused(
      readOptionFile(file, '--x ten.txt', 9),
      /^--x ten\.txt: larger than 9 bytes \(10\)$/,
    );
  });

  it('refuses a missing file, a directory, a sparse huge file and bytes that are not UTF-8', async () => {
    await refused(
      readOptionFile(join(dir.path, 'nope'), '--x nope', 10),
      /^--x nope: cannot open \(ENOENT\)$/,
    );
    const folder = join(dir.path, 'folder');
    mkdirSync(folder);
    await refused(readOptionFile(folder, '--x folder', 10), /not a regular file/);
    const huge = dir.file('huge', '');
    truncateSync(huge, 2 ** 32);
    await refused(readOptionFile(huge, '--x huge', 1024), /larger than 1024 bytes/);
    const latin1 = join(dir.path, 'latin1');
    writeFileSync(latin1, Buffer.from([0x63, 0x61, 0x66, 0xe9]));
    await refused(readOptionFile(latin1, '--x latin1', 10), /not UTF-8 text/);
  });

  it('refuses a FIFO without blocking on it', async () => {
    const fifo = join(dir.path, 'fifo');
    execFileSync('mkfifo', [fifo], { timeout: 10_000 });
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error('blocked on the FIFO')), 5000);
    });
    try {
      await Promise.race([
        refused(readOptionFile(fifo, '--x fifo', 10), /not a regular file/),
        bound,
      ]);
    } finally {
      clearTimeout(timer);
    }
  });
});

describe('checkOptionFile', () => {
  it('checks without reading: regular file within the limit', async () => {
    await checkOptionFile(dir.file('m.mjs', 'export default 1;\n'), '--y m.mjs', 100);
    await refused(
      checkOptionFile(dir.file('n.mjs', 'x'.repeat(11)), '--y n.mjs', 10),
      /larger than 10 bytes/,
    );
    await refused(
      checkOptionFile(join(dir.path, 'gone.mjs'), '--y gone.mjs', 10),
      /cannot open \(ENOENT\)/,
    );
    await refused(checkOptionFile(dir.path, '--y dir', 10), /not a regular file/);
  });
});
