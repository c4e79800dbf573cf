import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { exportJWK, exportSPKI, generateKeyPair, type CryptoKey } from 'jose';
import {
  CHALLENGE_INVALID_TOKEN,
  CHALLENGE_NO_CREDENTIALS,
  isAuthOptionsError,
  type Authenticator,
  type JwtOptions,
} from '../../../src/http/auth/index.js';
import { createJwtAuthenticator } from '../../../src/http/auth/jwt.js';
import { effectiveScopes } from '../../../src/index.js';

type Claims = Record<string, unknown>;
import {
  AUDIENCE,
  ISSUER,
  assertCaller,
  assertRefused,
  bearer,
  now,
  request,
  signToken,
  tempDir,
  unsecuredToken,
  type TokenSpec,
} from './fixtures/helpers.js';

const SECRET = 'a-test-secret-of-at-least-32-bytes!!';
const secretKey = new TextEncoder().encode(SECRET);
const dir = tempDir();
after(() => dir.remove());

interface Pair {
  publicKey: CryptoKey;
  privateKey: CryptoKey;
  pem: string;
}
async function pair(alg: string, options: { modulusLength?: number } = {}): Promise<Pair> {
  const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true, ...options });
  return { publicKey, privateKey, pem: await exportSPKI(publicKey) };
}

async function accepted(auth: Authenticator, spec: TokenSpec): Promise<Record<string, unknown>> {
  return assertCaller(await auth.authenticate(request(bearer(await signToken(spec)))));
}
async function refused(auth: Authenticator, spec: TokenSpec | string): Promise<void> {
  const token = typeof spec === 'string' ? spec : await signToken(spec);
  assertRefused(await auth.authenticate(request(bearer(token))), CHALLENGE_INVALID_TOKEN);
}
async function refusedAtStart(options: Partial<JwtOptions>, message: RegExp): Promise<void> {
  await assert.rejects(
    createJwtAuthenticator({ issuer: ISSUER, audience: AUDIENCE, ...options }),
    (error: unknown) => {
      assert.ok(isAuthOptionsError(error), `not a coded error: ${String(error)}`);
      assert.match((error as Error).message, message);
      assert.ok(!(error as Error).message.includes('\n'));
      return true;
    },
  );
}

describe('JWT with --jwt-secret (HS256)', () => {
  let auth: Authenticator;
  before(async () => {
    auth = await createJwtAuthenticator({ secret: SECRET, issuer: ISSUER, audience: AUDIENCE });
  });
  const hs = (spec: Partial<TokenSpec> = {}): TokenSpec => ({
    alg: 'HS256',
    key: secretKey,
    ...spec,
  });

  it('accepts a valid token: caller { id: sub, scopes, metadata: the claims not verified nor mapped }, deeply frozen', async () => {
    const exp = now() + 600;
    const caller = await accepted(
      auth,
      hs({ claims: { scope: 'plans:read  plans:write', exp, client_id: 'cli' } }),
    );
    assert.deepEqual(caller, {
      id: 'alice',
      scopes: ['plans:read', 'plans:write'],
      metadata: { iss: ISSUER, client_id: 'cli' },
    });
    assert.ok(
      Object.isFrozen(caller) && Object.isFrozen(caller.scopes) && Object.isFrozen(caller.metadata),
    );
  });

  it('reads scopes from scp (array or string) and gives [] without either', async () => {
    assert.deepEqual((await accepted(auth, hs({ claims: { scp: ['a', 'b'] } }))).scopes, [
      'a',
      'b',
    ]);
    assert.deepEqual((await accepted(auth, hs({ claims: { scp: 'a b' } }))).scopes, ['a', 'b']);
    assert.deepEqual((await accepted(auth, hs())).scopes, []);
  });

  it('reads a tenant claim, a scope array, roles and a nested act claim as the actor chain (issue 50)', async () => {
    const caller = await accepted(
      auth,
      hs({
        claims: {
          sub: 'ada',
          tenant: 'acme',
          scope: ['mail:send', 'files:read'],
          roles: ['ops'],
          act: { sub: 'assistant', scope: 'mail:send', act: { sub: 'planner', client_id: 'p' } },
        },
      }),
    );
    assert.equal(caller.id, 'ada');
    assert.equal(caller.tenant, 'acme');
    assert.deepEqual(caller.scopes, ['mail:send', 'files:read']);
    assert.deepEqual(caller.roles, ['ops']);
    assert.deepEqual(caller.actor, {
      id: 'assistant',
      scopes: ['mail:send'],
      actor: { id: 'planner', metadata: { client_id: 'p' } },
    });
    assert.ok(Object.isFrozen((caller.actor as { actor: object }).actor));
    assert.deepEqual(effectiveScopes(caller), []);
    assert.equal('act' in (caller.metadata as object), false);
    assert.equal('tenant' in (caller.metadata as object), false);
  });

  it('refuses hostile act chains with a 401: five deep, a cycle, an actor of another tenant, an act without sub', async () => {
    let act: Record<string, unknown> | undefined;
    for (let depth = 5; depth >= 1; depth--)
      act = { sub: `agent-${depth}`, ...(act === undefined ? {} : { act }) };
    await refused(auth, hs({ claims: { act } }));
    await refused(auth, hs({ claims: { act: { sub: 'bot', act: { sub: 'alice' } } } }));
    await refused(auth, hs({ claims: { act: { sub: 'bot', act: { sub: 'bot' } } } }));
    await refused(auth, hs({ claims: { tenant: 'acme', act: { sub: 'bot', tenant: 'globex' } } }));
    await refused(auth, hs({ claims: { act: { scope: 'x' } } }));
    await refused(auth, hs({ claims: { act: 'bot' } }));
    await refused(auth, hs({ claims: { tenant: 7 } }));
    // Four deep is the most: accepted.
    let four: Record<string, unknown> | undefined;
    for (let depth = 4; depth >= 1; depth--)
      four = { sub: `agent-${depth}`, ...(four === undefined ? {} : { act: four }) };
    await accepted(auth, hs({ claims: { act: four } }));
  });

  it('reads the tenant and the scopes from the claims the options name', async () => {
    const named = await createJwtAuthenticator({
      secret: SECRET,
      issuer: ISSUER,
      audience: AUDIENCE,
      tenantClaim: 'org',
      scopesClaim: 'permissions',
    });
    const caller = await accepted(
      named,
      hs({
        claims: {
          org: 'acme',
          permissions: ['a', 'b'],
          tenant: 'ignored',
          scope: 'kept',
          act: { sub: 'bot', permissions: 'a', org: 'acme' },
        },
      }),
    );
    assert.equal(caller.tenant, 'acme');
    assert.deepEqual(caller.scopes, ['a', 'b']);
    assert.deepEqual(caller.actor, { id: 'bot', scopes: ['a'], tenant: 'acme' });
    assert.deepEqual(
      { tenant: (caller.metadata as Claims).tenant, scope: (caller.metadata as Claims).scope },
      { tenant: 'ignored', scope: 'kept' },
    );
    // No scp fallback once the scopes claim is named.
    assert.deepEqual((await accepted(named, hs({ claims: { scp: 'x' } }))).scopes, []);
    await refusedAtStart(
      { secret: SECRET, tenantClaim: '' },
      /--jwt-tenant-claim must not be empty/,
    );
    await refusedAtStart(
      { secret: SECRET, scopesClaim: 'act' },
      /--jwt-scopes-claim cannot be "act"/,
    );
    await refusedAtStart(
      { secret: SECRET, scopesClaim: 'x', tenantClaim: 'x' },
      /must name two claims/,
    );
  });

  it('accepts an audience array holding the audience, and exp/nbf within the 30 s tolerance', async () => {
    await accepted(auth, hs({ claims: { aud: ['other', AUDIENCE] } }));
    await accepted(auth, hs({ claims: { exp: now() - 10, nbf: now() + 10 } }));
  });

  it('answers no header and another scheme with a bare Bearer challenge', async () => {
    assertRefused(await auth.authenticate(request()), CHALLENGE_NO_CREDENTIALS);
    assertRefused(
      await auth.authenticate(request(`Basic ${await signToken(hs())}`)),
      CHALLENGE_NO_CREDENTIALS,
    );
  });

  it('refuses malformed tokens', async () => {
    for (const token of ['abc', 'a.b.c', 'a.b', `${await signToken(hs())}x`, '...'])
      await refused(auth, token);
    assertRefused(await auth.authenticate(request('Bearer')), CHALLENGE_INVALID_TOKEN);
  });

  it('refuses an expired token and one not yet valid (beyond 30 s)', async () => {
    await refused(auth, hs({ claims: { exp: now() - 60 } }));
    await refused(auth, hs({ claims: { nbf: now() + 60 } }));
  });

  it('refuses a wrong or missing issuer, a wrong or missing audience', async () => {
    await refused(auth, hs({ claims: { iss: 'https://evil.example' } }));
    await refused(auth, hs({ omit: ['iss'] }));
    await refused(auth, hs({ claims: { aud: 'another-api' } }));
    await refused(auth, hs({ omit: ['aud'] }));
  });

  it('refuses a token without exp, without a string sub, or with malformed scopes', async () => {
    await refused(auth, hs({ omit: ['exp'] }));
    await refused(auth, hs({ omit: ['sub'] }));
    await refused(auth, hs({ claims: { sub: 42 as unknown as string } }));
    await refused(auth, hs({ claims: { sub: '' } }));
    await refused(auth, hs({ claims: { scope: [1] as unknown as string } }));
    await refused(auth, hs({ claims: { scope: { a: 1 } as unknown as string } }));
    await refused(auth, hs({ claims: { scp: [1] } }));
  });

  it('refuses a wrong signature', async () => {
    await refused(auth, hs({ key: new TextEncoder().encode(`${SECRET}-but-another-one`) }));
  });

  it('refuses alg none and other algorithms', async () => {
    await refused(
      auth,
      unsecuredToken({ iss: ISSUER, aud: AUDIENCE, sub: 'alice', exp: now() + 60 }),
    );
    await refused(auth, hs({ alg: 'HS512' }));
    const es = await pair('ES256');
    await refused(auth, { alg: 'ES256', key: es.privateKey });
  });

  it('verifies a token once: the same token again gets the same frozen answer', async () => {
    const token = await signToken(hs({ claims: { sub: 'repeat' } }));
    const first = await auth.authenticate(request(bearer(token)));
    const second = await auth.authenticate(request(bearer(token)));
    assert.equal(assertCaller(first).id, 'repeat');
    assert.equal(second, first);
    assert.ok(Object.isFrozen(first));
    await refused(auth, `${token.slice(0, -2)}${token.endsWith('A') ? 'B' : 'A'}A`);
  });

  it('stops accepting a remembered token once it expires (30 s tolerance)', async (t) => {
    const exp = now() + 5;
    const token = await signToken(hs({ claims: { sub: 'short-lived', exp } }));
    assert.equal(assertCaller(await auth.authenticate(request(bearer(token)))).id, 'short-lived');
    t.mock.timers.enable({ apis: ['Date'], now: (exp + 29) * 1000 });
    assert.equal(assertCaller(await auth.authenticate(request(bearer(token)))).id, 'short-lived');
    t.mock.timers.setTime((exp + 30) * 1000);
    await refused(auth, token);
  });

  it('refuses a secret shorter than 32 bytes at start', () =>
    refusedAtStart({ secret: 'short' }, /--jwt-secret must be at least 32 bytes/));
});

describe('JWT with --jwt-public-key', () => {
  const keyTypes: [string, string, { modulusLength?: number }?][] = [
    ['RS256', 'RSA 2048'],
    ['ES256', 'EC P-256'],
    ['ES384', 'EC P-384'],
    ['EdDSA', 'Ed25519'],
  ];
  for (const [alg, name, options] of keyTypes) {
    it(`${name}: accepts ${alg}, refuses a wrong signature, alg none and an HS256 token keyed with the PEM`, async () => {
      const signer = await pair(alg, options);
      const other = await pair(alg, options);
      const auth = await createJwtAuthenticator({
        publicKeyFile: dir.file(`${alg}.pem`, signer.pem),
        issuer: ISSUER,
        audience: AUDIENCE,
      });
      assert.equal((await accepted(auth, { alg, key: signer.privateKey })).id, 'alice');
      await refused(auth, { alg, key: other.privateKey });
      await refused(
        auth,
        unsecuredToken({ iss: ISSUER, aud: AUDIENCE, sub: 'alice', exp: now() + 60 }),
      );
      // Algorithm confusion: the public key's bytes used as an HMAC secret.
      await refused(auth, { alg: 'HS256', key: new TextEncoder().encode(signer.pem) });
      await refused(auth, { alg: 'HS256', key: new TextEncoder().encode(signer.pem.trim()) });
    });
  }

  it('pins the algorithm to the key type: RS512 or PS256 with the same RSA key is refused', async () => {
    const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const pem = publicKey.export({ type: 'spki', format: 'pem' }) as string;
    const auth = await createJwtAuthenticator({
      publicKeyFile: dir.file('rsa.pem', pem),
      issuer: ISSUER,
      audience: AUDIENCE,
    });
    await accepted(auth, { alg: 'RS256', key: privateKey });
    await refused(auth, { alg: 'RS512', key: privateKey });
    await refused(auth, { alg: 'PS256', key: privateKey });
  });

  it('refuses a malformed key file at start with one coded line', async () => {
    await refusedAtStart(
      { publicKeyFile: dir.file('garbage.pem', 'not a key') },
      /--jwt-public-key .*garbage\.pem: not a PEM public key/,
    );
    await refusedAtStart(
      { publicKeyFile: join(dir.path, 'missing.pem') },
      /cannot open \(ENOENT\)/,
    );
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const privatePem = privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
    await refusedAtStart(
      { publicKeyFile: dir.file('private.pem', privatePem) },
      /holds a private key/,
    );
    const small = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({
      type: 'spki',
      format: 'pem',
    }) as string;
    await refusedAtStart(
      { publicKeyFile: dir.file('small.pem', small) },
      /RSA keys must have 2048 bits or more/,
    );
    const k1 = generateKeyPairSync('ec', { namedCurve: 'secp256k1' }).publicKey.export({
      type: 'spki',
      format: 'pem',
    }) as string;
    await refusedAtStart({ publicKeyFile: dir.file('k1.pem', k1) }, /EC curve secp256k1/);
    const x = generateKeyPairSync('x25519').publicKey.export({
      type: 'spki',
      format: 'pem',
    }) as string;
    await refusedAtStart(
      { publicKeyFile: dir.file('x25519.pem', x) },
      /unsupported key type x25519/,
    );
  });
});

describe('JWT with a --jwks file', () => {
  let es: Pair;
  let rsa: Pair;
  let auth: Authenticator;
  let jwksText: string;
  before(async () => {
    es = await pair('ES256');
    rsa = await pair('RS256');
    jwksText = JSON.stringify({
      keys: [
        { ...(await exportJWK(es.publicKey)), kid: 'ec-1', use: 'sig' },
        { ...(await exportJWK(rsa.publicKey)), kid: 'rsa-1', alg: 'RS256' },
      ],
    });
    auth = await createJwtAuthenticator({
      jwks: dir.file('jwks.json', jwksText),
      issuer: ISSUER,
      audience: AUDIENCE,
    });
  });

  it('accepts tokens signed by each key, chosen by kid', async () => {
    assert.equal(
      (await accepted(auth, { alg: 'ES256', key: es.privateKey, kid: 'ec-1' })).id,
      'alice',
    );
    assert.equal(
      (
        await accepted(auth, {
          alg: 'RS256',
          key: rsa.privateKey,
          kid: 'rsa-1',
          claims: { sub: 'bob' },
        })
      ).id,
      'bob',
    );
  });

  it('refuses an unknown kid, a key of the set under the wrong kid, and a foreign key', async () => {
    await refused(auth, { alg: 'ES256', key: es.privateKey, kid: 'ec-2' });
    await refused(auth, { alg: 'ES256', key: es.privateKey, kid: 'rsa-1' });
    const foreign = await pair('ES256');
    await refused(auth, { alg: 'ES256', key: foreign.privateKey, kid: 'ec-1' });
  });

  it('refuses alg none and HS256 keyed with the key set text (algorithm confusion)', async () => {
    await refused(
      auth,
      unsecuredToken({ iss: ISSUER, aud: AUDIENCE, sub: 'alice', exp: now() + 60 }),
    );
    for (const kid of ['ec-1', 'rsa-1'])
      await refused(auth, { alg: 'HS256', key: new TextEncoder().encode(jwksText), kid });
  });

  it('refuses expired tokens and wrong audiences here too', async () => {
    await refused(auth, {
      alg: 'ES256',
      key: es.privateKey,
      kid: 'ec-1',
      claims: { exp: now() - 60 },
    });
    await refused(auth, { alg: 'ES256', key: es.privateKey, kid: 'ec-1', claims: { aud: 'x' } });
  });

  it('refuses a malformed JWKS file at start with one coded line naming the key', async () => {
    const good = JSON.parse(jwksText).keys[0];
    const cases: [string, RegExp][] = [
      ['{', /not valid JSON/],
      ['[]', /must be a JSON Web Key Set/],
      ['{"keys":[]}', /must be a JSON Web Key Set/],
      ['{"keys":["x"]}', /keys\[0\] must be an object/],
      [
        JSON.stringify({ keys: [good, { kty: 'oct', k: 'c2VjcmV0' }] }),
        /keys\[1\]\.kty must be "RSA", "EC" or "OKP"/,
      ],
      [
        JSON.stringify({ keys: [{ ...good, d: 'AAAA' }] }),
        /keys\[0\] holds private key material \("d"\)/,
      ],
      [JSON.stringify({ keys: [{ ...good, x: 'AAAA' }] }), /keys\[0\] is not a valid public key/],
      [
        JSON.stringify({ keys: [{ ...good, alg: 'HS256' }] }),
        /keys\[0\]\.alg "HS256" is not supported/,
      ],
    ];
    for (const [text, message] of cases)
      await refusedAtStart({ jwks: dir.file('bad-jwks.json', text) }, message);
    await refusedAtStart(
      { jwks: join(dir.path, 'missing.json') },
      /--jwks .*missing\.json: cannot open \(ENOENT\)/,
    );
  });

  it('refuses an http:// (or other scheme) URL and more than one key source', async () => {
    await refusedAtStart(
      { jwks: 'http://127.0.0.1:1/jwks.json' },
      /only https:\/\/ URLs \(or a file\)/,
    );
    await refusedAtStart({ jwks: 'ftp://example.test/jwks.json' }, /only https:\/\//);
    await refusedAtStart(
      { secret: SECRET, jwks: 'https://127.0.0.1:1/jwks.json' },
      /exactly one of --jwt-secret/,
    );
  });

  it('requires an issuer and an audience', async () => {
    await refusedAtStart({ secret: SECRET, issuer: '' }, /needs --jwt-issuer/);
    await refusedAtStart({ secret: SECRET, audience: '' }, /needs --jwt-audience/);
  });
});
