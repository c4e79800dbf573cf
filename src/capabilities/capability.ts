import type { ExecutionCaller } from '../authorization/authorizer.js';
import type { CapabilityRisk } from './risk.js';

export type { CapabilityRisk } from './risk.js';

/** One field of the limited input contract (not JSON Schema; docs/decisions.md). */
export interface CapabilityInputField {
  type: 'string' | 'number' | 'boolean' | 'object' | 'array';
  required: boolean;
  description: string;
}

/**
 * Structured logger handed to capabilities and middleware, called message first. The runtime's
 * `context.logger` also takes pino's order, fields first, and passes fields on whichever kind of
 * logger the runtime was given (docs/api.md, "Loggers").
 */
export interface ExecutionLogger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/**
 * A logger called fields first, as pino's are: accepted as the runtime's `logger`, which calls
 * it in that order (docs/api.md, "Loggers").
 */
export interface FieldsFirstLogger {
  debug(fields: Record<string, unknown>, message?: string): void;
  info(fields: Record<string, unknown>, message?: string): void;
  warn(fields: Record<string, unknown>, message?: string): void;
  error(fields: Record<string, unknown>, message?: string): void;
}

/** What a capability receives besides its input. */
export interface ExecutionContext {
  readonly jobId: string;
  readonly stepId: string;
  readonly caller: ExecutionCaller | undefined;
  readonly logger: ExecutionLogger;
  /** Aborted when the step times out (TimeoutMiddleware); the runtime never cancels otherwise. */
  readonly signal: AbortSignal;
}

/** A registered unit of work. Prefer `createCapability` over writing this by hand. */
export interface Capability<Input = unknown, Output = unknown> {
  readonly name: string;
  readonly version: string;
  readonly description: string;
  readonly risk: CapabilityRisk;
  readonly inputSchema?: Readonly<Record<string, CapabilityInputField>>;
  execute(input: Input, context: ExecutionContext): Output | Promise<Output>;
}

/** Public, detached description of a registered capability (docs/api.md, "runtime.listCapabilities"). */
export interface CapabilityDescriptor {
  name: string;
  version: string;
  description: string;
  risk: CapabilityRisk;
  inputSchema: Record<string, CapabilityInputField>;
}

/** One invocation as middleware sees it. */
export interface CapabilityExecution<Input = unknown> {
  readonly input: Input;
  readonly context: ExecutionContext;
  readonly capability: {
    readonly name: string;
    readonly version: string;
    readonly risk: CapabilityRisk;
  };
}

/**
 * Wraps an invocation. Call `next()` at most once (a second call fails the step); pass a new
 * execution to change what inner layers see (TimeoutMiddleware passes a new signal).
 */
export interface CapabilityMiddleware {
  execute(
    execution: CapabilityExecution,
    next: (execution?: CapabilityExecution) => Promise<unknown>,
  ): unknown;
}

/** What `createCapability` takes. */
export interface CapabilityDefinition<Input = unknown, Output = unknown> {
  name: string;
  version: string;
  description: string;
  risk: CapabilityRisk;
  inputSchema?: Record<string, CapabilityInputField>;
  /** Fails the step with `Capability execution timed out after <ms>ms` and aborts the signal. */
  timeoutMs?: number;
  /** Innermost layers; lifecycle logging and timeout wrap them (docs/api.md, "createCapability"). */
  middleware?: readonly CapabilityMiddleware[];
  /** Logs start, completion and failure through `context.logger`. Default `true`. */
  lifecycleLogging?: boolean;
  execute(execution: { input: Input; context: ExecutionContext }): Output | Promise<Output>;
}

/** The `manifest` of a capability module: every capability it provides is listed by name. */
export interface CapabilityModuleManifest {
  name: string;
  version: string;
  capabilities: readonly string[];
}

/** What `runtime.use()` registers, atomically. */
export interface CapabilityModule {
  manifest: CapabilityModuleManifest;
  // `execute` is a method, so a Capability<SomeInput> is assignable here (bivariant parameter).
  capabilities: readonly Capability[];
}
