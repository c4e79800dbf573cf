// Shared helpers for runtime tests: unique capability names per call (the inventory is
// process-global and has no unregister), recording authorizers/observers, plans of given steps,
// a runtime closed after use, and a gate: a capability held until the test releases it.
import {
  OperatorRuntime,
  createCapability,
  type Capability,
  type CapabilityAuthorizationContext,
  type CapabilityDefinition,
  type CapabilityModule,
  type ExecutionAuthorizer,
  type ExecutionContext,
  type ExecutionPlan,
  type OperatorRuntimeOptions,
  type RuntimeEvent,
} from '../../src/index.js';
import { Changes } from './wait.js';

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

/** A plan of these steps (each with `input: {}` unless given). */
export function planOf(
  ...steps: { id: string; capability: string; input?: unknown }[]
): ExecutionPlan {
  return { version: '1.0', goal: 'a test plan', steps: steps.map((s) => ({ input: {}, ...s })) };
}

/** Runs `use` on a new runtime with `options`, closing the runtime however `use` ends. */
export async function withRuntime<T>(
  options: OperatorRuntimeOptions,
  use: (runtime: OperatorRuntime) => Promise<T>,
): Promise<T> {
  const runtime = new OperatorRuntime(options);
  try {
    return await use(runtime);
  } finally {
    await runtime.close();
  }
}

/**
 * A capability (its `definition`, for `register`) whose every invocation waits until the test
 * releases it (resolving `{ released: input }`) or its signal aborts (rejecting with the reason).
 * `seen` lists each invocation's input and signal in the order they began; `entered(count)`
 * resolves once `count` have begun, at the invocation itself (bounded: 20 s); `mostAtOnce` is the
 * most invocations held at one time.
 */
export function gate() {
  const seen: { input: unknown; signal: AbortSignal }[] = [];
  const releases: (() => void)[] = [];
  const changes = new Changes();
  let held = 0;
  let mostAtOnce = 0;
  const definition = {
    execute: ({ input, context }: { input: unknown; context: ExecutionContext }) =>
      new Promise<unknown>((resolve, reject) => {
        let done = false;
        const end = () => {
          if (done) return false;
          done = true;
          held -= 1;
          return true;
        };
        held += 1;
        mostAtOnce = Math.max(mostAtOnce, held);
        seen.push({ input, signal: context.signal });
        releases.push(() => {
          if (end()) resolve({ released: input });
        });
        context.signal.addEventListener(
          'abort',
          () => {
            if (end()) reject(context.signal.reason as Error);
          },
          { once: true },
        );
        changes.changed();
      }),
  };
  return {
    definition,
    seen,
    /** Ends the invocation that began `index`-th (from 0). */
    release: (index: number) => releases[index]?.(),
    /** Resolves once `count` invocations have begun. */
    entered: (count = 1) =>
      changes.until(() => seen.length >= count, {
        what: () => `${count} invocation(s) of the gate (${seen.length} began)`,
      }),
    /** The most invocations held at one time so far. */
    mostAtOnce: () => mostAtOnce,
  };
}
