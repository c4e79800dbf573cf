// The console's static files over plain HTTP (docs/guide/http.md, "Audit console", SECURITY.md):
// served without credentials, byte for byte the files of src/http/console/ whatever the store
// holds, with a strict Content-Security-Policy and nosniff; every API route and every other path
// still needs the token; the page has no inline script or style and the script never writes markup.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { CONSOLE_CSP } from '../../../src/http/console/routes.js';
import { createHttpServer, type HttpServerOptions } from '../../../src/http/server.js';
import { OperatorRuntime } from '../../../src/index.js';
import { register } from '../../support/runtime-fixtures.js';

const SOURCE = resolve(import.meta.dirname, '../../../src/http/console');
const FILES = [
  ['/', 'index.html', 'text/html; charset=utf-8'],
  ['/console/app.js', 'app.js', 'text/javascript; charset=utf-8'],
  ['/console/app.css', 'app.css', 'text/css; charset=utf-8'],
] as const;

const servers: { app: FastifyInstance; runtime: OperatorRuntime }[] = [];
after(async () => {
  for (const { app, runtime } of servers) {
    await app.close();
    await runtime.close();
  }
});

async function start(options: HttpServerOptions) {
  const runtime = new OperatorRuntime({ authorizer: { authorize: () => ({ decision: 'allow' }) } });
  const [echo] = register(runtime, { execute: ({ input }) => input }) as [string];
  const app = createHttpServer(runtime, options);
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  servers.push({ app, runtime });
  return { url, runtime, echo };
}

/** The status of a GET sent with node:http (fetch cannot send another Host or a `*` target). */
function statusOf(port: string, path: string, host = '127.0.0.1'): Promise<number | undefined> {
  return new Promise((done, fail) => {
    const sent = request(
      { host: '127.0.0.1', port, path, headers: { host }, timeout: 20_000 },
      (answer) => {
        answer.resume();
        done(answer.statusCode);
      },
    );
    sent.on('error', fail);
    sent.on('timeout', () => sent.destroy(new Error('no answer within 20 s')));
    sent.end();
  });
}

const get = (url: string, init: RequestInit = {}) =>
  fetch(url, { ...init, signal: AbortSignal.timeout(20_000) });

describe('the console routes', () => {
  it('serve the three files without credentials, with the CSP and nosniff, and no job data', async () => {
    const { url, runtime, echo } = await start({ token: 'console-sekret' });
    const job = await runtime.executePlan({
      version: '1.0',
      goal: 'goal-that-must-not-leak',
      steps: [{ id: 's', capability: echo, input: { secret: 'result-that-must-not-leak' } }],
    });
    assert.equal(job.status, 'completed');
    for (const [path, file, type] of FILES) {
      for (const method of ['GET', 'HEAD']) {
        const answer = await get(url + path, { method });
        assert.equal(answer.status, 200, `${method} ${path}`);
        assert.equal(answer.headers.get('content-type'), type, path);
        assert.equal(answer.headers.get('content-security-policy'), CONSOLE_CSP, path);
        assert.equal(answer.headers.get('x-content-type-options'), 'nosniff', path);
        assert.equal(answer.headers.get('referrer-policy'), 'no-referrer', path);
        const body = await answer.text();
        if (method === 'HEAD') continue;
        assert.equal(body, readFileSync(resolve(SOURCE, file), 'utf8'), `${path} is the file`);
        for (const recorded of [job.id, 'goal-that-must-not-leak', 'result-that-must-not-leak'])
          assert.equal(body.includes(recorded), false, `${path} holds ${recorded}`);
      }
    }
    assert.match(CONSOLE_CSP, /default-src 'none'/);
    assert.match(CONSOLE_CSP, /script-src 'self';/);
    assert.match(CONSOLE_CSP, /frame-ancestors 'none'/);
  });

  it('leave every API route and every other path behind the token', async () => {
    const { url } = await start({ token: 'console-sekret' });
    for (const path of [
      '/api/jobs',
      '/api/approvals',
      '/api/capabilities',
      '/console/',
      '/console/other.js',
      '/console/app.js/',
      '/console/../api/jobs',
      '/index.html',
      '/console',
    ]) {
      const answer = await get(url + path);
      assert.equal(answer.status, 401, path);
    }
    const posted = await get(`${url}/`, { method: 'POST' });
    assert.equal(posted.status, 401, 'only GET and HEAD are open');
    const withToken = await get(`${url}/api/jobs`, {
      headers: { authorization: 'Bearer console-sekret' },
    });
    assert.equal(withToken.status, 200);
  });

  it('answer 421 to a foreign Host like every route, and are absent with console: false', async () => {
    const { url } = await start({});
    const { port } = new URL(url);
    assert.equal(await statusOf(port, '/', 'evil.example'), 421);
    assert.equal(await statusOf(port, '*'), 200, 'no mode: every route is open');
    const tokened = new URL((await start({ token: 'console-sekret' })).url).port;
    assert.equal(await statusOf(tokened, '*'), 401, 'the asterisk form is no open route');
    const without = await start({ console: false, token: 'console-sekret' });
    assert.equal((await get(`${without.url}/`)).status, 401);
    const authed = await get(`${without.url}/`, {
      headers: { authorization: 'Bearer console-sekret' },
    });
    assert.equal(authed.status, 404);
  });
});

describe('the console files', () => {
  const html = readFileSync(resolve(SOURCE, 'index.html'), 'utf8');
  const script = readFileSync(resolve(SOURCE, 'app.js'), 'utf8');

  it('hold no inline script, style or handler, and load nothing from another origin', () => {
    for (const tag of html.match(/<script\b[^>]*>/g) ?? [])
      assert.match(tag, /\ssrc="console\/app\.js"/, tag);
    assert.doesNotMatch(html, /<script\b[^>]*>[^<]+<\/script>/);
    assert.doesNotMatch(html, /<style\b|\sstyle=|\son[a-z]+=/i);
    assert.doesNotMatch(html + script, /https?:\/\//);
  });

  it('never write markup: no innerHTML, outerHTML, insertAdjacentHTML, document.write or eval', () => {
    assert.doesNotMatch(
      script,
      /innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function|srcdoc/,
    );
    assert.match(script, /credentials: 'omit'/, 'no cookie is ever sent');
    assert.match(script, /sessionStorage/);
    assert.doesNotMatch(script, /localStorage|document\.cookie/);
  });
});
