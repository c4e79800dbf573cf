/**
 * Builds the one authentication mode of `warrant serve` from its options, or none. Two modes
 * configured together are refused: which one wins would be a guess (docs/decisions.md
 * "Authentication modes").
 */
import { authOptionsError, type Authenticator } from './authenticator.js';
import { loadCallersFile } from './callers-file.js';
import { createResolverAuthenticator, loadCallerResolver } from './caller-resolver.js';
import { createTokenAuthenticator } from './token.js';

export type AuthMode = 'token' | 'callers' | 'jwt' | 'caller-resolver';

export interface AuthOptions {
  /** `--token` or `WARRANT_TOKEN`. */
  readonly token?: string;
  /** `--callers <file.json>`. */
  readonly callers?: string;
  /** `--jwt-secret` or `WARRANT_JWT_SECRET` (HS256). */
  readonly jwtSecret?: string;
  /** `--jwt-public-key <pem file>`. */
  readonly jwtPublicKey?: string;
  /** `--jwks <file | https URL>`. */
  readonly jwks?: string;
  /** `--jwt-issuer`, required with a JWT key. */
  readonly jwtIssuer?: string;
  /** `--jwt-audience`, required with a JWT key. */
  readonly jwtAudience?: string;
  /** `--jwt-tenant-claim` (default `tenant`), with a JWT key. */
  readonly jwtTenantClaim?: string;
  /** `--jwt-scopes-claim` (default `scope`), with a JWT key. */
  readonly jwtScopesClaim?: string;
  /** `--caller-resolver <module>`. */
  readonly callerResolver?: string;
  /** Not a flag: how long a resolver may take (default 5000 ms). */
  readonly resolverTimeoutMs?: number;
  /** Not a flag: time-out of one JWKS fetch (default 5000 ms). */
  readonly jwksTimeoutMs?: number;
  /** Not a flag: loads a resolver module file and returns its default export. */
  readonly importResolver?: (file: string) => Promise<unknown>;
}

export interface ConfiguredAuthenticator {
  readonly mode: AuthMode;
  readonly authenticator: Authenticator;
  /** Lines for stderr at start (e.g. a callers file readable by others). */
  readonly warnings: readonly string[];
  /** Words for the "listening on" line, e.g. `JWT (issuer https://id.example)`. */
  readonly summary: string;
}

const MODE_FLAGS: Readonly<Record<AuthMode, string>> = {
  token: '--token (or WARRANT_TOKEN)',
  callers: '--callers',
  jwt: '--jwt-secret/--jwt-public-key/--jwks',
  'caller-resolver': '--caller-resolver',
};

function modesGiven(options: AuthOptions): AuthMode[] {
  const modes: AuthMode[] = [];
  if (options.token !== undefined) modes.push('token');
  if (options.callers !== undefined) modes.push('callers');
  if (
    options.jwtSecret !== undefined ||
    options.jwtPublicKey !== undefined ||
    options.jwks !== undefined
  )
    modes.push('jwt');
  if (options.callerResolver !== undefined) modes.push('caller-resolver');
  return modes;
}

function nonEmpty(value: string, flag: string): string {
  if (value === '') throw authOptionsError(`${flag} must not be empty`);
  return value;
}

/**
 * The configured mode, or `undefined` when none is (the server then decides what an
 * unauthenticated server accepts).
 * @throws Error (AUTH_OPTIONS_INVALID) with a one-line message: several modes, a JWT key without
 * issuer or audience (or the reverse), an empty value, a malformed callers file, key, JWKS file
 * or resolver module.
 */
export async function createAuthenticator(
  options: AuthOptions,
): Promise<ConfiguredAuthenticator | undefined> {
  const modes = modesGiven(options);
  if (modes.length > 1)
    throw authOptionsError(
      `choose one authentication mode, got ${modes.map((mode) => MODE_FLAGS[mode]).join(' and ')}`,
    );
  if (modes[0] !== 'jwt') {
    const stray = (
      [
        ['--jwt-issuer', options.jwtIssuer],
        ['--jwt-audience', options.jwtAudience],
        ['--jwt-tenant-claim', options.jwtTenantClaim],
        ['--jwt-scopes-claim', options.jwtScopesClaim],
      ] as const
    ).find(([, value]) => value !== undefined)?.[0];
    if (stray !== undefined)
      throw authOptionsError(`${stray} needs --jwt-secret, --jwt-public-key or --jwks`);
  }
  switch (modes[0]) {
    case undefined:
      return undefined;
    case 'token':
      return {
        mode: 'token',
        authenticator: createTokenAuthenticator(nonEmpty(options.token as string, '--token')),
        warnings: [],
        summary: 'bearer token required',
      };
    case 'callers': {
      const loaded = await loadCallersFile(nonEmpty(options.callers as string, '--callers'));
      return {
        mode: 'callers',
        authenticator: loaded.authenticator,
        warnings: loaded.warnings,
        summary: `${loaded.count} caller${loaded.count === 1 ? '' : 's'} from ${options.callers}`,
      };
    }
    case 'jwt': {
      const issuer = nonEmpty(options.jwtIssuer ?? '', '--jwt-issuer (required with a JWT key)');
      const audience = nonEmpty(
        options.jwtAudience ?? '',
        '--jwt-audience (required with a JWT key)',
      );
      // jose loads only in this mode (docs/decisions.md, "Light import").
      const { createJwtAuthenticator } = await import('./jwt.js');
      const authenticator = await createJwtAuthenticator({
        ...(options.jwtSecret !== undefined && { secret: options.jwtSecret }),
        ...(options.jwtPublicKey !== undefined && {
          publicKeyFile: nonEmpty(options.jwtPublicKey, '--jwt-public-key'),
        }),
        ...(options.jwks !== undefined && { jwks: nonEmpty(options.jwks, '--jwks') }),
        issuer,
        audience,
        ...(options.jwksTimeoutMs !== undefined && { jwksTimeoutMs: options.jwksTimeoutMs }),
        ...(options.jwtTenantClaim !== undefined && { tenantClaim: options.jwtTenantClaim }),
        ...(options.jwtScopesClaim !== undefined && { scopesClaim: options.jwtScopesClaim }),
      });
      return {
        mode: 'jwt',
        authenticator,
        warnings: [],
        summary: `JWT (issuer ${issuer}, audience ${audience})`,
      };
    }
    case 'caller-resolver': {
      const file = nonEmpty(options.callerResolver as string, '--caller-resolver');
      const resolver = await loadCallerResolver(file, options.importResolver);
      return {
        mode: 'caller-resolver',
        authenticator: createResolverAuthenticator(resolver, {
          ...(options.resolverTimeoutMs !== undefined && { timeoutMs: options.resolverTimeoutMs }),
        }),
        warnings: [],
        summary: `caller resolver ${file}`,
      };
    }
  }
}
