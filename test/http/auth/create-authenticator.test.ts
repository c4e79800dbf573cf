import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, describe, it } from 'node:test';
import {
  createAuthenticator,
  isAuthOptionsError,
  type AuthOptions,
} from '../../../src/http/auth/index.js';
import {
  AUDIENCE,
  ISSUER,
  assertCaller,
  bearer,
  request,
  signToken,
  tempDir,
} from './fixtures/helpers.js';

const SECRET = 'a-test-secret-of-at-least-32-bytes!!';
const dir = tempDir();
after(() => dir.remove());

async function refused(options: AuthOptions, message: RegExp): Promise<void> {
  await assert.rejects(createAuthenticator(options), (error: unknown) => {
    assert.ok(isAuthOptionsError(error), `not a coded error: ${String(error)}`);
    assert.equal((error as { code?: unknown }).code, 'AUTH_OPTIONS_INVALID');
    assert.match((error as Error).message, message);
    assert.ok(!(error as Error).message.includes('\n'));
    return true;
  });
}

describe('createAuthenticator', () => {
  it('answers undefined when no mode is configured', async () => {
    assert.equal(await createAuthenticator({}), undefined);
  });

  it('builds each mode', async () => {
    const token = await createAuthenticator({ token: 't0ken' });
    assert.equal(token?.mode, 'token');
    assert.equal(
      assertCaller(await token.authenticator.authenticate(request(bearer('t0ken')))).id,
      'token',
    );

    const digest = createHash('sha256').update('alice-token').digest('hex');
    const file = dir.file(
      'callers.json',
      JSON.stringify({ callers: [{ tokenSha256: digest, caller: { id: 'alice' } }] }),
      0o644,
    );
    const callers = await createAuthenticator({ callers: file });
    assert.equal(callers?.mode, 'callers');
    assert.equal(callers.summary, `1 caller from ${file}`);
    assert.equal(callers.warnings.length, 1, 'the readable-by-others warning reaches the program');
    assert.equal(
      assertCaller(await callers.authenticator.authenticate(request(bearer('alice-token')))).id,
      'alice',
    );

    const jwt = await createAuthenticator({
      jwtSecret: SECRET,
      jwtIssuer: ISSUER,
      jwtAudience: AUDIENCE,
    });
    assert.equal(jwt?.mode, 'jwt');
    const signed = await signToken({ alg: 'HS256', key: new TextEncoder().encode(SECRET) });
    assert.equal(
      assertCaller(await jwt.authenticator.authenticate(request(bearer(signed)))).id,
      'alice',
    );

    const resolver = await createAuthenticator({
      callerResolver: 'r.mjs',
      importResolver: async () => () => ({ id: 'r' }),
    });
    assert.equal(resolver?.mode, 'caller-resolver');
    assert.equal(assertCaller(await resolver.authenticator.authenticate(request())).id, 'r');
  });

  it('refuses several modes at once, naming them', async () => {
    await refused(
      { token: 't', callers: 'c.json' },
      /choose one authentication mode, got --token \(or WARRANT_TOKEN\) and --callers/,
    );
    await refused(
      { token: 't', jwks: 'k.json', jwtIssuer: ISSUER, jwtAudience: AUDIENCE },
      /--token .* and --jwt-secret\/--jwt-public-key\/--jwks/,
    );
    await refused(
      { callers: 'c.json', callerResolver: 'r.mjs' },
      /--callers and --caller-resolver/,
    );
    await refused(
      { jwtSecret: SECRET, jwtPublicKey: 'k.pem', jwtIssuer: ISSUER, jwtAudience: AUDIENCE },
      /exactly one of --jwt-secret/,
    );
  });

  it('refuses a JWT key without issuer or audience, and those without a key', async () => {
    await refused(
      { jwtSecret: SECRET, jwtAudience: AUDIENCE },
      /--jwt-issuer \(required with a JWT key\) must not be empty/,
    );
    await refused(
      { jwtSecret: SECRET, jwtIssuer: ISSUER },
      /--jwt-audience \(required with a JWT key\)/,
    );
    await refused(
      { jwtIssuer: ISSUER },
      /--jwt-issuer needs --jwt-secret, --jwt-public-key or --jwks/,
    );
    await refused({ token: 't', jwtAudience: AUDIENCE }, /--jwt-audience needs/);
    await refused({ token: 't', jwtTenantClaim: 'org' }, /--jwt-tenant-claim needs --jwt-secret/);
    await refused({ jwtScopesClaim: 'perm' }, /--jwt-scopes-claim needs --jwt-secret/);
  });

  it('hands the claim names to JWT mode (issue 50)', async () => {
    const configured = await createAuthenticator({
      jwtSecret: SECRET,
      jwtIssuer: ISSUER,
      jwtAudience: AUDIENCE,
      jwtTenantClaim: 'org',
      jwtScopesClaim: 'permissions',
    });
    const token = await signToken({
      alg: 'HS256',
      key: new TextEncoder().encode(SECRET),
      claims: { org: 'acme', permissions: 'a b' },
    });
    assert.ok(configured !== undefined);
    const caller = assertCaller(
      await configured.authenticator.authenticate(request(bearer(token))),
    );
    assert.equal(caller.tenant, 'acme');
    assert.deepEqual(caller.scopes, ['a', 'b']);
  });

  it('refuses empty values', async () => {
    await refused({ token: '' }, /--token must not be empty/);
    await refused({ callers: '' }, /--callers must not be empty/);
    await refused(
      { jwks: '', jwtIssuer: ISSUER, jwtAudience: AUDIENCE },
      /--jwks must not be empty/,
    );
    await refused({ callerResolver: '' }, /--caller-resolver must not be empty/);
  });
});
