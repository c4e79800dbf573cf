// Shared helpers for runtime tests: unique capability names per call (the inventory is
// process-global and has no unregister) and recording authorizers/observers.
import {
  OperatorRuntime,
  createCapability,
  type Capability,
  type CapabilityAuthorizationContext,
  type CapabilityDefinition,
  type CapabilityModule,
  type ExecutionAuthorizer,
  type OperatorRuntimeOptions,
  type RuntimeEvent,
} from '../../src/index.js';

let counter = 0;

/** A name no other test in this process uses. */
export function uniqueName(prefix: string): string {
  counter += 1;
  return `${prefix}.${process.pid}.${counter}`;
}

type Definition = Omit<CapabilityDefinition, 'name' | 'version' | 'description' | 'risk'> &
  Partial<Pick<CapabilityDefinition, 'version' | 'description' | 'risk'>>;

/** Registers capabilities in one module under unique names; returns the names in order. */
export function register(runtime: OperatorRuntime, ...definitions: Definition[]): string[] {
  const capabilities = definitions.map((definition) =>
    createCapability({
      version: '1.0.0',
      description: 'test capability',
      risk: 'read',
      lifecycleLogging: false,
      ...definition,
      name: uniqueName('cap'),
    }),
  );
  const names = capabilities.map((capability) => capability.name);
  runtime.use({
    manifest: { name: uniqueName('module'), version: '1.0.0', capabilities: names },
    capabilities,
  });
  return names;
}

export interface RecordingAuthorizer extends ExecutionAuthorizer {
  readonly calls: CapabilityAuthorizationContext[];
}

/** Allows everything (or answers with `decide`) and records every context it saw. */
export function recordingAuthorizer(
  decide: (context: CapabilityAuthorizationContext) => unknown = () => ({ decision: 'allow' }),
): RecordingAuthorizer {
  const calls: CapabilityAuthorizationContext[] = [];
  return {
    calls,
    authorize(context) {
      calls.push(context);
      return decide(context) as never;
    },
  };
}

export function runtimeWith(options: OperatorRuntimeOptions = {}): OperatorRuntime {
  return new OperatorRuntime(options);
}

/** Subscribes to every event and returns the list it fills. */
export function recordEvents(runtime: OperatorRuntime): RuntimeEvent[] {
  const events: RuntimeEvent[] = [];
  runtime.subscribe('*', (event) => {
    events.push(event);
  });
  return events;
}

/** A capability record as `use()` receives it, with fields to override (for shape checks). */
export function rawCapability(
  name: string,
  overrides: Partial<Record<keyof Capability, unknown>> = {},
): Capability {
  return {
    name,
    version: '1.0.0',
    description: 'd',
    risk: 'read',
    execute: () => 'ran',
    ...overrides,
  } as Capability;
}

/** A module of these capability records, declaring their names unless told otherwise. */
export function rawModule(
  capabilities: Capability[],
  declared = capabilities.map((entry) => entry.name),
): CapabilityModule {
  return {
    manifest: { name: uniqueName('module'), version: '1.0.0', capabilities: declared },
    capabilities,
  };
}
