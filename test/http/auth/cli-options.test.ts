import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseArgs } from 'node:util';
import {
  authCliOptions,
  authOptionsFromValues,
  authOptionsHelp,
} from '../../../src/http/auth/cli-options.js';
import { createAuthenticator } from '../../../src/http/auth/create-authenticator.js';
import { isAuthOptionsError } from '../../../src/http/auth/authenticator.js';

describe('authOptionsFromValues', () => {
  const parse = (args: string[]) =>
    parseArgs({ args, options: authCliOptions, strict: true }).values;

  it('maps every flag', () => {
    const values = parse([
      '--callers',
      'c.json',
      '--jwt-public-key',
      'k.pem',
      '--jwks',
      'j.json',
      '--jwt-issuer',
      'i',
      '--jwt-audience',
      'a',
      '--caller-resolver',
      'r.mjs',
      '--token',
      't',
      '--jwt-secret',
      's',
      '--jwt-tenant-claim',
      'org',
      '--jwt-scopes-claim',
      'permissions',
    ]);
    assert.deepEqual(authOptionsFromValues(values, {}), {
      token: 't',
      callers: 'c.json',
      jwtSecret: 's',
      jwtPublicKey: 'k.pem',
      jwks: 'j.json',
      jwtIssuer: 'i',
      jwtAudience: 'a',
      jwtTenantClaim: 'org',
      jwtScopesClaim: 'permissions',
      callerResolver: 'r.mjs',
    });
  });

  it('reads WARRANT_TOKEN and WARRANT_JWT_SECRET when the flags are absent; flags win', () => {
    const env = { WARRANT_TOKEN: 'env-token', WARRANT_JWT_SECRET: 'env-secret' };
    assert.deepEqual(authOptionsFromValues(parse([]), env), {
      token: 'env-token',
      jwtSecret: 'env-secret',
    });
    assert.deepEqual(authOptionsFromValues(parse(['--token', 'flag']), { WARRANT_TOKEN: 'env' }), {
      token: 'flag',
    });
  });

  it('counts WARRANT_TOKEN set alongside another mode as a second mode', async () => {
    const options = authOptionsFromValues(parse(['--callers', 'c.json']), { WARRANT_TOKEN: 'x' });
    await assert.rejects(
      createAuthenticator(options),
      (error: unknown) =>
        isAuthOptionsError(error) &&
        /--token \(or WARRANT_TOKEN\) and --callers/.test(error.message),
    );
  });

  it('documents every flag in the help text', () => {
    for (const flag of Object.keys(authCliOptions))
      assert.match(authOptionsHelp, new RegExp(`--${flag} `));
  });
});
