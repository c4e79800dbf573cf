import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  CHALLENGE_INVALID_TOKEN,
  CHALLENGE_NO_CREDENTIALS,
  createTokenAuthenticator,
  isAuthOptionsError,
} from '../../../src/http/auth/index.js';
import { assertCaller, assertRefused, request } from './fixtures/helpers.js';

describe('--token', () => {
  const auth = createTokenAuthenticator('s3cret-token');

  it('accepts the token with the caller { id: "token" }, frozen', async () => {
    const caller = assertCaller(await auth.authenticate(request('Bearer s3cret-token')));
    assert.deepEqual(caller, { id: 'token', scopes: ['warrant:audit'] });
    assert.ok(Object.isFrozen(caller));
  });

  it('answers a missing header and another scheme with a bare Bearer challenge', async () => {
    assertRefused(await auth.authenticate(request()), CHALLENGE_NO_CREDENTIALS);
    assertRefused(
      await auth.authenticate(request('Basic czNjcmV0LXRva2Vu')),
      CHALLENGE_NO_CREDENTIALS,
    );
  });

  it('answers a wrong, longer, shorter or empty token with invalid_token', async () => {
    for (const header of [
      'Bearer s3cret-tokeN',
      'Bearer s3cret-token2',
      'Bearer s3cret',
      'Bearer ',
    ]) {
      assertRefused(await auth.authenticate(request(header)), CHALLENGE_INVALID_TOKEN);
    }
  });

  it('refuses an empty token at start with a coded error', () => {
    assert.throws(
      () => createTokenAuthenticator(''),
      (error: unknown) =>
        isAuthOptionsError(error) && /--token must not be empty/.test(String(error)),
    );
  });
});
