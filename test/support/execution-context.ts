// An ExecutionContext for calling capabilities directly in unit tests.
import type { ExecutionContext } from '../../src/index.js';

export const silentLogger: ExecutionContext['logger'] = {
  debug() {},
  info() {},
  warn() {},
  error() {},
};

export function testContext(overrides: Partial<ExecutionContext> = {}): ExecutionContext {
  return {
    jobId: 'j',
    stepId: 's',
    caller: undefined,
    logger: silentLogger,
    signal: new AbortController().signal,
    ...overrides,
  };
}
