/**
 * `defineModule(name, version, capabilities)`: a capability module whose manifest lists the
 * capabilities' own names (docs/api.md, "defineModule"). A module with an explicit manifest
 * stays valid; `use()` checks both the same way.
 */
import { ErrorCode } from '../errors/error-codes.js';
import { describeValue } from '../errors/describe-value.js';
import { isArrayValue, readArray, readField, type ReadFailure } from '../values/hostile-reads.js';
import { createError } from '../errors/warrant-error.js';
import type { Capability, CapabilityModule } from './capability.js';

/** Most capabilities one module may hold (as `use()` accepts). */
const MAX_CAPABILITIES = 100_000;

function invalid(message: string): TypeError {
  return createError(TypeError, ErrorCode.CAPABILITY_MODULE_INVALID, message);
}

/**
 * A module `{ manifest: { name, version, capabilities: <their names> }, capabilities }`. Each
 * capability's `name` is read once here; everything else is checked by `use()`.
 * @throws TypeError (CAPABILITY_MODULE_INVALID) when the name or version is not a string, the
 * list is not an array, or a capability has no string name.
 */
export function defineModule(
  name: string,
  version: string,
  capabilities: readonly Capability[],
): CapabilityModule {
  if (typeof name !== 'string' || name === '') {
    throw invalid(`defineModule(): name must be a non-empty string, got ${describeValue(name)}`);
  }
  if (typeof version !== 'string') {
    throw invalid(`defineModule(): version must be a string, got ${describeValue(version)}`);
  }
  const fail: ReadFailure = (problem) => invalid(`defineModule(): capabilities ${problem}`);
  if (!isArrayValue(capabilities, fail)) {
    throw invalid('defineModule(): capabilities must be an array of capabilities');
  }
  const list = readArray(capabilities, MAX_CAPABILITIES, fail) as Capability[];
  const names = list.map((capability, index) => {
    const where = `defineModule(): capabilities[${index}]`;
    const own =
      typeof capability === 'object' && capability !== null
        ? readField(capability, 'name', (problem) => invalid(`${where}.name ${problem}`))
        : undefined;
    if (typeof own !== 'string') {
      throw invalid(`${where} must be a capability with a string name, got ${describeValue(own)}`);
    }
    return own;
  });
  return { manifest: { name, version, capabilities: names }, capabilities: list };
}
