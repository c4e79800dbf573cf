/**
 * Every error Warrant throws across the package root carries a stable SCREAMING_SNAKE `code`
 * (docs/errors.md). Guards recognise errors by issuance, not by shape: the runtime records each
 * error it creates in a private WeakSet, reached through a frozen process-global holder (see
 * processGlobal) so the ESM and the CommonJS builds loaded in one process share it, and a
 * lookalike, a clone, a proxy or an object whose prototype is a real error is never recognised.
 * The holder can add and ask, never remove.
 */
import { processGlobal } from '../process/process-global.js';

interface IssuedErrors {
  add(error: object): void;
  has(value: unknown): boolean;
}

// A new key for a new shape: version 1 of this key held the WeakSet itself.
const ISSUED_KEY = Symbol.for('warrant.issuedErrors.v2');

function createIssuedErrors(): IssuedErrors {
  const issued = new WeakSet<object>();
  return {
    add(error) {
      issued.add(error);
    },
    has: (value) => typeof value === 'object' && value !== null && issued.has(value),
  };
}

let shared: IssuedErrors | undefined;

function issuedErrors(): IssuedErrors {
  shared ??= processGlobal(ISSUED_KEY, createIssuedErrors);
  return shared;
}

/** Stamps `code` (read-only) on an error the runtime is about to throw and records its issuance. */
export function issueError<E extends Error>(error: E, code: string): E & { readonly code: string } {
  Object.defineProperty(error, 'code', { value: code, enumerable: true });
  issuedErrors().add(error);
  return error as E & { readonly code: string };
}

/** True only for an error this runtime (either build) issued with exactly this code. Never throws. */
export function isIssuedError(value: unknown, code: string): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (!issuedErrors().has(value)) return false;
  // `code` is a non-writable, non-configurable own data property set at issuance.
  const descriptor = Object.getOwnPropertyDescriptor(value, 'code');
  return descriptor !== undefined && descriptor.value === code;
}

/** Creates a coded error in one call: `createError(TypeError, 'CODE', 'message')`. */
export function createError<C extends new (message: string, options?: ErrorOptions) => Error>(
  ErrorClass: C,
  code: string,
  message: string,
  cause?: unknown,
): InstanceType<C> & { readonly code: string } {
  const error = new ErrorClass(message, cause === undefined ? undefined : { cause });
  return issueError(error as InstanceType<C>, code);
}
