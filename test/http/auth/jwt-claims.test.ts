// The caller of a verified JWT's claims (docs/api.md, "JWT authentication"); signed tokens
// through the whole mode are in jwt.test.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { callerOfClaims, DEFAULT_JWT_CLAIMS } from '../../../src/http/auth/jwt-claims.js';
import { parseJson } from '../../../src/json/parse-json.js';

describe('callerOfClaims', () => {
  it('maps sub, scope, tenant, roles and act; every other claim but the verified ones is metadata', () => {
    assert.deepEqual(
      callerOfClaims({
        sub: 'ada',
        iss: 'https://id',
        aud: 'warrant-api',
        exp: 2_000_000_000,
        iat: 1_900_000_000,
        nbf: 1_900_000_000,
        jti: 'token-1',
        scope: 'a b',
        tenant: 't',
        roles: ['ops'],
        act: { sub: 'bot', scope: ['a'], tenant: 't', iss: 'https://agents' },
      }),
      {
        id: 'ada',
        tenant: 't',
        roles: ['ops'],
        actor: { id: 'bot', tenant: 't', scopes: ['a'], metadata: { iss: 'https://agents' } },
        scopes: ['a', 'b'],
        metadata: { iss: 'https://id', jti: 'token-1' },
      },
    );
  });

  it('gives the subject [] without scopes, an actor none (it holds none), and keeps roles that are not strings as metadata', () => {
    assert.deepEqual(callerOfClaims({ sub: 'ada', roles: 'ops', act: { sub: 'bot' } }), {
      id: 'ada',
      actor: { id: 'bot' },
      scopes: [],
      metadata: { roles: 'ops' },
    });
  });

  it('falls back to scp only under the default scopes claim and only for the subject', () => {
    assert.deepEqual(callerOfClaims({ sub: 'ada', scp: ['x'] })?.scopes, ['x']);
    assert.deepEqual(callerOfClaims({ sub: 'ada', scope: 'y', scp: ['x'] })?.metadata, {
      scp: ['x'],
    });
    assert.deepEqual(
      callerOfClaims({ sub: 'ada', scp: ['x'] }, { ...DEFAULT_JWT_CLAIMS, scopes: 'perm' }),
      { id: 'ada', scopes: [], metadata: { scp: ['x'] } },
    );
    assert.deepEqual(callerOfClaims({ sub: 'ada', act: { sub: 'bot', scp: 'x' } })?.actor, {
      id: 'bot',
      metadata: { scp: 'x' },
    });
  });

  it('refuses a token whose claims do not map: undefined (a 401)', () => {
    const refused: Record<string, unknown>[] = [
      {},
      { sub: '' },
      { sub: 'ada', scope: 3 },
      { sub: 'ada', tenant: ['t'] },
      { sub: 'ada', act: null },
      { sub: 'ada', act: [] },
      { sub: 'ada', act: { sub: 'bot', scope: {} } },
      { sub: 'ada', tenant: 't', act: { sub: 'bot', tenant: 'u' } },
      { sub: 'ada', act: { sub: 'ada' } },
      // A "__proto__" claim (own key of parsed JSON) is refused by the caller checker.
      parseJson('{"sub":"ada","__proto__":{"admin":true}}') as Record<string, unknown>,
      parseJson('{"sub":"ada","act":{"sub":"bot","__proto__":{}}}') as Record<string, unknown>,
    ];
    for (const claims of refused)
      assert.equal(callerOfClaims(claims), undefined, JSON.stringify(claims));
  });
});
