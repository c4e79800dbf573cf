/**
 * The functions that issue and recognise coded errors (issued-errors.ts), typed to take the codes
 * of the catalog only (error-codes.ts, docs/errors.md): a code outside it does not compile. The
 * same functions, not wrappers, so issuing costs nothing more.
 */
import type { ErrorCode } from './error-codes.js';
import {
  createError as createCodedError,
  isIssuedError as isCodedError,
  issueError as issueCodedError,
} from './issued-errors.js';

/** Stamps `code` (read-only) on an error the runtime is about to throw and records its issuance. */
export const issueError: <E extends Error, Code extends ErrorCode>(
  error: E,
  code: Code,
) => E & { readonly code: Code } = issueCodedError as never;

/** True only for an error this runtime (either build) issued with exactly this code. Never throws. */
export const isIssuedError: (value: unknown, code: ErrorCode) => boolean = isCodedError;

/** Creates a coded error in one call: `createError(TypeError, ErrorCode.X, 'message')`. */
export const createError: <
  C extends new (message: string, options?: ErrorOptions) => Error,
  Code extends ErrorCode,
>(
  ErrorClass: C,
  code: Code,
  message: string,
  cause?: unknown,
) => InstanceType<C> & { readonly code: Code } = createCodedError as never;
