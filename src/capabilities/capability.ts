import type { StandardSchemaV1 } from '@standard-schema/spec';
import type { ExecutionCaller } from '../callers/execution-caller.js';
import type { CapabilityRisk } from './risk.js';

export type { CapabilityRisk } from './risk.js';

/** One field of the limited input contract (not JSON Schema; docs/decisions.md). */
export interface CapabilityInputField {
  type: 'string' | 'number' | 'boolean' | 'object' | 'array';
  required: boolean;
  description: string;
}

/** A field record: the limited input contract, one `CapabilityInputField` per input key. */
export type CapabilityInputFields = Readonly<Record<string, CapabilityInputField>>;

/**
 * What `inputSchema` takes: a field record, or a Standard Schema v1 object (zod 4, valibot,
 * arktype: anything with `~standard.validate`) whose output is the input the capability gets.
 */
export type CapabilityInputSchema = CapabilityInputFields | StandardSchemaV1;

/** The value type of one field-record type name. */
type FieldValue<Type> = Type extends 'string'
  ? string
  : Type extends 'number'
    ? number
    : Type extends 'boolean'
      ? boolean
      : Type extends 'object'
        ? Record<string, unknown>
        : Type extends 'array'
          ? unknown[]
          : never;

type FieldTypeOf<Field> = Field extends { readonly type: infer Type } ? Type : never;
type RequiredKeys<Fields> = {
  [K in keyof Fields]: Fields[K] extends { readonly required: true } ? K : never;
}[keyof Fields];
type Flatten<T> = { [K in keyof T]: T[K] } & {};

/**
 * The input a field record describes: `{ type: 'string', required: true }` gives `string`; an
 * optional field is `?` and may also be `null` (the field check lets `null` through when the
 * field is optional; docs/api.md, "createCapability").
 */
export type InputOfFields<Fields> = Flatten<
  { -readonly [K in RequiredKeys<Fields>]: FieldValue<FieldTypeOf<Fields[K]>> } & {
    -readonly [K in Exclude<keyof Fields, RequiredKeys<Fields>>]?: FieldValue<
      FieldTypeOf<Fields[K]>
    > | null;
  }
>;

/** The input type `execute` receives for an `inputSchema`: a Standard Schema's output type, or the field record's. */
export type InferCapabilityInput<Schema> = Schema extends StandardSchemaV1
  ? StandardSchemaV1.InferOutput<Schema>
  : Schema extends CapabilityInputFields
    ? InputOfFields<Schema>
    : unknown;

type FieldTypeNameOf<Value> = 0 extends 1 & Value
  ? CapabilityInputField['type']
  : [Value] extends [string]
    ? 'string'
    : [Value] extends [number]
      ? 'number'
      : [Value] extends [boolean]
        ? 'boolean'
        : [Value] extends [readonly unknown[]]
          ? 'array'
          : [Value] extends [object]
            ? 'object'
            : CapabilityInputField['type'];

/**
 * The schemas that agree with an input type given explicitly (`createCapability<Input>`): a
 * Standard Schema whose output is `Input`, or a field record whose fields have the types of
 * `Input`'s keys (and no other keys). `required` is not compared: a constant written without
 * `as const` has `required: boolean`. `unknown` accepts any schema.
 */
export type CapabilityInputSchemaFor<Input> = unknown extends Input
  ? CapabilityInputSchema
  : | StandardSchemaV1<unknown, Input>
    | {
        readonly [K in keyof Input]?: {
          readonly type: FieldTypeNameOf<NonNullable<Input[K]>>;
          readonly required: boolean;
          readonly description: string;
        };
      };

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
  /**
   * Aborted when the step times out (TimeoutMiddleware), or when its job is cancelled (the
   * reason's `code` is JOB_CANCELLED, docs/api.md "Queued jobs and cancellation").
   */
  readonly signal: AbortSignal;
  /**
   * The key to pass to the systems this step calls so they can drop a duplicate: the step's own
   * `idempotencyKey`, else `<jobId>:<stepId>`; the same every time the step is entered. Set by
   * the runtime on every invocation (optional only for contexts built by hand).
   */
  readonly idempotencyKey?: string;
  /**
   * The effect the capability's `prepare` returned and the step was authorized for: a fresh
   * copy (docs/api.md, "Prepared effects"). Absent for a capability without `prepare`.
   */
  readonly effect?: unknown;
}

/** What a capability's `prepare` receives besides its input (docs/api.md, "Prepared effects"). */
export interface PrepareContext {
  readonly jobId: string;
  readonly stepId: string;
  readonly caller: ExecutionCaller | undefined;
  /** Aborted when the step's `timeoutMs` passes, or when its job is cancelled. */
  readonly signal: AbortSignal;
}

/** A registered unit of work. Prefer `createCapability` over writing this by hand. */
export interface Capability<Input = unknown, Output = unknown> {
  readonly name: string;
  readonly version: string;
  readonly description: string;
  readonly risk: CapabilityRisk;
  readonly inputSchema?: CapabilityInputSchema;
  /** JSON Schema of the result, when it is known (published to MCP clients). A plain object. */
  readonly outputSchema?: Readonly<Record<string, unknown>>;
  /**
   * Called as `execute(input, context)`: two arguments. `createCapability` takes the other form,
   * `execute({ input, context })`; a plain object written that way is refused by `use()` where
   * it can be told (docs/api.md, "Calling conventions").
   */
  execute(input: Input, context: ExecutionContext): Output | Promise<Output>;
  /**
   * Optional: the effect the invocation will cause, as plain JSON data (docs/api.md, "Prepared
   * effects"), computed after the input check and before the authorizer, which decides on it.
   */
  prepare?(input: Input, context: PrepareContext): unknown;
}

/** Public, detached description of a registered capability (docs/api.md, "runtime.listCapabilities"). */
export interface CapabilityDescriptor {
  name: string;
  version: string;
  description: string;
  risk: CapabilityRisk;
  inputSchema: Record<string, CapabilityInputField>;
  /** A copy of the capability's `outputSchema`, when it has one. */
  outputSchema?: Record<string, unknown>;
  /**
   * An outbound MCP tool's definition digest (`sha256:<hex>`), as last listed by its server;
   * absent before the first connection and for every other capability (docs/api.md, "Pinned tools").
   */
  definitionDigest?: string;
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

/** What `createCapability` takes, but `inputSchema` (each overload of createCapability types it). */
export interface CapabilityDefinitionBase<Input = unknown, Output = unknown> {
  name: string;
  version: string;
  description: string;
  risk: CapabilityRisk;
  /** JSON Schema of the result, when it is known (published to MCP clients). A plain object. */
  outputSchema?: Record<string, unknown>;
  /**
   * Fails the step with `Capability execution timed out after <ms>ms` and aborts the signal; also
   * bounds a Standard Schema validation that answers with a promise.
   */
  timeoutMs?: number;
  /**
   * Invokes again after a throw or a time-out (never after a denial or a refused input), each
   * time authorized again, with `capability.retrying` (docs/api.md, "Retries"). `attempts`
   * counts every invocation (an integer from 1 to 100); `backoffMs` (default 0) waits between
   * two. `idempotent: true` is required: the capability must tolerate running twice
   * (`context.idempotencyKey` is the same each time).
   */
  retry?: { attempts: number; backoffMs?: number; idempotent: true };
  /**
   * What one invocation counts under a limit with `cost: true` (docs/api.md, "Limits"): a finite
   * non-negative number. Without it such a limit counts 1.
   */
  cost?: number;
  /** Innermost layers; lifecycle logging and timeout wrap them (docs/api.md, "createCapability"). */
  middleware?: readonly CapabilityMiddleware[];
  /** Logs start, completion and failure through `context.logger`. Default `true`. */
  lifecycleLogging?: boolean;
  /**
   * The effect the invocation will cause, as plain JSON data of at most 64 KiB (docs/api.md,
   * "Prepared effects"): the authorizer decides on it, the record keeps it and `execute` gets a
   * copy as `context.effect`. Called as `prepare(input, context)`, bounded by `timeoutMs`.
   */
  prepare?(input: Input, context: PrepareContext): unknown;
  execute(execution: { input: Input; context: ExecutionContext }): Output | Promise<Output>;
}

/** What `createCapability` takes. */
export interface CapabilityDefinition<
  Input = unknown,
  Output = unknown,
> extends CapabilityDefinitionBase<Input, Output> {
  /**
   * A field record or a Standard Schema v1 object; `execute` receives what it checked. With an
   * explicit `Input`, the schema must agree with it (see CapabilityInputSchemaFor).
   */
  inputSchema?: CapabilityInputSchemaFor<Input>;
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
