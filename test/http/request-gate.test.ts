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
  createRequestGate,
  hostNameOf,
  isLoopbackAddress,
  isOpenRoute,
} from '../../src/http/request-gate.js';
import type { AuthRequest, AuthResult, Authenticator } from '../../src/http/auth/index.js';
import { createTokenAuthenticator } from '../../src/http/auth/index.js';
import type { ExecutionCaller } from '../../src/index.js';
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
    ['POST', '/mcp'],
    ['POST', '/%6dcp'],
    ['POST', 'http://127.0.0.1/mcp'],
    ['GET', '/mcp'],
    ['DELETE', '/%6Dcp'],
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
    ['POST', '/mcp/'],
    ['POST', '/MCP'],
    ['POST', '/health/../mcp'],
  ];

  it('answers 401 to every spelling without the token, and no handler runs', async () => {
    const { port } = await start({ token: 'sekret', legacyRoutes: true });
    const before = { ...ran };
    for (const [method, target] of [...routed, ...unrouted]) {
      const body = method === 'POST' ? '{"input":{}}' : '';
      for (const [auth, challenge] of [
        ['', 'Bearer'],
        ['\r\nAuthorization: sekret', 'Bearer'],
        ['\r\nAuthorization: Basic sekret', 'Bearer'],
        ['\r\nAuthorization: Bearer wrong', 'Bearer error="invalid_token"'],
        ['\r\nAuthorization: Bearer ', 'Bearer error="invalid_token"'],
        ['\r\nAuthorization: Bearer sekret2', 'Bearer error="invalid_token"'],
      ]) {
        const answer = await raw(
          port,
          `${method} ${target} HTTP/1.1\r\n${HOST}${auth}${json}`,
          body,
        );
        assert.equal(answer.status, 401, `${method} ${target}${auth}: ${answer.body}`);
        assert.deepEqual(JSON.parse(answer.body), { error: 'Unauthorized' });
        const header = /^www-authenticate: (.*)$/im.exec(answer.headers)?.[1];
        assert.equal(header, challenge, `${method} ${target}${auth}`);
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
    const mcpCall = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'gate_write', arguments: {} },
    });
    const overMcp = await raw(
      port,
      `POST /%6dcp HTTP/1.1\r\n${HOST}${auth}${json}\r\nAccept: application/json, text/event-stream`,
      mcpCall,
    );
    assert.equal(overMcp.status, 200, overMcp.body);
    assert.equal(ran.write, writes + 2, 'the same write, over /mcp');
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
    // The console's static files hold no data (SECURITY.md).
    for (const route of ['/', '/console/app.js', '/console/app.css'])
      for (const method of ['GET', 'HEAD']) assert.equal(isOpenRoute(method, route), true, route);
    for (const [method, route] of [
      ['POST', '/health'],
      ['POST', '/'],
      ['GET', '/console/'],
      ['GET', '/console/:file'],
      ['GET', '/*'],
      ['GET', undefined],
      ['GET', '/api/jobs'],
      ['GET', '/health/'],
      ['OPTIONS', '/health'],
    ] as const)
      assert.equal(isOpenRoute(method, route), false, `${method} ${String(route)}`);
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

describe('the gate runs the authentication mode (issue 17 item 1)', () => {
  /** An authenticator that answers `result` and remembers what it was asked. */
  function answering(result: (request: AuthRequest) => AuthResult | Promise<AuthResult>) {
    const asked: AuthRequest[] = [];
    const authenticator: Authenticator = {
      authenticate: async (request) => (asked.push(request), result(request)),
    };
    return { asked, authenticator };
  }

  async function startWith(authenticator: Authenticator, extra: HttpServerOptions = {}) {
    const callers: (ExecutionCaller | undefined)[] = [];
    const runtime = new OperatorRuntime({
      store: 'memory',
      authorizer: {
        authorize: ({ caller }) => (callers.push(caller), { decision: 'allow' }),
      },
    });
    const app = createHttpServer(runtime, { authenticator, ...extra });
    await app.listen({ host: '127.0.0.1', port: 0 });
    servers.push({ app, runtime });
    return { port: (app.server.address() as { port: number }).port, runtime, callers };
  }

  it('makes the authenticated caller the caller of every governed route', async () => {
    const caller = Object.freeze({ id: 'ci-bot', scopes: Object.freeze(['plans:write']) });
    const { asked, authenticator } = answering(() => ({ ok: true, caller }));
    const { port, callers } = await startWith(authenticator);
    const execute = await raw(
      port,
      `POST /api/capabilities/gate.write/execute?x=1 HTTP/1.1\r\n${HOST}\r\nX-Agent: a${json}`,
      '{}',
    );
    assert.equal(execute.status, 200, execute.body);
    const plan = await raw(
      port,
      `POST /api/plans HTTP/1.1\r\n${HOST}${json}`,
      JSON.stringify({ version: '1.0', steps: [{ id: 's', capability: 'gate.write' }] }),
    );
    assert.equal(plan.status, 201, plan.body);
    assert.deepEqual(callers, [caller, caller]);
    const [first] = asked;
    assert.equal(first?.method, 'POST');
    assert.equal(first?.url, '/api/capabilities/gate.write/execute?x=1');
    assert.equal(first?.headers['x-agent'], 'a');
    assert.equal(first?.ip, '127.0.0.1');
  });

  it('answers 401 with the challenge of the failure, and hands its log line to onAuthLog', async () => {
    const { authenticator } = answering(() => ({
      ok: false,
      challenge: 'Bearer',
      log: 'caller resolver threw: boom',
    }));
    const lines: string[] = [];
    const writes = ran.write;
    const { port, runtime, callers } = await startWith(authenticator, {
      onAuthLog: (line) => lines.push(line),
    });
    const answer = await raw(
      port,
      `POST /api/capabilities/gate.write/execute HTTP/1.1\r\n${HOST}${json}`,
      '{}',
    );
    assert.equal(answer.status, 401);
    assert.match(answer.headers, /^www-authenticate: Bearer$/im);
    assert.deepEqual(JSON.parse(answer.body), { error: 'Unauthorized' });
    assert.deepEqual(lines, ['caller resolver threw: boom']);
    assert.deepEqual(callers, []);
    assert.equal(ran.write, writes);
    assert.deepEqual(await runtime.listJobs(), [], 'no job');
  });

  it('decides before the body is read: a refused request never waits for its body', async () => {
    const { authenticator } = answering(() => ({
      ok: false,
      challenge: 'Bearer error="invalid_token"',
    }));
    const { port } = await startWith(authenticator);
    // Announces a body over the limit and never sends it: 401 at once (not 413, not a wait).
    const answer = await raw(
      port,
      `POST /api/plans HTTP/1.1\r\n${HOST}\r\nAuthorization: Bearer x${json}\r\nContent-Length: 5000000`,
    );
    assert.equal(answer.status, 401);
    assert.match(answer.headers, /^www-authenticate: Bearer error="invalid_token"$/im);
  });

  it('checks Host before asking the authenticator, and never asks on GET /health', async () => {
    const { asked, authenticator } = answering(() => ({ ok: false, challenge: 'Bearer' }));
    const { port } = await startWith(authenticator);
    assert.equal((await raw(port, 'GET /api/jobs HTTP/1.1\r\nHost: evil.example')).status, 421);
    assert.equal((await raw(port, `GET /health HTTP/1.1\r\n${HOST}`)).status, 200);
    assert.equal((await raw(port, `HEAD /health HTTP/1.1\r\n${HOST}`)).status, 200);
    assert.equal(asked.length, 0);
    assert.equal((await raw(port, `GET /api/jobs?a=1&a=2 HTTP/1.1\r\n${HOST}`)).status, 401);
  });

  it('answers 500 and runs nothing when the authenticator rejects (fails closed)', async () => {
    const { authenticator } = answering(() => Promise.reject(new Error('bug in a mode')));
    const errors: string[] = [];
    const writes = ran.write;
    const { port, runtime } = await startWith(authenticator, {
      onInternalError: (error, route) => errors.push(`${route}: ${(error as Error).message}`),
    });
    const answer = await raw(
      port,
      `POST /api/capabilities/gate.write/execute HTTP/1.1\r\n${HOST}${json}`,
      '{}',
    );
    assert.equal(answer.status, 500);
    assert.deepEqual(JSON.parse(answer.body), { error: 'Internal error' });
    assert.deepEqual(errors, ['POST /api/capabilities/:name/execute: bug in a mode']);
    assert.equal(ran.write, writes);
    assert.deepEqual(await runtime.listJobs(), []);
  });

  it('answers at once, without a promise, when no authenticator has to run', () => {
    const request = {
      method: 'GET',
      route: '/api/jobs',
      url: '/api/jobs',
      headers: { host: '127.0.0.1' },
      ip: '127.0.0.1',
      query: {},
    };
    const open = createRequestGate({ loopbackBound: () => true });
    assert.equal(open(request), undefined);
    const guarded = createRequestGate({
      loopbackBound: () => true,
      authenticator: { authenticate: async () => ({ ok: false, challenge: 'Bearer' }) },
    });
    assert.equal(guarded({ ...request, route: '/health' }), undefined);
    assert.ok(guarded(request) instanceof Promise);
    assert.deepEqual(guarded({ ...request, headers: { host: 'evil.example' } }), {
      status: 421,
      error: 'Host not allowed',
    });
  });

  it('without a mode, asks the operator token only about a request with an Authorization header', async () => {
    const request = {
      method: 'GET',
      route: '/api/jobs',
      url: '/api/jobs',
      headers: { host: '127.0.0.1' } as Record<string, string>,
      ip: '127.0.0.1',
      query: {},
    };
    const gate = createRequestGate({
      loopbackBound: () => true,
      operator: createTokenAuthenticator('op-token', 'operator'),
    });
    assert.equal(gate(request), undefined, 'no header: on at once, without a caller (`http`)');
    const as = (authorization: string) =>
      gate({ ...request, headers: { ...request.headers, authorization } });
    assert.deepEqual(await as('Bearer op-token'), {
      caller: { id: 'operator', scopes: ['warrant:audit'] },
    });
    for (const authorization of ['Bearer other', 'Bearer', 'Basic b3A6dG9rZW4='])
      assert.equal(((await as(authorization)) as { status?: number }).status, 401, authorization);
    assert.equal(
      gate({
        ...request,
        route: '/health',
        headers: { ...request.headers, authorization: 'Bearer x' },
      }),
      undefined,
    );
    assert.throws(
      () => createHttpServer(new OperatorRuntime(), { token: 't', operatorToken: 'o' }),
      /an operator token only without a mode/,
    );
  });

  it('refuses Warrant-On-Behalf-Of (401) unless the mode read it: no mode, the operator token, a plain success (issue 50)', async () => {
    const request = {
      method: 'POST',
      route: '/api/plans',
      url: '/api/plans',
      headers: { host: '127.0.0.1', 'warrant-on-behalf-of': 'ada' } as Record<string, string>,
      ip: '127.0.0.1',
      query: {},
    };
    const refused = {
      status: 401,
      error: 'Unauthorized',
      headers: { 'www-authenticate': 'Bearer error="invalid_token"' },
    };
    const open = createRequestGate({ loopbackBound: () => true });
    assert.deepEqual(await open(request), refused, 'no mode');
    assert.equal(open({ ...request, route: '/health', url: '/health', method: 'GET' }), undefined);
    const operator = createRequestGate({
      loopbackBound: () => true,
      operator: createTokenAuthenticator('op-token', 'operator'),
    });
    assert.deepEqual(await operator(request), refused, 'no mode, no token');
    assert.deepEqual(
      await operator({
        ...request,
        headers: { ...request.headers, authorization: 'Bearer op-token' },
      }),
      refused,
      'the operator token does not act for anyone',
    );
    const caller = { id: 'ada', actor: { id: 'assistant' } };
    const plain = createRequestGate({
      loopbackBound: () => true,
      authenticator: { authenticate: async () => ({ ok: true, caller }) },
    });
    assert.deepEqual(await plain(request), refused, 'a success that did not read it');
    assert.deepEqual(await plain({ ...request, headers: { host: '127.0.0.1' } }), { caller });
    const delegated = createRequestGate({
      loopbackBound: () => true,
      authenticator: { authenticate: async () => ({ ok: true, caller, delegated: true }) },
    });
    assert.deepEqual(await delegated(request), { caller });
  });

  it('refuses a token together with an authenticator', () => {
    assert.throws(
      () =>
        createHttpServer(new OperatorRuntime(), {
          token: 't',
          authenticator: { authenticate: async () => ({ ok: false, challenge: 'Bearer' }) },
        }),
      /an authenticator or a token, not both/,
    );
  });
});
