import type { ExecutionCaller } from '../authorization/authorizer.js';
import { createError } from '../errors/warrant-error.js';
import { describeValue } from '../errors/describe-value.js';

function invalid(message: string): TypeError {
  return createError(TypeError, 'EXECUTE_OPTIONS_INVALID', message);
}

/**
 * A frozen shallow copy of the caller, taken once per plan: the same object reaches every
 * authorizer call and every capability context of the job. `scopes` and `metadata` are copied
 * and frozen too, so a caller edited during execution changes nothing.
 * @throws TypeError (EXECUTE_OPTIONS_INVALID) for a caller that is not an object, scopes that
 * are not an array of strings, or metadata that is not an object.
 */
export function snapshotCaller(caller: unknown): ExecutionCaller | undefined {
  if (caller === undefined) return undefined;
  if (typeof caller !== 'object' || caller === null || Array.isArray(caller)) {
    throw invalid(`options.caller must be an object, got ${describeValue(caller)}`);
  }
  const copy: Record<string, unknown> = { ...caller };
  const { scopes, metadata } = copy;
  if (scopes !== undefined) {
    if (!Array.isArray(scopes) || !scopes.every((scope) => typeof scope === 'string')) {
      throw invalid('options.caller.scopes must be an array of strings');
    }
    copy.scopes = Object.freeze([...scopes]);
  }
  if (metadata !== undefined) {
    if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) {
      throw invalid(`options.caller.metadata must be an object, got ${describeValue(metadata)}`);
    }
    copy.metadata = Object.freeze({ ...metadata });
  }
  return Object.freeze(copy) as ExecutionCaller;
}
