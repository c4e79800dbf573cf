// Who reaches a handler of `warrant serve` (issue 14 items 1 and 6): the bearer token is decided
// on the route the router matched, whatever the spelling of the request target, and a server
// bound to loopback answers only requests whose Host names loopback (DNS rebinding). Requests
// go over raw sockets, so nothing normalises the target on the way.
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { createHttpServer, type HttpServerOptions } from '../../src/http/server.js';
import {
  bearerTokenMatches,
  hostNameOf,
  isLoopbackAddress,
  isOpenRoute,
} from '../../src/http/request-gate.js';
import { OperatorRuntime, createCapability } from '../../src/index.js';

// Every handler the tests could reach counts here: a write capability (allowed by the
// authorizer below), a provider status capability, and the caller resolver, which every
// governed route calls before it runs anything.
const ran = { write: 0, status: 0, resolved: 0 };
new OperatorRuntime().use({
  manifest: { name: 'gate-test', version: '1.0.0', capabilities: ['gate.write', 'gprov.status'] },
  capabilities: [
    createCapability({
      name: 'gate.write',
      version: '1.0.0',
      description: 'a write the test authorizer allows',
      risk: 'write',
      execute: () => (ran.write += 1),
    }),
    createCapability({
      name: 'gprov.status',
      version: '1.0.0',
      description: 'status',
      risk: 'read',
      execute: () => ((ran.status += 1), { ready: true }),
    }),
  ],
});

const servers: { app: FastifyInstance; runtime: OperatorRuntime }[] = [];
after(async () => {
  for (const { app, runtime } of servers) {
    await app.close();
    await runtime.close();
  }
});

async function start(options: HttpServerOptions = {}, host = '127.0.0.1') {
  const runtime = new OperatorRuntime({
    authorizer: { authorize: () => ({ decision: 'allow' }) },
  });
  const app = createHttpServer(runtime, {
    resolveCaller: () => ((ran.resolved += 1), { id: 'gate' }),
    ...options,
  });
  await app.listen({ host, port: 0 });
  servers.push({ app, runtime });
  return { port: (app.server.address() as { port: number }).port, runtime };
}

interface RawAnswer {
  status: number;
  headers: string;
  body: string;
}

/** Sends one request exactly as written and reads the answer until the server closes. */
function raw(port: number, head: string, body = ''): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    socket.setEncoding('utf8');
    socket.setTimeout(10_000, () => socket.destroy(new Error(`no answer to ${head}`)));
    socket.on('data', (chunk: string) => (answer += chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const [headers = '', rest = ''] = answer.split(/\r\n\r\n(.*)/s);
      resolve({ status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(headers)?.[1]), headers, body: rest });
    });
    const length = body === '' ? '' : `Content-Length: ${Buffer.byteLength(body)}\r\n`;
    socket.write(`${head}\r\nConnection: close\r\n${length}\r\n${body}`);
  });
}

const json = '\r\nContent-Type: application/json';
const HOST = 'Host: 127.0.0.1';

describe('the bearer token is decided on the matched route (issue 14 item 1)', () => {
  const execute = 'capabilities/gate.write/execute';
  // Spellings of routes that exist: each reaches a handler today without a token.
  const routed: [method: string, target: string][] = [
    ['POST', `/%61pi/${execute}`],
    ['POST', `/%61%70%69/${execute}`],
    ['POST', `/api/%63apabilities/gate.write/execute`],
    ['POST', `/api/capabilities/gate%2ewrite/execute`],
    ['POST', `/api/capabilities/gate%2Ewrite/%65xecute`],
    ['POST', `http://127.0.0.1/api/${execute}`],
    ['POST', `HTTP://127.0.0.1:1/api/${execute}`],
    ['POST', `http://127.0.0.1/%61pi/${execute}`],
    ['POST', `http://evil.example/api/${execute}`],
    ['POST', `/api/${execute}?next=/health`],
    ['POST', `/api/${execute}#/health`],
    ['POST', '/%61pi/plans'],
    ['GET', '/%61pi/jobs'],
    ['GET', '/api/%6aobs'],
    ['GET', '/api/%6Aobs'],
    ['GET', 'http://127.0.0.1/api/jobs'],
    ['GET', '/%61pi/capabilities'],
    ['GET', '/%61pi/capabilities/gate.write'],
    ['GET', '/%61pi/jobs/some-id'],
    ['GET', '/%61pi/gprov/status'],
    ['POST', '/%61pi/jobs/some-id/execute'],
  ];
  // Spellings the router does not route (404): they need the token too.
  const unrouted: [method: string, target: string][] = [
    ['POST', `/x/../api/${execute}`],
    ['POST', `/./api/${execute}`],
    ['POST', `//api/${execute}`],
    ['POST', `/api//${execute}`],
    ['POST', `/health/../api/${execute}`],
    ['POST', `/%2e/api/${execute}`],
    ['POST', `/%2561pi/${execute}`],
    ['POST', `/API/${execute}`],
    ['POST', `/api/${execute}/`],
    ['GET', '/health/../api/jobs'],
    ['GET', '/health%2f..%2fapi/jobs'],
    ['GET', '//api/jobs'],
    ['GET', '/./api/jobs'],
    ['GET', '/health/'],
    ['GET', '/Health'],
    ['POST', '/health'],
    ['GET', '/nothing-here'],
    ['GET', '*'],
  ];

  it('answers 401 to every spelling without the token, and no handler runs', async () => {
    const { port } = await start({ token: 'sekret', legacyRoutes: true });
    const before = { ...ran };
    for (const [method, target] of [...routed, ...unrouted]) {
      const body = method === 'POST' ? '{"input":{}}' : '';
      for (const auth of ['', '\r\nAuthorization: Bearer wrong', '\r\nAuthorization: sekret']) {
        const answer = await raw(
          port,
          `${method} ${target} HTTP/1.1\r\n${HOST}${auth}${json}`,
          body,
        );
        assert.equal(answer.status, 401, `${method} ${target}${auth}: ${answer.body}`);
        assert.deepEqual(JSON.parse(answer.body), { error: 'Unauthorized' });
        assert.match(answer.headers, /^www-authenticate: Bearer$/im);
      }
    }
    assert.deepEqual(ran, before, 'no handler ran, nothing was written');
  });

  it('routes the same spellings with the token, so the 401s above guarded real routes', async () => {
    const { port } = await start({ token: 'sekret' });
    const auth = '\r\nAuthorization: Bearer sekret';
    const writes = ran.write;
    const answer = await raw(
      port,
      `POST /%61pi/${execute} HTTP/1.1\r\n${HOST}${auth}${json}`,
      '{}',
    );
    assert.equal(answer.status, 200, answer.body);
    assert.equal(ran.write, writes + 1);
    for (const target of ['/%61pi/jobs', 'http://127.0.0.1/api/jobs', '/api/%6Aobs']) {
      assert.equal((await raw(port, `GET ${target} HTTP/1.1\r\n${HOST}${auth}`)).status, 200);
    }
    assert.equal((await raw(port, `GET //api/jobs HTTP/1.1\r\n${HOST}${auth}`)).status, 404);
  });

  it('leaves GET /health (and its HEAD) open, in every spelling the router routes to it', async () => {
    const { port } = await start({ token: 'sekret' });
    for (const [method, target] of [
      ['GET', '/health'],
      ['GET', '/health?x=1'],
      ['GET', '/%68ealth'],
      ['GET', 'http://127.0.0.1/health'],
      ['HEAD', '/health'],
    ]) {
      const answer = await raw(port, `${method} ${target} HTTP/1.1\r\n${HOST}`);
      assert.equal(answer.status, 200, `${method} ${target}`);
    }
  });

  it('decides open routes on the method and the matched route only', () => {
    assert.equal(isOpenRoute('GET', '/health'), true);
    assert.equal(isOpenRoute('HEAD', '/health'), true);
    for (const [method, route] of [
      ['POST', '/health'],
      ['GET', undefined],
      ['GET', '/api/jobs'],
      ['GET', '/health/'],
      ['OPTIONS', '/health'],
    ] as const)
      assert.equal(isOpenRoute(method, route), false, `${method} ${String(route)}`);
  });

  it('compares bearer tokens exactly', () => {
    assert.equal(bearerTokenMatches('Bearer sekret', 'sekret'), true);
    for (const header of [
      undefined,
      '',
      'sekret',
      'Bearer',
      'Bearer ',
      'bearer sekret',
      'Bearer sekre',
      'Bearer sekret ',
      'Bearer sekrets',
      'Basic sekret',
    ])
      assert.equal(bearerTokenMatches(header, 'sekret'), false, String(header));
  });
});

describe('Host checks against DNS rebinding (issue 14 item 6)', () => {
  const good = [
    'localhost',
    'localhost:3333',
    'LOCALHOST:1',
    'LocalHost',
    '127.0.0.1',
    '127.0.0.1:80',
    '[::1]',
    '[::1]:3333',
  ];
  const bad = [
    'evil.example',
    'evil.example:3333',
    '127.0.0.1.evil.example',
    'localhost.evil.example',
    'evil.localhost',
    'localhost.',
    '127.0.0.2',
    '0.0.0.0',
    '[::ffff:127.0.0.1]',
    '::1',
    'localhost:80@evil.example',
    'localhost:abc',
    'localhost evil.example',
    '',
  ];

  it('bound to 127.0.0.1: answers 421 on every route when Host is not a loopback name, and runs nothing', async () => {
    const { port } = await start({ legacyRoutes: true });
    const before = { ...ran };
    for (const host of bad) {
      for (const [method, target] of [
        ['GET', '/health'],
        ['GET', '/api/jobs'],
        ['GET', '/api/gprov/status'],
        ['POST', '/api/capabilities/gate.write/execute'],
        ['GET', '/nothing-here'],
      ]) {
        const body = method === 'POST' ? '{}' : '';
        const answer = await raw(
          port,
          `${method} ${target} HTTP/1.1\r\nHost: ${host}${json}`,
          body,
        );
        assert.equal(answer.status, 421, `${host} ${method} ${target}: ${answer.body}`);
        assert.deepEqual(JSON.parse(answer.body), { error: 'Host not allowed' });
      }
    }
    // HTTP/1.0 may omit Host altogether: refused as well.
    assert.equal((await raw(port, 'GET /health HTTP/1.0')).status, 421);
    assert.deepEqual(ran, before);
    for (const host of good) {
      const answer = await raw(port, `GET /api/jobs HTTP/1.1\r\nHost: ${host}`);
      assert.equal(answer.status, 200, `${host}: ${answer.body}`);
    }
  });

  it('checks Host before the token: a rebinding page learns nothing from a 401', async () => {
    const { port } = await start({ token: 'sekret' });
    const answer = await raw(port, 'GET /api/jobs HTTP/1.1\r\nHost: evil.example');
    assert.equal(answer.status, 421);
  });

  it('accepts the names of allowedHosts (any case, any port) in addition to the loopback names', async () => {
    const { port } = await start({ allowedHosts: ['warrant.test', 'other.test'] });
    for (const host of ['warrant.test', 'WARRANT.test:9', 'other.test:3333', 'localhost:1']) {
      assert.equal((await raw(port, `GET /health HTTP/1.1\r\nHost: ${host}`)).status, 200, host);
    }
    for (const host of ['evil.example', 'warrant.test.evil.example', 'test']) {
      assert.equal((await raw(port, `GET /health HTTP/1.1\r\nHost: ${host}`)).status, 421, host);
    }
  });

  it('does not check Host on a server bound to a non-loopback address', async () => {
    const { port } = await start({}, '0.0.0.0');
    const answer = await raw(port, 'GET /health HTTP/1.1\r\nHost: evil.example');
    assert.equal(answer.status, 200);
  });

  it('parses Host headers and recognises loopback addresses', () => {
    assert.equal(hostNameOf('LocalHost:3333'), 'localhost');
    assert.equal(hostNameOf('[::1]:80'), '[::1]');
    assert.equal(hostNameOf('[::1]'), '[::1]');
    for (const header of [undefined, '', 'a:b:c', 'localhost:abc', '[::1', 'a b', 'x@y'])
      assert.equal(hostNameOf(header), undefined, String(header));
    for (const address of ['127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1'])
      assert.equal(isLoopbackAddress(address), true, address);
    for (const address of ['0.0.0.0', '::', '10.0.0.1', '128.0.0.1', '::2', 'localhost', ''])
      assert.equal(isLoopbackAddress(address), false, address);
  });
});
