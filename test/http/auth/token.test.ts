import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  CHALLENGE_INVALID_TOKEN,
  CHALLENGE_NO_CREDENTIALS,
  createOperatorToken,
  createTokenAuthenticator,
  isAuthOptionsError,
  OPERATOR_ID,
} from '../../../src/http/auth/index.js';
import { assertCaller, assertRefused, request } from './fixtures/helpers.js';

describe('--token', () => {
  const auth = createTokenAuthenticator('s3cret-token');

  it('accepts the token with the caller { id: "token" }, frozen', async () => {
    const caller = assertCaller(await auth.authenticate(request('Bearer s3cret-token')));
    assert.deepEqual(caller, { id: 'token', scopes: ['warrant:audit'] });
    assert.ok(Object.isFrozen(caller));
  });

  it("makes fresh operator tokens (32 random bytes, base64url) whose caller is { id: 'operator' }", async () => {
    const tokens = new Set(Array.from({ length: 50 }, () => createOperatorToken()));
    assert.equal(tokens.size, 50, 'never the same twice');
    for (const token of tokens) assert.match(token, /^[A-Za-z0-9_-]{43}$/);
    const [token = ''] = tokens;
    const operator = createTokenAuthenticator(token, OPERATOR_ID);
    const caller = assertCaller(await operator.authenticate(request(`Bearer ${token}`)));
    assert.deepEqual(caller, { id: 'operator', scopes: ['warrant:audit'] });
    assertRefused(
      await operator.authenticate(request('Bearer s3cret-token')),
      CHALLENGE_INVALID_TOKEN,
    );
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
