/** `--token` (or `WARRANT_TOKEN`): one shared bearer token, the operator's; the caller is
 * `{ id: 'token', scopes: ['warrant:audit'] }`: it reads every job (docs/api.md, "Reading and tenants").
 * Without a mode, `warrant serve` makes a random operator token at start, whose caller is
 * `{ id: 'operator', scopes: ['warrant:audit'] }` (docs/api.md, "The operator token"). */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { ExecutionCaller } from '../../index.js';
import {
  INVALID_TOKEN,
  NO_CREDENTIALS,
  authOptionsError,
  bearerToken,
  type AuthResult,
  type Authenticator,
} from './authenticator.js';

export function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/**
 * Compares SHA-256 digests with `timingSafeEqual`: equal lengths whatever the token, so neither
 * the length nor the content of the expected token shows in the time taken.
 */
export function createTokenAuthenticator(token: string, id = 'token'): Authenticator {
  if (token === '') throw authOptionsError('--token must not be empty');
  const expected = sha256(token);
  const accepted: AuthResult = Object.freeze({
    ok: true,
    caller: Object.freeze({
      id,
      scopes: Object.freeze(['warrant:audit']),
    }) as ExecutionCaller,
  });
  return {
    async authenticate(request) {
      const credentials = bearerToken(request.headers);
      if (credentials.kind === 'missing') return NO_CREDENTIALS;
      if (credentials.kind === 'malformed') return INVALID_TOKEN;
      return timingSafeEqual(sha256(credentials.token), expected) ? accepted : INVALID_TOKEN;
    },
  };
}

/** The id of the operator token's caller. */
export const OPERATOR_ID = 'operator';

/** A fresh operator token: 32 random bytes, base64url (it travels in a URL fragment as is). */
export function createOperatorToken(): string {
  return randomBytes(32).toString('base64url');
}
