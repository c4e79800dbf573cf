/**
 * The authentication flags of `warrant serve`, ready for `node:util` parseArgs, their `--help`
 * lines, and the step from parsed values (plus the environment) to `AuthOptions`.
 */
import type { AuthOptions } from './create-authenticator.js';

export const authCliOptions = {
  token: { type: 'string' },
  callers: { type: 'string' },
  'jwt-secret': { type: 'string' },
  'jwt-public-key': { type: 'string' },
  jwks: { type: 'string' },
  'jwt-issuer': { type: 'string' },
  'jwt-audience': { type: 'string' },
  'jwt-tenant-claim': { type: 'string' },
  'jwt-scopes-claim': { type: 'string' },
  'caller-resolver': { type: 'string' },
} as const;

export const authOptionsHelp = `Authentication (at most one mode; every route but GET /health):
  --token <token>           one shared bearer token; caller { id: 'token' } (warrant:audit)
                            (or set WARRANT_TOKEN: arguments are visible to other users)
  --callers <file.json>     { "callers": [{ "tokenSha256": "<hex>", "caller": { "id": ... } }] }
                            bearer tokens by SHA-256; the file holds no token (chmod 600 it);
                            an entry's "mayActFor": [ids] lets its token send
                            Warrant-On-Behalf-Of: <id>
  --jwt-secret <secret>     JWT signed with HS256, secret of 32 bytes or more
                            (or set WARRANT_JWT_SECRET)
  --jwt-public-key <file>   JWT signed with this PEM public key (RSA, EC or Ed25519)
  --jwks <file | https URL> JWT signed with a key of this JSON Web Key Set
  --jwt-issuer <iss>        required with a JWT key: the token's "iss"
  --jwt-audience <aud>      required with a JWT key: one of the token's "aud"
  --jwt-tenant-claim <name> the claim holding the caller's tenant (default tenant)
  --jwt-scopes-claim <name> the claim holding the scopes, a space-separated string or an
                            array (default scope); "act" (nested) is the actor chain
  --caller-resolver <file>  module whose default export (request) => caller | undefined
                            decides the caller (5 s limit)`;

function text(values: Readonly<Record<string, unknown>>, name: string): string | undefined {
  const value = values[name];
  return typeof value === 'string' ? value : undefined;
}

/**
 * `AuthOptions` from parsed flags. `WARRANT_TOKEN` and `WARRANT_JWT_SECRET` stand in for the
 * flags when these are absent; a variable set alongside another mode counts as a second mode.
 */
export function authOptionsFromValues(
  values: Readonly<Record<string, unknown>>,
  env: Readonly<Record<string, string | undefined>>,
): AuthOptions {
  const options: Record<string, string> = {};
  const set = (key: keyof AuthOptions, value: string | undefined) => {
    if (value !== undefined) options[key] = value;
  };
  set('token', text(values, 'token') ?? env.WARRANT_TOKEN);
  set('callers', text(values, 'callers'));
  set('jwtSecret', text(values, 'jwt-secret') ?? env.WARRANT_JWT_SECRET);
  set('jwtPublicKey', text(values, 'jwt-public-key'));
  set('jwks', text(values, 'jwks'));
  set('jwtIssuer', text(values, 'jwt-issuer'));
  set('jwtAudience', text(values, 'jwt-audience'));
  set('jwtTenantClaim', text(values, 'jwt-tenant-claim'));
  set('jwtScopesClaim', text(values, 'jwt-scopes-claim'));
  set('callerResolver', text(values, 'caller-resolver'));
  return options as AuthOptions;
}
