// `warrant serve` as a real child process: it binds 127.0.0.1, serves, and stops gracefully.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { resolve } from 'node:path';
import { describe, it } from 'node:test';

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
