/** The authentication modes of `warrant serve` (README, docs/decisions.md "Authentication modes"). */
export {
  AuthOptionsError,
  CHALLENGE_INVALID_TOKEN,
  CHALLENGE_NO_CREDENTIALS,
  ON_BEHALF_OF_HEADER,
  bearerToken,
  isAuthOptionsError,
} from './authenticator.js';
export type {
  AuthFailure,
  AuthRequest,
  AuthResult,
  AuthSuccess,
  Authenticator,
} from './authenticator.js';
export { frozenCallerCopy } from '../../callers/caller-check.js';
export type { CallerCheck } from '../../callers/caller-check.js';
export { createOperatorToken, createTokenAuthenticator, OPERATOR_ID } from './token.js';
export { CALLERS_FILE_MAX_BYTES, loadCallersFile } from './callers-file.js';
export type { CallersFileAuthenticator } from './callers-file.js';
// JWT mode (./jwt.js) is not re-exported: it loads `jose`, which createAuthenticator imports only
// when that mode is chosen (docs/decisions.md, "Light import").
export type { JwtOptions } from './jwt.js';
export {
  CALLER_RESOLVER_MAX_BYTES,
  CALLER_RESOLVER_TIMEOUT_MS,
  createResolverAuthenticator,
  importResolverModule,
  loadCallerResolver,
} from './caller-resolver.js';
export type { CallerResolver } from './caller-resolver.js';
export { createAuthenticator } from './create-authenticator.js';
export type { AuthMode, AuthOptions, ConfiguredAuthenticator } from './create-authenticator.js';
export { authCliOptions, authOptionsFromValues, authOptionsHelp } from './cli-options.js';
