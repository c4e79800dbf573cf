// The entry point the server and the CLI wire: it must keep offering these values, and not JWT
// mode's, which loads jose only when chosen (docs/decisions.md, "Light import").
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as auth from '../../../src/http/auth/index.js';

describe('src/http/auth/index.ts', () => {
  it('exports the values the server and the program use, and nothing else', () => {
    assert.deepEqual(Object.keys(auth).sort(), [
      'AuthOptionsError',
      'CALLERS_FILE_MAX_BYTES',
      'CALLER_RESOLVER_MAX_BYTES',
      'CALLER_RESOLVER_TIMEOUT_MS',
      'CHALLENGE_INVALID_TOKEN',
      'CHALLENGE_NO_CREDENTIALS',
      'ON_BEHALF_OF_HEADER',
      'OPERATOR_ID',
      'authCliOptions',
      'authOptionsFromValues',
      'authOptionsHelp',
      'bearerToken',
      'createAuthenticator',
      'createOperatorToken',
      'createResolverAuthenticator',
      'createTokenAuthenticator',
      'frozenCallerCopy',
      'importResolverModule',
      'isAuthOptionsError',
      'loadCallerResolver',
      'loadCallersFile',
    ]);
    assert.equal(auth.CHALLENGE_NO_CREDENTIALS, 'Bearer');
    assert.equal(auth.CHALLENGE_INVALID_TOKEN, 'Bearer error="invalid_token"');
    assert.equal(auth.CALLER_RESOLVER_TIMEOUT_MS, 5000);
    assert.equal(auth.ON_BEHALF_OF_HEADER, 'warrant-on-behalf-of');
  });
});
