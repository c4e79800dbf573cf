// What every store contract suite (test/stores/*-contract.ts) sets up: capabilities registered
// once for the process under unique names, the runtimes it opens closed when it ends, and the
// authorizer its plans meet.
import { after } from 'node:test';
import {
  OperatorRuntime,
  createCapability,
  type CapabilityDefinition,
  type ExecutionAuthorizer,
} from '../../src/index.js';
import { uniqueName } from './runtime-fixtures.js';

/** Allows reads and denies every write capability with the reason "no writes". */
export const DENY_WRITES: ExecutionAuthorizer = {
  authorize: ({ capability }) =>
    capability.risk === 'write' ? { decision: 'deny', reason: 'no writes' } : { decision: 'allow' },
};

/** Runtimes a suite opens: `keep` hands one back, to be closed when the suite's file ends. */
export function suiteRuntimes(): { keep: <T extends OperatorRuntime>(runtime: T) => T } {
  const runtimes: OperatorRuntime[] = [];
  after(async () => {
    for (const runtime of runtimes) await runtime.close();
  });
  return {
    keep: (runtime) => {
      runtimes.push(runtime);
      return runtime;
    },
  };
}

type SharedDefinition = Omit<CapabilityDefinition, 'name' | 'version' | 'description' | 'risk'> &
  Partial<Pick<CapabilityDefinition, 'name' | 'version' | 'description' | 'risk'>>;

/**
 * Registers capabilities in the process-global inventory, in one module (`<prefix>-module`), each
 * under a unique name made from its `name` or else `<prefix>.<key>`; version `1`, description `d`
 * and risk `read` unless given. Returns the registered names by key.
 */
export function registerShared<K extends string>(
  prefix: string,
  definitions: Record<K, SharedDefinition>,
): Record<K, string> {
  const names = {} as Record<K, string>;
  const capabilities = (Object.entries(definitions) as [K, SharedDefinition][]).map(
    ([key, definition]) => {
      names[key] = uniqueName(definition.name ?? `${prefix}.${key}`);
      return createCapability({
        version: '1',
        description: 'd',
        risk: 'read',
        ...definition,
        name: names[key],
      });
    },
  );
  new OperatorRuntime().use({
    manifest: {
      name: uniqueName(`${prefix}-module`),
      version: '1',
      capabilities: capabilities.map((capability) => capability.name),
    },
    capabilities,
  });
  return names;
}
