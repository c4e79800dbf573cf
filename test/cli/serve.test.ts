// `warrant serve` as a real child process: it binds 127.0.0.1, serves, and stops gracefully;
// it refuses to serve a non-loopback address without a token, checks Host names, and logs
// store failures (issue 14).
import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import { Database } from '../../src/stores/sqlite/sqlite-driver.cjs';
import { spawnServe, stderrMatches, type Served } from '../support/serve-child.js';

const children: ChildProcessWithoutNullStreams[] = [];
after(() => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
});

describe('warrant serve', () => {
  it('listens on 127.0.0.1, requires the token from WARRANT_TOKEN, and exits 0 on SIGTERM after in-flight work', async () => {
    const child = spawn(
      process.execPath,
      [resolve('dist/esm/cli/main.js'), 'serve', '--port', '0', '--store', 'memory'],
      {
        env: { ...process.env, WARRANT_TOKEN: 'tok' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr.setEncoding('utf8');
    const address = await new Promise<string>((resolveAddress, reject) => {
      child.stderr.on('data', (chunk: string) => {
        stderr += chunk;
        const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(stderr);
        if (match) resolveAddress(match[1] as string);
      });
      child.once('exit', () => reject(new Error(`serve exited early: ${stderr}`)));
    });
    try {
      assert.match(stderr, /bearer token required/);
      assert.equal((await fetch(`${address}/api/capabilities`)).status, 401);
      const response = await fetch(`${address}/api/capabilities/system.echo/execute`, {
        method: 'POST',
        headers: { authorization: 'Bearer tok', 'content-type': 'application/json' },
        body: JSON.stringify({ input: { message: 'over http' } }),
      });
      assert.equal(response.status, 200);
      assert.equal(
        ((await response.json()) as { result: { message: string } }).result.message,
        'over http',
      );
    } finally {
      child.kill('SIGTERM');
    }
    const [code] = await once(child, 'exit');
    assert.equal(code, 0, stderr);
    assert.match(stderr, /SIGTERM, finishing in-flight requests/);
    assert.match(stderr, /stopped/);
  });
});

/** Starts `warrant serve <args>` (a memory store unless told otherwise). */
const serve = (args: string[], env: Record<string, string | undefined> = {}): Served =>
  spawnServe(['serve', ...args], env);

const stop = (served: Served): Promise<void> => served.stop();

/** One request over a raw socket, with the Host header as given. */
function getWithHost(address: string, path: string, host: string): Promise<number> {
  const { port } = new URL(address);
  return new Promise((resolveStatus, reject) => {
    const socket = connect(Number(port), '127.0.0.1');
    let answer = '';
    socket.setEncoding('utf8');
    socket.setTimeout(10_000, () => socket.destroy(new Error('no answer')));
    socket.on('data', (chunk: string) => (answer += chunk));
    socket.on('error', reject);
    socket.on('close', () => resolveStatus(Number(answer.slice(9, 12))));
    socket.write(`GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
  });
}

describe('warrant serve start-up is honest (issue 14 item 7)', () => {
  it('refuses a non-loopback address without a token: exit 2 and one line saying how to add one', async () => {
    for (const host of ['0.0.0.0', '::']) {
      const served = serve(['--host', host, '--port', '0', '--store', 'memory']);
      const code = await Promise.race([served.exited, served.listening.then(() => 'listening')]);
      if (code === 'listening') await stop(served);
      assert.equal(code, 2, served.stderr());
      const lines = served.stderr().trimEnd().split('\n');
      assert.equal(lines.length, 1, served.stderr());
      assert.match(
        lines[0] as string,
        /^warrant serve: .*--token <token>.*WARRANT_TOKEN.*--insecure-no-auth/,
      );
    }
  });

  it('prints the address it really bound (0.0.0.0 with a token), and serves', async () => {
    const served = serve(['--host', '0.0.0.0', '--port', '0', '--store', 'memory'], {
      WARRANT_TOKEN: 'tok',
    });
    try {
      const address = await served.listening;
      assert.match(address, /^http:\/\/0\.0\.0\.0:\d+$/);
      const port = new URL(address).port;
      const response = await fetch(`http://127.0.0.1:${port}/api/jobs`, {
        headers: { authorization: 'Bearer tok' },
      });
      assert.equal(response.status, 200);
    } finally {
      await stop(served);
    }
  });

  it('serves a non-loopback address without a token only with --insecure-no-auth, and says so', async () => {
    const served = serve([
      '--host',
      '0.0.0.0',
      '--port',
      '0',
      '--store',
      'memory',
      '--insecure-no-auth',
    ]);
    try {
      const address = await served.listening;
      assert.match(served.stderr(), /no authentication/i);
      const port = new URL(address).port;
      assert.equal((await fetch(`http://127.0.0.1:${port}/api/jobs`)).status, 200);
    } finally {
      await stop(served);
    }
  });

  it('documents the new flags in --help', async () => {
    const served = serve(['--help']);
    let stdout = '';
    served.child.stdout.setEncoding('utf8');
    served.child.stdout.on('data', (chunk: string) => (stdout += chunk));
    assert.equal(await served.exited, 0);
    for (const flag of ['--allowed-host', '--insecure-no-auth', 'limit'])
      assert.ok(stdout.includes(flag), flag);
  });
});

describe('warrant serve --allowed-host (issue 14 item 6)', () => {
  it('answers 421 to foreign Host names on loopback, except the names it is given', async () => {
    const served = serve([
      '--port',
      '0',
      '--store',
      'memory',
      '--allowed-host',
      'warrant.test,other.test',
      '--allowed-host',
      'THIRD.test',
    ]);
    try {
      const address = await served.listening;
      assert.equal(await getWithHost(address, '/health', 'evil.example'), 421);
      assert.equal(await getWithHost(address, '/api/jobs', 'evil.example:3333'), 421);
      for (const host of ['localhost:1', 'warrant.test', 'other.test:80', 'third.test'])
        assert.equal(await getWithHost(address, '/api/jobs', host), 200, host);
    } finally {
      await stop(served);
    }
  });

  it('refuses a malformed --allowed-host with exit 2', async () => {
    const served = serve(['--port', '0', '--store', 'memory', '--allowed-host', 'evil.example:80']);
    const code = await Promise.race([served.exited, served.listening.then(() => 'listening')]);
    if (code === 'listening') await stop(served);
    assert.equal(code, 2, served.stderr());
    assert.match(served.stderr(), /--allowed-host/);
  });
});

describe('warrant serve reports a broken store (issue 14 item 8)', () => {
  it('logs one line per failure on stderr, at most one per second with a count, no stack, no secret', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'warrant-serve-store-'));
    const file = join(directory, 'jobs.db');
    const served = serve(['--port', '0', '--store', `sqlite:${file}`], { WARRANT_TOKEN: 'tok' });
    try {
      const address = await served.listening;
      const get = () => fetch(`${address}/api/jobs`, { headers: { authorization: 'Bearer tok' } });
      assert.equal((await get()).status, 200, 'the store works first');
      // Damage the store under the running server, as a bad disk or another program would.
      const db = new Database(file);
      db.exec('DROP TABLE job_events; DROP TABLE job_steps; DROP TABLE jobs;');
      db.close();
      const answers = await Promise.all(Array.from({ length: 10 }, get));
      assert.deepEqual(
        answers.map((answer) => answer.status),
        Array.from({ length: 10 }, () => 500),
      );
      const stderr = await stderrMatches(served, /suppressed/);
      const lines = stderr.split('\n').filter((line) => /internal error|suppressed/.test(line));
      const logged = lines.filter((line) => !line.includes('suppressed')).length;
      const suppressed = lines
        .map((line) => Number(/(\d+) more/.exec(line)?.[1] ?? 0))
        .reduce((sum, count) => sum + count, 0);
      assert.equal(logged + suppressed, 10, stderr);
      assert.ok(logged < 10, 'rate-limited');
      assert.match(
        lines[0] as string,
        /^warrant serve: internal error on GET \/api\/jobs: .*no such table/,
      );
      assert.doesNotMatch(stderr, /\n\s+at |tok\b|Bearer/);
    } finally {
      await stop(served);
      rmSync(directory, { recursive: true, force: true });
    }
  });
});
