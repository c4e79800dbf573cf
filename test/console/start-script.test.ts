// `npm start` (scripts/start.mjs) ends with the command that opens the audit console on the job it
// just ran (docs/guide/http.md, "Audit console"): the printed `warrant serve` command, run as
// printed (on a free port), serves the console and knows the job of the printed address.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import { copyExamples } from '../support/examples-copy.js';

const cwd = mkdtempSync(join(tmpdir(), 'warrant-console-start-'));
const children: ReturnType<typeof spawn>[] = [];
after(() => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  rmSync(cwd, { recursive: true, force: true });
});

describe('npm start', () => {
  it('ends with the command that serves the console and the address of the job it ran', async () => {
    copyExamples(cwd);
    cpSync(resolve('scripts'), join(cwd, 'scripts'), { recursive: true });
    symlinkSync(resolve('dist'), join(cwd, 'dist'));
    symlinkSync(resolve('node_modules'), join(cwd, 'node_modules'));
    const start = spawnSync(process.execPath, ['scripts/start.mjs'], {
      cwd,
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.equal(start.status, 0, start.stderr);
    const lines = start.stdout.trimEnd().split('\n');
    const id = lines[0]?.trim() ?? '';
    const serve = lines
      .map((line) => line.trim())
      .find((line) => line.startsWith('npm run warrant -- serve'));
    assert.equal(serve, 'npm run warrant -- serve --fs-root examples/data --approvals');
    assert.equal(lines.at(-1)?.trim(), `http://127.0.0.1:3333/#/jobs/${id}`);
    assert.match(start.stdout, /console's address with a token for this run/);

    // The printed command, on a free port instead of 3333.
    const words = (serve ?? '').split(' ').slice(4);
    const child = spawn(process.execPath, ['dist/esm/cli/main.js', ...words, '--port', '0'], {
      cwd,
      env: { ...process.env, WARRANT_TOKEN: undefined },
    });
    children.push(child);
    let stderr = '';
    child.stderr.setEncoding('utf8');
    const address = await new Promise<string>((done, fail) => {
      const timer = setTimeout(() => fail(new Error(`no address within 30 s: ${stderr}`)), 30_000);
      child.stderr.on('data', (chunk: string) => {
        stderr += chunk;
        const match = /listening on (http:\/\/\S+)/.exec(stderr);
        if (match) {
          clearTimeout(timer);
          done(match[1] as string);
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        fail(new Error(`exited ${code}: ${stderr}`));
      });
    });
    const page = await fetch(`${address}/`, { signal: AbortSignal.timeout(20_000) });
    assert.equal(page.status, 200);
    assert.match(await page.text(), /<title>Warrant console<\/title>/);
    const job = await fetch(`${address}/api/jobs/${id}`, { signal: AbortSignal.timeout(20_000) });
    assert.equal(job.status, 200);
    assert.equal(((await job.json()) as { status: string }).status, 'awaiting_approval');
    const exited = new Promise((done) => child.once('exit', done));
    child.kill('SIGTERM');
    await exited;
  });
});
