// `warrant serve` with each authentication mode, end to end through the built program
// (issue 17 item 1): the authenticated caller is what the authorizer sees on the HTTP routes and
// on /mcp; missing, malformed, expired, wrongly signed or wrongly addressed credentials answer
// 401 with the challenge and create no job; a malformed callers file, key or JWKS stops the
// program at start with exit 2 and one line. Run `npm run build` first.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { createServer, type Server } from 'node:https';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/client';
import { SignJWT, exportJWK, exportPKCS8, exportSPKI, generateKeyPair } from 'jose';
import {
  selfSignedCertificate,
  signToken,
  tempDir,
  unsecuredToken,
} from '../http/auth/fixtures/helpers.js';
import {
  call,
  jobsOf,
  mcpClient,
  serveChild,
  serveFails,
  stderrMatches,
  textOf,
  type Served,
} from '../support/serve-child.js';

const PROBE = resolve(import.meta.dirname, 'fixtures/caller-probe.mjs');
const RESOLVER = resolve(import.meta.dirname, 'fixtures/header-resolver.ts');
const ISSUER = 'https://id.example.test';
const AUDIENCE = 'warrant-api';
const SECRET = 'an HS256 secret of thirty-two bytes or more!';
const dir = tempDir();
after(() => dir.remove());

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const echo = { input: { message: 'hi' } };

/** The caller the probe authorizer was given, read back from its denial of system.echo. */
async function callerOverHttp(
  address: string,
  credentials: { token?: string; headers?: Record<string, string> },
): Promise<unknown> {
  const answer = await call(address, 'POST', '/api/capabilities/system.echo/execute', {
    ...credentials,
    body: echo,
  });
  assert.equal(answer.status, 403, JSON.stringify(answer.json));
  return JSON.parse(String(answer.json.error).replace(/^caller /, ''));
}

/** The same over /mcp with a real SDK client. */
async function callerOverMcp(
  address: string,
  token?: string,
  headers: Record<string, string> = {},
): Promise<unknown> {
  const client = await mcpClient(address, token, headers);
  const { tools } = await client.listTools();
  assert.ok(tools.some((tool) => tool.name === 'system_echo'));
  const result = (await client.callTool({
    name: 'system_echo',
    arguments: echo.input,
  })) as CallToolResult;
  assert.equal(result.isError, true);
  return JSON.parse(textOf(result).replace(/^caller /, ''));
}

/** Every request is refused with 401 and `challenge`, on a governed route and on /mcp. */
async function assertRefused(
  address: string,
  credentials: { authorization?: string; headers?: Record<string, string> },
  challenge: string,
  label: string,
): Promise<void> {
  for (const [method, path, body] of [
    ['POST', '/api/capabilities/system.echo/execute', echo],
    ['POST', '/api/plans', { version: '1.0', steps: [{ id: 'a', capability: 'system.echo' }] }],
    ['GET', '/api/jobs', undefined],
    ['POST', '/mcp', { jsonrpc: '2.0', id: 1, method: 'tools/list' }],
  ] as const) {
    const answer = await call(address, method, path, { ...credentials, body });
    assert.equal(answer.status, 401, `${label}: ${method} ${path}`);
    assert.equal(answer.challenge, challenge, `${label}: ${method} ${path}`);
    assert.deepEqual(answer.json, { error: 'Unauthorized' });
  }
  await assert.rejects(
    mcpClient(address, undefined, {
      ...credentials.headers,
      ...(credentials.authorization !== undefined && { authorization: credentials.authorization }),
    }),
    `${label}: the MCP client is refused`,
  );
}

/** Exit 2 with exactly one line on stderr matching `pattern`. */
async function assertStartRefused(
  args: string[],
  pattern: RegExp,
  env: Record<string, string> = {},
): Promise<void> {
  const { code, stderr } = await serveFails(args, env);
  assert.equal(code, 2, stderr);
  const lines = stderr.trimEnd().split('\n');
  assert.equal(lines.length, 1, stderr);
  assert.match(lines[0] as string, /^warrant serve: /);
  assert.match(lines[0] as string, pattern);
  assert.doesNotMatch(stderr, /\n\s+at /);
}

async function withServer(served: Served, body: (address: string) => Promise<void>) {
  try {
    await body(await served.listening);
  } finally {
    await served.stop();
  }
}

describe('warrant serve --token (and WARRANT_TOKEN)', () => {
  it('runs every route as { id: "token" }; anything else is 401 and no job', async () => {
    const served = serveChild(['--builtins', '--token', 'tok-123', '--authorizer', PROBE]);
    await withServer(served, async (address) => {
      assert.match(served.stderr(), /bearer token required/);
      await assertRefused(address, {}, 'Bearer', 'no header');
      await assertRefused(address, { authorization: 'Basic dG9rLTEyMw==' }, 'Bearer', 'Basic');
      await assertRefused(
        address,
        { authorization: 'Bearer tok-1234' },
        'Bearer error="invalid_token"',
        'wrong token',
      );
      await assertRefused(
        address,
        { authorization: 'Bearer' },
        'Bearer error="invalid_token"',
        'no token',
      );
      assert.deepEqual(await jobsOf(address, { token: 'tok-123' }), [], 'no job');
      assert.deepEqual(await callerOverHttp(address, { token: 'tok-123' }), {
        id: 'token',
        scopes: ['warrant:audit'],
      });
      assert.deepEqual(await callerOverMcp(address, 'tok-123'), {
        id: 'token',
        scopes: ['warrant:audit'],
      });
      assert.equal((await jobsOf(address, { token: 'tok-123' })).length, 2);
    });
  });
});

describe('warrant serve --callers', () => {
  const entries = {
    callers: [
      {
        tokenSha256: sha256('ci-secret'),
        caller: { id: 'ci-bot', scopes: ['plans:write'], metadata: { team: 'build' } },
      },
      { tokenSha256: sha256('intern-secret').toUpperCase(), caller: { id: 'intern' } },
    ],
  };

  it('runs each token as its caller, refuses unknown tokens, and never logs them', async () => {
    const file = dir.file('callers.json', JSON.stringify(entries), 0o600);
    const served = serveChild(['--builtins', '--callers', file, '--authorizer', PROBE]);
    await withServer(served, async (address) => {
      assert.match(served.stderr(), /2 callers from /);
      assert.doesNotMatch(served.stderr(), /warning/i);
      await assertRefused(address, {}, 'Bearer', 'no header');
      for (const token of ['ci-secret2', 'ci-secreT', sha256('ci-secret'), 'x'.repeat(5000)])
        await assertRefused(
          address,
          { authorization: `Bearer ${token}` },
          'Bearer error="invalid_token"',
          token.slice(0, 20),
        );
      assert.deepEqual(await jobsOf(address, { token: 'ci-secret' }), [], 'no job');
      const ciBot = { id: 'ci-bot', scopes: ['plans:write'], metadata: { team: 'build' } };
      assert.deepEqual(await callerOverHttp(address, { token: 'ci-secret' }), ciBot);
      assert.deepEqual(await callerOverHttp(address, { token: 'intern-secret' }), {
        id: 'intern',
      });
      assert.deepEqual(await callerOverMcp(address, 'ci-secret'), ciBot);
      assert.deepEqual(await callerOverMcp(address, 'intern-secret'), { id: 'intern' });
      assert.doesNotMatch(served.stderr(), /secret|Bearer|authentication refused/);
    });
  });

  it('warns at start when group or others can read the file', async () => {
    const file = dir.file('open-callers.json', JSON.stringify(entries), 0o644);
    const served = serveChild(['--builtins', '--callers', file]);
    await withServer(served, async () => {
      assert.match(served.stderr(), /warning: .*open-callers\.json.*chmod 600/);
    });
  });

  it('serves a non-loopback address with --callers (any mode counts as authentication)', async () => {
    const file = dir.file('lan-callers.json', JSON.stringify(entries), 0o600);
    const served = serveChild(['--builtins', '--host', '0.0.0.0', '--callers', file]);
    await withServer(served, async (address) => {
      const port = new URL(address).port;
      assert.equal((await call(`http://127.0.0.1:${port}`, 'GET', '/api/jobs')).status, 401);
      assert.doesNotMatch(served.stderr(), /no authentication/);
    });
  });

  it('stops at start with exit 2 and one line on a malformed callers file', async () => {
    const cases: [string, RegExp][] = [
      ['{"callers": [', /--callers .*JSON/i],
      ['{"callers": []}', /--callers/],
      [JSON.stringify({ callers: [{ tokenSha256: 'abc', caller: { id: 'x' } }] }), /tokenSha256/],
      [JSON.stringify({ callers: [{ tokenSha256: sha256('a'), caller: {} }] }), /id/],
      [
        JSON.stringify({
          callers: [{ tokenSha256: sha256('a'), token: 'a', caller: { id: 'x' } }],
        }),
        /token/,
      ],
    ];
    for (const [index, [text, pattern]] of cases.entries())
      await assertStartRefused(['--callers', dir.file(`bad-${index}.json`, text)], pattern);
    await assertStartRefused(['--callers', join(dir.path, 'missing.json')], /--callers/);
    await assertStartRefused(['--callers', dir.path], /--callers/);
  });
});

describe('warrant serve with JWT', () => {
  const claims = { sub: 'agent-7', scope: 'plans:write jobs:read' };
  const expected = {
    id: 'agent-7',
    scopes: ['plans:write', 'jobs:read'],
    metadata: { iss: ISSUER },
  };
  const jwtFlags = ['--jwt-issuer', ISSUER, '--jwt-audience', AUDIENCE, '--authorizer', PROBE];

  it('--jwt-secret (HS256): the token`s subject and scopes are the caller; bad tokens are 401', async () => {
    const key = new TextEncoder().encode(SECRET);
    const now = Math.floor(Date.now() / 1000);
    const good = await signToken({ alg: 'HS256', key, claims });
    const served = serveChild(['--builtins', '--jwt-secret', SECRET, ...jwtFlags]);
    await withServer(served, async (address) => {
      assert.match(served.stderr(), /JWT \(issuer https:\/\/id\.example\.test/);
      const invalid = 'Bearer error="invalid_token"';
      const bad: [string, string][] = [
        ['expired', await signToken({ alg: 'HS256', key, claims: { ...claims, exp: now - 120 } })],
        [
          'not yet valid',
          await signToken({ alg: 'HS256', key, claims: { ...claims, nbf: now + 600 } }),
        ],
        [
          'other issuer',
          await signToken({ alg: 'HS256', key, claims: { ...claims, iss: 'https://evil.test' } }),
        ],
        [
          'other audience',
          await signToken({ alg: 'HS256', key, claims: { ...claims, aud: 'other' } }),
        ],
        ['no exp', await signToken({ alg: 'HS256', key, claims, omit: ['exp'] })],
        [
          'other secret',
          await signToken({ alg: 'HS256', key: new TextEncoder().encode(`${SECRET}x`), claims }),
        ],
        ['HS512', await signToken({ alg: 'HS512', key, claims })],
        [
          'alg none',
          unsecuredToken({ iss: ISSUER, aud: AUDIENCE, sub: 'agent-7', exp: now + 600 }),
        ],
        ['garbage', 'not.a.jwt'],
      ];
      for (const [label, token] of bad)
        await assertRefused(address, { authorization: `Bearer ${token}` }, invalid, label);
      assert.deepEqual(await jobsOf(address, { token: good }), [], 'no job');
      assert.deepEqual(await callerOverHttp(address, { token: good }), expected);
      assert.deepEqual(await callerOverMcp(address, good), expected);
    });
  });

  it('WARRANT_JWT_SECRET stands in for --jwt-secret; a short secret stops the start', async () => {
    const key = new TextEncoder().encode(SECRET);
    const served = serveChild(['--builtins', ...jwtFlags], { WARRANT_JWT_SECRET: SECRET });
    await withServer(served, async (address) => {
      const token = await signToken({ alg: 'HS256', key, claims });
      assert.deepEqual(await callerOverHttp(address, { token }), expected);
    });
    await assertStartRefused(['--jwt-secret', 'too short', ...jwtFlags], /32 bytes/);
    await assertStartRefused(['--jwt-secret', SECRET, '--jwt-audience', AUDIENCE], /--jwt-issuer/);
    await assertStartRefused(['--jwt-secret', SECRET, '--jwt-issuer', ISSUER], /--jwt-audience/);
  });

  it('--jwt-public-key (ES256 PEM): refuses algorithm confusion and tokens of another key', async () => {
    const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
    const other = await generateKeyPair('ES256');
    const pem = await exportSPKI(publicKey);
    const keyFile = dir.file('es256.pem', pem);
    const good = await signToken({ alg: 'ES256', key: privateKey, claims });
    const served = serveChild(['--builtins', '--jwt-public-key', keyFile, ...jwtFlags]);
    await withServer(served, async (address) => {
      const invalid = 'Bearer error="invalid_token"';
      // An HMAC keyed with the public key's own bytes: the classic confusion attack.
      const confused = await new SignJWT({ ...claims, iss: ISSUER, aud: AUDIENCE })
        .setProtectedHeader({ alg: 'HS256' })
        .setExpirationTime('1h')
        .sign(new TextEncoder().encode(pem));
      await assertRefused(address, { authorization: `Bearer ${confused}` }, invalid, 'confusion');
      const foreign = await signToken({ alg: 'ES256', key: other.privateKey, claims });
      await assertRefused(address, { authorization: `Bearer ${foreign}` }, invalid, 'other key');
      assert.deepEqual(await jobsOf(address, { token: good }), [], 'no job');
      assert.deepEqual(await callerOverHttp(address, { token: good }), expected);
      assert.deepEqual(await callerOverMcp(address, good), expected);
    });
    const privateFile = dir.file('private.pem', await exportPKCS8(privateKey));
    await assertStartRefused(['--jwt-public-key', privateFile, ...jwtFlags], /--jwt-public-key/);
    await assertStartRefused(
      ['--jwt-public-key', dir.file('junk.pem', 'not a key'), ...jwtFlags],
      /--jwt-public-key/,
    );
  });

  it('--jwks <file>: picks the key by kid; a malformed key set stops the start', async () => {
    const { publicKey, privateKey } = await generateKeyPair('RS256', { extractable: true });
    const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
    const file = dir.file('jwks.json', JSON.stringify({ keys: [jwk] }));
    const good = await signToken({ alg: 'RS256', key: privateKey, kid: 'k1', claims });
    const served = serveChild(['--builtins', '--jwks', file, ...jwtFlags]);
    await withServer(served, async (address) => {
      const unknownKid = await signToken({ alg: 'RS256', key: privateKey, kid: 'k2', claims });
      await assertRefused(
        address,
        { authorization: `Bearer ${unknownKid}` },
        'Bearer error="invalid_token"',
        'unknown kid',
      );
      assert.deepEqual(await jobsOf(address, { token: good }), [], 'no job');
      assert.deepEqual(await callerOverHttp(address, { token: good }), expected);
      assert.deepEqual(await callerOverMcp(address, good), expected);
    });
    await assertStartRefused(
      ['--jwks', dir.file('jwks-bad.json', '{"keys": 3}'), ...jwtFlags],
      /--jwks/,
    );
    await assertStartRefused(['--jwks', dir.file('jwks-empty.json', '{'), ...jwtFlags], /--jwks/);
    await assertStartRefused(['--jwks', 'http://127.0.0.1:1/jwks.json', ...jwtFlags], /https/);
  });

  describe('--jwks <https URL> served from 127.0.0.1', () => {
    let server: Server;
    let base = '';
    let certFile = '';
    let jwks = '';
    before(async () => {
      const tls = selfSignedCertificate(dir.path);
      certFile = tls.certFile;
      server = createServer({ key: tls.key, cert: tls.cert }, (req, res) => {
        if (req.url === '/jwks.json')
          res.writeHead(200, { 'content-type': 'application/json' }).end(jwks);
        else res.writeHead(404).end('not found');
      });
      await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
      base = `https://127.0.0.1:${(server.address() as { port: number }).port}`;
    });
    after(async () => {
      server.closeAllConnections();
      await new Promise((done) => server.close(done));
    });

    it('fetches the key set on first use; a key set it cannot fetch is 401 and one stderr line', async () => {
      const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
      jwks = JSON.stringify({
        keys: [{ ...(await exportJWK(publicKey)), kid: 'h1', alg: 'ES256' }],
      });
      const good = await signToken({ alg: 'ES256', key: privateKey, kid: 'h1', claims });
      const env = { NODE_EXTRA_CA_CERTS: certFile };
      const served = serveChild(['--builtins', '--jwks', `${base}/jwks.json`, ...jwtFlags], env);
      await withServer(served, async (address) => {
        assert.deepEqual(await callerOverHttp(address, { token: good }), expected);
        assert.deepEqual(await callerOverMcp(address, good), expected);
      });
      const missing = serveChild(['--builtins', '--jwks', `${base}/gone.json`, ...jwtFlags], env);
      await withServer(missing, async (address) => {
        await assertRefused(
          address,
          { authorization: `Bearer ${good}` },
          'Bearer error="invalid_token"',
          'JWKS not fetched',
        );
        const stderr = await stderrMatches(missing, /authentication refused: JWT keys from/);
        assert.doesNotMatch(stderr, /\n\s+at |eyJ/);
      });
    });
  });
});

describe('warrant serve --caller-resolver', () => {
  it('runs each request as the caller its module answers (a TypeScript file, through tsx)', async () => {
    const served = serveChild(['--builtins', '--caller-resolver', RESOLVER, '--authorizer', PROBE]);
    await withServer(served, async (address) => {
      assert.match(served.stderr(), /caller resolver .*header-resolver\.ts/);
      await assertRefused(address, {}, 'Bearer', 'undefined');
      assert.doesNotMatch(served.stderr(), /authentication refused/, 'undefined is not logged');
      const headers = { 'x-user': 'ada' };
      assert.deepEqual(await jobsOf(address, { headers }), [], 'no job');
      const expected = {
        id: 'ada',
        scopes: ['plans:write'],
        metadata: {
          method: 'POST',
          url: '/api/capabilities/system.echo/execute',
          ip: '127.0.0.1',
        },
      };
      assert.deepEqual(await callerOverHttp(address, { headers }), expected);
      assert.deepEqual(await callerOverMcp(address, undefined, headers), {
        ...expected,
        metadata: { ...expected.metadata, url: '/mcp' },
      });
    });
  });

  it('answers 401 with one stderr line when the resolver throws, hangs past 5 s or answers a malformed caller', async () => {
    const served = serveChild(['--builtins', '--caller-resolver', RESOLVER]);
    await withServer(served, async (address) => {
      // One request each, a quiet second apart: the log writes at most one line per second.
      const cases: [string, RegExp][] = [
        ['throw', /authentication refused: caller resolver threw: directory unavailable$/m],
        [
          'malformed',
          /authentication refused: caller resolver returned a malformed caller: caller\.id/,
        ],
        ['hang', /authentication refused: caller resolver gave no answer within 5000 ms/],
      ];
      for (const [user, line] of cases) {
        const answer = await call(address, 'POST', '/api/capabilities/system.echo/execute', {
          headers: { 'x-user': user },
          body: echo,
        });
        assert.equal(answer.status, 401, user);
        assert.equal(answer.challenge, 'Bearer', user);
        await stderrMatches(served, line);
        await new Promise((done) => setTimeout(done, 1100));
      }
      assert.doesNotMatch(served.stderr(), /secretStackFrame|\n\s+at /);
      assert.deepEqual(await jobsOf(address, { headers: { 'x-user': 'ada' } }), [], 'no job');
    });
  });

  it('loads the module through the program`s loader: a bad file stops the start with exit 2', async () => {
    await assertStartRefused(['--caller-resolver', dir.path], /--caller-resolver .*regular file/);
    await assertStartRefused(
      ['--caller-resolver', join(dir.path, 'missing.mjs')],
      /--caller-resolver .*not found/,
    );
    await assertStartRefused(
      ['--caller-resolver', dir.file('not-a-function.mjs', 'export default { id: "x" };')],
      /--caller-resolver .*must be a function/,
    );
    await assertStartRefused(
      ['--caller-resolver', dir.file('no-default.mjs', 'export const x = 1;')],
      /--caller-resolver .*no default export/,
    );
  });
});

describe('warrant serve: one mode at a time', () => {
  it('refuses two modes with exit 2 and one line, a variable counting as a mode', async () => {
    const callers = dir.file(
      'one.json',
      JSON.stringify({ callers: [{ tokenSha256: sha256('x'), caller: { id: 'x' } }] }),
    );
    await assertStartRefused(
      ['--token', 't', '--callers', callers],
      /choose one authentication mode/,
    );
    await assertStartRefused(['--callers', callers], /choose one authentication mode/, {
      WARRANT_TOKEN: 't',
    });
    await assertStartRefused(
      [
        '--caller-resolver',
        RESOLVER,
        '--jwt-secret',
        SECRET,
        '--jwt-issuer',
        ISSUER,
        '--jwt-audience',
        AUDIENCE,
      ],
      /choose one authentication mode/,
    );
    await assertStartRefused(['--token', ''], /--token must not be empty/);
  });

  it('documents every mode in --help', () => {
    const help = execFileSync(
      process.execPath,
      [resolve(import.meta.dirname, '../../dist/esm/cli/main.js'), 'serve', '--help'],
      { encoding: 'utf8', timeout: 30_000 },
    );
    for (const flag of [
      '--token',
      'WARRANT_TOKEN',
      '--callers',
      '--jwt-secret',
      'WARRANT_JWT_SECRET',
      '--jwt-public-key',
      '--jwks',
      '--jwt-issuer',
      '--jwt-audience',
      '--caller-resolver',
      '/mcp',
      'Bearer error="invalid_token"',
    ])
      assert.ok(help.includes(flag), flag);
  });
});
