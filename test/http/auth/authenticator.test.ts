import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  AuthOptionsError,
  authOptionsError,
  bearerToken,
  isAuthOptionsError,
  oneLine,
} from '../../../src/http/auth/authenticator.js';

describe('bearerToken', () => {
  it('reads the token after a case-insensitive Bearer scheme', () => {
    assert.deepEqual(bearerToken({ authorization: 'Bearer abc.def' }), {
      kind: 'token',
      token: 'abc.def',
    });
    assert.deepEqual(bearerToken({ authorization: 'bearer  abc ' }), {
      kind: 'token',
      token: 'abc',
    });
  });

  it('treats no header and other schemes as no credentials', () => {
    assert.deepEqual(bearerToken({}), { kind: 'missing' });
    assert.deepEqual(bearerToken({ authorization: 'Basic dXNlcjpwYXNz' }), { kind: 'missing' });
    assert.deepEqual(bearerToken({ authorization: 'Bearerabc' }), { kind: 'missing' });
  });

  it('calls Bearer without a token malformed', () => {
    assert.deepEqual(bearerToken({ authorization: 'Bearer' }), { kind: 'malformed' });
    assert.deepEqual(bearerToken({ authorization: 'Bearer    ' }), { kind: 'malformed' });
  });
});

describe('AuthOptionsError', () => {
  it('carries the code AUTH_OPTIONS_INVALID and the cause; the guard knows it', () => {
    const cause = new Error('ENOENT');
    const error = authOptionsError('--callers x.json: cannot open (ENOENT)', cause);
    assert.ok(error instanceof AuthOptionsError);
    assert.equal(error.code, 'AUTH_OPTIONS_INVALID');
    assert.equal(error.cause, cause);
    assert.ok(isAuthOptionsError(error));
    assert.ok(!isAuthOptionsError(Object.assign(new Error('x'), { code: 'AUTH_OPTIONS_INVALID' })));
    assert.ok(!isAuthOptionsError(undefined));
  });
});

describe('oneLine', () => {
  it('keeps the first line, turns control characters into spaces and cuts long text', () => {
    assert.equal(oneLine('first\nsecond'), 'first');
    assert.equal(oneLine('a\tb\u001b[31mc'), 'a b [31mc');
    assert.equal(oneLine('x'.repeat(300)).length, 200);
    assert.ok(oneLine('x'.repeat(300)).endsWith('…'));
  });
});
