// The program's outputs (docs/guide/cli.md, "Terminal output"): a closed stdout (`warrant jobs show
// <id> | head -2`) ends the program quietly, with the command's own exit code and no stack trace;
// every write is escaped for the terminal.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { guardOutput, writeTo } from '../../src/cli/output.js';
import { createCapability, OperatorRuntime } from '../../src/index.js';
import { uniqueName } from '../support/runtime-fixtures.js';

const bin = resolve('dist/esm/cli/main.js');

/** Runs the program with stdout on a real pipe whose reader goes away after the first chunk. */
function closedEarly(
  args: string[],
): Promise<{ code: number | null; stderr: string; read: string }> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [bin, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      fail(new Error(`warrant ${args.join(' ')} did not end in 60 s`));
    }, 60_000);
    let read = '';
    let stderr = '';
    child.stdout.once('data', (chunk: Buffer) => {
      read = chunk.toString('utf8');
      child.stdout.destroy();
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', fail);
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ code, stderr, read });
    });
  });
}

describe('program outputs', () => {
  it('a closed stdout ends jobs show, jobs show --json and jobs --json quietly', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'warrant-epipe-'));
    const store = `sqlite:${join(cwd, 'jobs.db')}`;
    const name = uniqueName('epipe.big');
    const runtime = new OperatorRuntime({ store }).use({
      manifest: { name: uniqueName('epipe-module'), version: '1', capabilities: [name] },
      capabilities: [
        createCapability({
          name,
          version: '1',
          description: 'd',
          risk: 'read',
          execute: () => 'x'.repeat(4096),
        }),
      ],
    });
    // Far more than a pipe's buffer (64 KiB) in every output, so the writer meets the closed end.
    const steps = Array.from({ length: 300 }, (_, index) => ({
      id: `s${index}`,
      capability: name,
    }));
    const job = await runtime.executePlan({ version: '1.0', steps });
    await runtime.close();
    for (const args of [
      ['jobs', 'show', job.id],
      ['jobs', 'show', job.id, '--json'],
      ['jobs', '--json'],
    ]) {
      const { code, stderr, read } = await closedEarly([...args, '--store', store]);
      assert.ok(read.length > 0, 'the reader got the beginning');
      assert.equal(stderr, '', `warrant ${args.join(' ')} wrote to stderr`);
      assert.equal(code, 0, `warrant ${args.join(' ')}`);
    }
  });

  it('guardOutput swallows EPIPE and drops later writes; writeTo escapes controls', () => {
    const written: string[] = [];
    const stream = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        written.push(chunk.toString('utf8'));
        callback();
      },
    });
    const reported: string[] = [];
    const report = (line: string): void => {
      reported.push(line);
    };
    guardOutput(stream, report);
    writeTo(stream, 'a\x1b[2Jb\n');
    assert.deepEqual(written, ['a\\u001b[2Jb\n']);
    stream.emit('error', Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
    writeTo(stream, 'dropped\n');
    assert.deepEqual(written, ['a\\u001b[2Jb\n']);
    assert.deepEqual(reported, []);

    const other = new Writable({ write: (_chunk, _encoding, callback) => callback() });
    guardOutput(other, report);
    other.emit('error', Object.assign(new Error('disk full'), { code: 'ENOSPC' }));
    assert.deepEqual(reported as string[], ['ENOSPC']);
  });
});
