/**
 * JWT bearer tokens, verified with `jose`: `--jwt-secret` (HS256), `--jwt-public-key <pem file>`
 * (the algorithm follows from the key's type) or `--jwks <file | https URL>`, with a required
 * issuer and audience. Signature, `exp` (required), `nbf`, `iss` and `aud` are checked with a
 * 30 s clock tolerance; the algorithms accepted are pinned to the key, so `alg: none` and a token
 * signed with another algorithm (an HMAC keyed with the public key's bytes) are refused. The
 * caller is mapped from the claims by jwt-claims.ts (docs/api.md, "JWT authentication").
 */
import { createPublicKey, webcrypto, type JsonWebKey, type KeyObject } from 'node:crypto';
import {
  createLocalJWKSet,
  createRemoteJWKSet,
  jwtVerify,
  type CryptoKey,
  type JWTPayload,
  type JWTVerifyGetKey,
  type JWSAlgorithm,
} from 'jose';
import {
  INVALID_TOKEN,
  NO_CREDENTIALS,
  authOptionsError,
  bearerToken,
  oneLine,
  type AuthResult,
  type AuthSuccess,
  type Authenticator,
} from './authenticator.js';
import { parseJson } from '../../json/parse-json.js';
import { readOptionFile } from './read-option-file.js';
import {
  callerOfClaims,
  DEFAULT_JWT_CLAIMS,
  RESERVED_JWT_CLAIMS,
  type JwtClaimNames,
} from './jwt-claims.js';
import { VerifiedTokens } from './verified-tokens.js';

export interface JwtOptions {
  /** HS256 shared secret (at least 32 bytes). Exactly one of secret, publicKeyFile, jwks. */
  readonly secret?: string;
  /** PEM file of an RSA (2048 bits or more), EC (P-256/384/521) or Ed25519 public key. */
  readonly publicKeyFile?: string;
  /** A JWKS file, or an https:// URL fetched with a time-out and cached. */
  readonly jwks?: string;
  /** Required `iss`. */
  readonly issuer: string;
  /** Required `aud` (one of the token's audiences). */
  readonly audience: string;
  /** Time-out of one JWKS fetch. Default 5000 ms. */
  readonly jwksTimeoutMs?: number;
  /** How long fetched keys are used before they are fetched again. Default 10 minutes. */
  readonly jwksCacheMaxAgeMs?: number;
  /** The claim holding the caller's tenant (`--jwt-tenant-claim`). Default `tenant`. */
  readonly tenantClaim?: string;
  /** The claim holding the scopes (`--jwt-scopes-claim`). Default `scope`. */
  readonly scopesClaim?: string;
}

/** The claim names of the options, checked: non-empty, distinct, none of `sub`, `act`, `roles`. */
function claimNames(options: JwtOptions): JwtClaimNames {
  const names = {
    tenant: options.tenantClaim ?? DEFAULT_JWT_CLAIMS.tenant,
    scopes: options.scopesClaim ?? DEFAULT_JWT_CLAIMS.scopes,
  };
  for (const [flag, name] of [
    ['--jwt-tenant-claim', names.tenant],
    ['--jwt-scopes-claim', names.scopes],
  ] as const) {
    if (typeof name !== 'string' || name === '')
      throw authOptionsError(`${flag} must not be empty`);
    if (RESERVED_JWT_CLAIMS.includes(name))
      throw authOptionsError(`${flag} cannot be "${name}": that claim is read as itself`);
  }
  if (names.tenant === names.scopes)
    throw authOptionsError('--jwt-tenant-claim and --jwt-scopes-claim must name two claims');
  return names;
}

/** Seconds of clock skew allowed on `exp` and `nbf`. */
export const JWT_CLOCK_TOLERANCE_S = 30;
export const JWT_SECRET_MIN_BYTES = 32;
/** Verified tokens remembered (see verified-tokens.ts), and for how long at most. */
export const JWT_CACHE_MAX_ENTRIES = 1000;
export const JWT_CACHE_MAX_AGE_MS = 60_000;
const KEY_FILE_MAX_BYTES = 1024 * 1024;
const ASYMMETRIC_ALGORITHMS: readonly JWSAlgorithm[] = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
];
const EC_ALGORITHMS: Readonly<Record<string, JWSAlgorithm>> = {
  prime256v1: 'ES256',
  secp384r1: 'ES384',
  secp521r1: 'ES512',
};

interface Verifier {
  readonly key: KeyObject | CryptoKey | JWTVerifyGetKey;
  readonly algorithms: readonly JWSAlgorithm[];
  /** Describes the key source in log lines when keys cannot be fetched. */
  readonly source: string;
  /** Only a remote key set can fail to give keys; local keys never log. */
  readonly remote: boolean;
}

/** The algorithms a public key may verify: exactly those of its type. */
export function algorithmsForKey(key: KeyObject, label: string): JWSAlgorithm[] {
  const type = key.asymmetricKeyType;
  if (type === 'rsa') {
    const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
    if (bits < 2048) throw authOptionsError(`${label}: RSA keys must have 2048 bits or more`);
    return ['RS256'];
  }
  if (type === 'ec') {
    const curve = key.asymmetricKeyDetails?.namedCurve ?? '';
    const algorithm = EC_ALGORITHMS[curve];
    if (algorithm === undefined)
      throw authOptionsError(
        `${label}: EC curve ${curve || 'unknown'} (use P-256, P-384 or P-521)`,
      );
    return [algorithm];
  }
  if (type === 'ed25519') return ['EdDSA', 'Ed25519'];
  throw authOptionsError(
    `${label}: unsupported key type ${type ?? 'unknown'} (use RSA, EC or Ed25519)`,
  );
}

async function publicKeyVerifier(file: string): Promise<Verifier> {
  const label = `--jwt-public-key ${file}`;
  const { text } = await readOptionFile(file, label, KEY_FILE_MAX_BYTES);
  if (/PRIVATE KEY-----/.test(text))
    throw authOptionsError(`${label}: holds a private key; give the public key (PEM "PUBLIC KEY")`);
  let key: KeyObject;
  try {
    key = createPublicKey(text);
  } catch {
    throw authOptionsError(`${label}: not a PEM public key`);
  }
  return { key, algorithms: algorithmsForKey(key, label), source: label, remote: false };
}

/** The secret is imported once as an HS256 verification key, not per request. */
async function secretVerifier(secret: string): Promise<Verifier> {
  const bytes = new TextEncoder().encode(secret);
  if (bytes.length < JWT_SECRET_MIN_BYTES)
    throw authOptionsError(`--jwt-secret must be at least ${JWT_SECRET_MIN_BYTES} bytes long`);
  const key = await webcrypto.subtle.importKey(
    'raw',
    bytes,
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['verify'],
  );
  return { key: key as CryptoKey, algorithms: ['HS256'], source: '--jwt-secret', remote: false };
}

const PRIVATE_JWK_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];

/** Every key of a JWKS file must be a usable public signature key; checked at start. */
function checkJwks(data: unknown, label: string): { keys: Record<string, unknown>[] } {
  const keys = (data as { keys?: unknown } | null)?.keys;
  if (typeof data !== 'object' || data === null || !Array.isArray(keys) || keys.length === 0)
    throw authOptionsError(`${label}: must be a JSON Web Key Set { "keys": [...] } with a key`);
  keys.forEach((jwk: unknown, index) => {
    const name = `keys[${index}]`;
    if (typeof jwk !== 'object' || jwk === null || Array.isArray(jwk))
      throw authOptionsError(`${label}: ${name} must be an object`);
    const kty = (jwk as { kty?: unknown }).kty;
    if (kty !== 'RSA' && kty !== 'EC' && kty !== 'OKP')
      throw authOptionsError(`${label}: ${name}.kty must be "RSA", "EC" or "OKP"`);
    const secret = PRIVATE_JWK_MEMBERS.find((member) => member in jwk);
    if (secret !== undefined)
      throw authOptionsError(`${label}: ${name} holds private key material ("${secret}")`);
    const alg = (jwk as { alg?: unknown }).alg;
    if (alg !== undefined && !ASYMMETRIC_ALGORITHMS.includes(alg as JWSAlgorithm))
      throw authOptionsError(`${label}: ${name}.alg ${JSON.stringify(alg)} is not supported`);
    let key: KeyObject;
    try {
      key = createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' });
    } catch {
      throw authOptionsError(`${label}: ${name} is not a valid public key`);
    }
    algorithmsForKey(key, `${label}: ${name}`);
  });
  return { keys: keys as Record<string, unknown>[] };
}

async function jwksFileVerifier(file: string): Promise<Verifier> {
  const label = `--jwks ${file}`;
  const { text } = await readOptionFile(file, label, KEY_FILE_MAX_BYTES);
  let data: unknown;
  try {
    data = parseJson(text);
  } catch {
    throw authOptionsError(`${label}: not valid JSON`);
  }
  const jwks = checkJwks(data, label);
  let getKey: JWTVerifyGetKey;
  try {
    getKey = createLocalJWKSet(jwks as Parameters<typeof createLocalJWKSet>[0]);
  } catch {
    throw authOptionsError(`${label}: not a valid JSON Web Key Set`);
  }
  return { key: getKey, algorithms: ASYMMETRIC_ALGORITHMS, source: label, remote: false };
}

function jwksUrlVerifier(value: string, options: JwtOptions): Verifier {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw authOptionsError(`--jwks ${value}: not a valid URL`);
  }
  const timeoutDuration = options.jwksTimeoutMs ?? 5000;
  const getKey = createRemoteJWKSet(url, {
    timeoutDuration,
    cooldownDuration: 30_000,
    cacheMaxAge: options.jwksCacheMaxAgeMs ?? 10 * 60_000,
  });
  return {
    key: getKey,
    algorithms: ASYMMETRIC_ALGORITHMS,
    source: `--jwks ${url.href}`,
    remote: true,
  };
}

/** A file path, or an https URL; any other URL scheme is refused (keys only over TLS). */
function isUrl(value: string): boolean {
  if (/^https:\/\//i.test(value)) return true;
  if (/^[a-z][a-z0-9+.-]+:\/\//i.test(value))
    throw authOptionsError(`--jwks ${value}: only https:// URLs (or a file) are accepted`);
  return false;
}

async function createVerifier(options: JwtOptions): Promise<Verifier> {
  const given = [options.secret, options.publicKeyFile, options.jwks].filter(
    (v) => v !== undefined,
  );
  if (given.length !== 1)
    throw authOptionsError(
      'give exactly one of --jwt-secret (or WARRANT_JWT_SECRET), --jwt-public-key, --jwks',
    );
  if (options.secret !== undefined) return secretVerifier(options.secret);
  if (options.publicKeyFile !== undefined) return publicKeyVerifier(options.publicKeyFile);
  const jwks = options.jwks as string;
  if (jwks === '') throw authOptionsError('--jwks must not be empty');
  return isUrl(jwks) ? jwksUrlVerifier(jwks, options) : jwksFileVerifier(jwks);
}

/**
 * Errors that say a remote key set could not be fetched (the operator should know), not that
 * the token is bad.
 */
function keySourceProblem(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 'ERR_JWKS_TIMEOUT') return 'timed out';
  // A JWKS that is not JSON, not a key set, or an answer other than 200.
  if (code === 'ERR_JWKS_INVALID' || code === 'ERR_JOSE_GENERIC')
    return oneLine(String((error as Error).message));
  if (typeof code === 'string' && code.startsWith('ERR_J')) return undefined;
  // Not a jose error: the fetch failed (refused, TLS, DNS) or something unexpected.
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | null)?.cause;
  const detail = cause?.code ?? cause?.message ?? (error as Error | null)?.message ?? error;
  return oneLine(`failed (${String(detail)})`);
}

export async function createJwtAuthenticator(options: JwtOptions): Promise<Authenticator> {
  if (typeof options.issuer !== 'string' || options.issuer === '')
    throw authOptionsError('JWT authentication needs --jwt-issuer');
  if (typeof options.audience !== 'string' || options.audience === '')
    throw authOptionsError('JWT authentication needs --jwt-audience');
  const names = claimNames(options);
  const verifier = await createVerifier(options);
  const verifyOptions = {
    algorithms: [...verifier.algorithms],
    issuer: options.issuer,
    audience: options.audience,
    clockTolerance: JWT_CLOCK_TOLERANCE_S,
    requiredClaims: ['exp', 'sub'],
  };
  const verified = new VerifiedTokens({
    maxEntries: JWT_CACHE_MAX_ENTRIES,
    maxAgeMs: JWT_CACHE_MAX_AGE_MS,
  });
  const verify = (token: string) =>
    typeof verifier.key === 'function'
      ? jwtVerify(token, verifier.key, verifyOptions)
      : jwtVerify(token, verifier.key, verifyOptions);
  return {
    async authenticate(request): Promise<AuthResult> {
      const credentials = bearerToken(request.headers);
      if (credentials.kind === 'missing') return NO_CREDENTIALS;
      if (credentials.kind === 'malformed') return INVALID_TOKEN;
      const known = verified.get(credentials.token);
      if (known !== undefined) return known;
      let payload: JWTPayload;
      try {
        ({ payload } = await verify(credentials.token));
      } catch (error) {
        const problem = verifier.remote ? keySourceProblem(error) : undefined;
        if (problem === undefined) return INVALID_TOKEN;
        return { ...INVALID_TOKEN, log: `JWT keys from ${verifier.source}: ${problem}` };
      }
      const caller = callerOfClaims(payload, names);
      if (caller === undefined) return INVALID_TOKEN;
      const accepted: AuthSuccess = Object.freeze({ ok: true, caller });
      // jose has checked that exp is a number; the token is good until exp + tolerance.
      verified.set(
        credentials.token,
        accepted,
        ((payload.exp as number) + JWT_CLOCK_TOLERANCE_S) * 1000,
      );
      return accepted;
    },
  };
}
