// The files the program reads (plans, --module and --authorizer files): regular files of at most
// 10 MiB, checked on the opened descriptor. The executable is covered by test/cli/exit-codes.test.ts.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { MAX_INPUT_FILE_BYTES, checkInputFile, readInputFile } from '../../src/cli/input-file.js';
import { UsageError } from '../../src/cli/usage-error.js';

const dir = mkdtempSync(join(tmpdir(), 'warrant-input-file-'));

describe('input files', () => {
  it('reads a regular file of up to 10 MiB, the limit included', async () => {
    const small = join(dir, 'small.json');
    writeFileSync(small, '{"ok":true}');
    assert.equal((await readInputFile(small, 'plan file small.json')).toString(), '{"ok":true}');
    const limit = join(dir, 'limit.json');
    writeFileSync(limit, Buffer.alloc(MAX_INPUT_FILE_BYTES, 'x'));
    assert.equal(MAX_INPUT_FILE_BYTES, 10 * 1024 * 1024);
    assert.equal((await readInputFile(limit, 'plan')).length, MAX_INPUT_FILE_BYTES);
    await checkInputFile(limit, 'module');
  });

  it('refuses what is not a regular file of at most 10 MiB, with one line naming the file', async () => {
    const fifo = join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    const directory = join(dir, 'directory');
    mkdirSync(directory);
    const large = join(dir, 'large.json');
    writeFileSync(large, Buffer.alloc(MAX_INPUT_FILE_BYTES + 1, 'x'));
    const cases: [string, string][] = [
      ['/dev/zero', 'label: not a regular file (a character device)'],
      [fifo, 'label: not a regular file (a FIFO)'],
      [directory, 'label: not a regular file (a directory)'],
      [large, 'label: larger than 10 MiB'],
      [join(dir, 'missing.json'), 'label: file not found'],
      [join(large, 'below-a-file'), 'label: file not found'],
    ];
    for (const [path, message] of cases) {
      for (const check of [readInputFile, checkInputFile]) {
        await assert.rejects(check(path, 'label'), (error: unknown) => {
          assert.ok(error instanceof UsageError, path);
          assert.equal(error.message, message, path);
          return true;
        });
      }
    }
  });
});
