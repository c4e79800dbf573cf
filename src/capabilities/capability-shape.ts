/**
 * The shape checks of what `createCapability()` and `use()` are given (docs/api.md,
 * `runtime.use`): a module and its manifest, a capability record, its input and output schemas
 * and its calling convention. Every part is read once; a malformed one (or a throwing getter or
 * proxy trap) is a TypeError with CAPABILITY_MODULE_INVALID or CAPABILITY_DEFINITION_INVALID
 * naming it (docs/errors.md). The inventory (inventory.ts) registers only what passed them.
 */
import { ErrorCode } from '../errors/error-codes.js';
import { createError } from '../errors/warrant-error.js';
import { boundText, describeValue, quoteText } from '../errors/describe-value.js';
import {
  isArrayValue,
  isPlainObject,
  readArray,
  readField,
  readKeys,
  type ReadFailure,
} from '../values/hostile-reads.js';
import type { Capability, CapabilityRisk } from './capability.js';
import { destructuresExecution } from './calling-convention.js';
import { FIELD_TYPES, type CompiledField, type CompiledSchema } from './input-schema.js';
import { readStandardSchema, standardPropsOf, type StandardInput } from './standard-input.js';
import { timeoutProblem } from './timeout-middleware.js';

/**
 * Where `createCapability` keeps its `timeoutMs` on the capability it builds (a non-enumerable
 * property, one key for both builds), so registration knows the bound of an asynchronous input
 * validation (docs/decisions.md, "Standard Schema inputs").
 */
export const TIMEOUT_KEY: unique symbol = Symbol.for('warrant.capability.timeoutMs');

/**
 * Where `createCapability` keeps its checked `retry` (docs/api.md, "Retries"), as it keeps
 * `timeoutMs`: a non-enumerable property, one key for both builds.
 */
export const RETRY_KEY: unique symbol = Symbol.for('warrant.capability.retry');

/** A checked `retry`: every invocation counted (the first included), the pause between two. */
export interface RetryPolicy {
  readonly attempts: number;
  readonly backoffMs: number;
}

/** The `retry` createCapability left on a capability; anything else is none. */
function retryOf(candidate: object): RetryPolicy | undefined {
  try {
    const retry: unknown = (candidate as { [RETRY_KEY]?: unknown })[RETRY_KEY];
    return typeof retry === 'object' && retry !== null && Object.isFrozen(retry)
      ? (retry as RetryPolicy)
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Where `createCapability` keeps its checked `cost` (docs/api.md, "Limits"), as it keeps
 * `retry`: a non-enumerable property, one key for both builds.
 */
export const COST_KEY: unique symbol = Symbol.for('warrant.capability.cost');

/** A declared cost: a finite non-negative number. */
export function isCost(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0;
}

/** The `cost` createCapability left on a capability; anything else is none. */
function costOf(candidate: object): number | undefined {
  try {
    const cost: unknown = (candidate as { [COST_KEY]?: unknown })[COST_KEY];
    return isCost(cost) ? cost : undefined;
  } catch {
    return undefined;
  }
}

/** The risks a capability may declare. */
export const RISKS: ReadonlySet<string> = new Set(['read', 'write', 'destructive']);

/** A coded TypeError of a malformed module or capability. */
function shapeError(code: ShapeCode, message: string): TypeError {
  return createError(TypeError, code, message);
}

type ShapeCode =
  typeof ErrorCode.CAPABILITY_MODULE_INVALID | typeof ErrorCode.CAPABILITY_DEFINITION_INVALID;

/** A ReadFailure naming `what`: a throwing getter or trap becomes a coded TypeError. */
function failure(code: ShapeCode, what: string): ReadFailure {
  return (problem) => shapeError(code, `${what} ${problem}`);
}

/** A non-null, non-array object. */
function isRecord(value: unknown, fail: ReadFailure): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !isArrayValue(value, fail);
}

/** Reads `target[key]` once, as `<what>.<key>` in messages. */
function field(target: object, key: string, code: ShapeCode, what: string): unknown {
  return readField(target, key, failure(code, `${what}.${key}`));
}

const DEFINITION = ErrorCode.CAPABILITY_DEFINITION_INVALID;
const MODULE = ErrorCode.CAPABILITY_MODULE_INVALID;

/** A checked `inputSchema`: a compiled field record, or a Standard Schema (then `fields` is empty). */
export interface CheckedInputSchema {
  readonly fields: CompiledSchema;
  readonly standard: StandardInput | undefined;
}

const NO_FIELDS: CompiledSchema = Object.freeze([]);

/**
 * Checks an `inputSchema`: a Standard Schema v1 object (anything with `~standard`, read once) or
 * a field record. Throws CAPABILITY_DEFINITION_INVALID naming what is wrong.
 */
export function checkInputSchema(schema: unknown, where: string): CheckedInputSchema {
  const what = `${where}: inputSchema`;
  const props = standardPropsOf(schema, failure(DEFINITION, `${what}['~standard']`));
  if (props === undefined) return { fields: compileSchema(schema, where), standard: undefined };
  const standard = readStandardSchema(schema as object, props, (problem) =>
    shapeError(DEFINITION, `${what}${problem}`),
  );
  return { fields: NO_FIELDS, standard };
}

/**
 * Checks a schema record and compiles it; throws CAPABILITY_DEFINITION_INVALID. The schema must
 * be a plain object (or null-prototype): a Map, a Date, an array or a class instance has no own
 * enumerable field records and would register as "no schema", skipping every input check.
 */
export function compileSchema(schema: unknown, where: string): CompiledSchema {
  if (schema === undefined) return [];
  const what = `${where}: inputSchema`;
  if (!isPlainObject(schema, failure(DEFINITION, what))) {
    throw shapeError(
      DEFINITION,
      `${what} must be a plain object of field records, got ${describeValue(schema)}`,
    );
  }
  const fields: CompiledField[] = [];
  for (const key of readKeys(schema, failure(DEFINITION, what))) {
    if (key === '__proto__') {
      throw shapeError(DEFINITION, `${what} field name "__proto__" is not allowed`);
    }
    const at = `${what}.${boundText(key, 80)}`;
    const record = field(schema, key, DEFINITION, what);
    if (!isRecord(record, failure(DEFINITION, at))) {
      throw shapeError(DEFINITION, `${at} must be a field record { type, required, description }`);
    }
    const type = field(record, 'type', DEFINITION, at);
    const required = field(record, 'required', DEFINITION, at);
    const description = field(record, 'description', DEFINITION, at);
    if (typeof type !== 'string' || !FIELD_TYPES.has(type)) {
      throw shapeError(
        DEFINITION,
        `${at}.type must be one of string, number, boolean, object, array; got ${describeValue(type)}`,
      );
    }
    if (typeof required !== 'boolean') {
      throw shapeError(
        DEFINITION,
        `${at}.required must be a boolean, got ${describeValue(required)}`,
      );
    }
    if (typeof description !== 'string') {
      throw shapeError(
        DEFINITION,
        `${at}.description must be a string, got ${describeValue(description)}`,
      );
    }
    fields.push(Object.freeze({ key, type: type as CompiledField['type'], required, description }));
  }
  return Object.freeze(fields);
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

/**
 * Checks an `outputSchema` (a plain object of JSON Schema, published to MCP clients) and returns
 * a deep-frozen JSON copy; throws CAPABILITY_DEFINITION_INVALID.
 */
export function copyOutputSchema(
  schema: unknown,
  where: string,
): Readonly<Record<string, unknown>> | undefined {
  if (schema === undefined) return undefined;
  const what = `${where}: outputSchema`;
  if (!isPlainObject(schema, failure(DEFINITION, what))) {
    throw shapeError(
      DEFINITION,
      `${what} must be a plain object (JSON Schema), got ${describeValue(schema)}`,
    );
  }
  try {
    return deepFreeze(JSON.parse(JSON.stringify(schema)) as Record<string, unknown>);
  } catch {
    throw shapeError(DEFINITION, `${what} must be JSON data (JSON Schema)`);
  }
}

/** The `timeoutMs` createCapability left on a capability; anything else is no timeout. */
function timeoutOf(candidate: object): number | undefined {
  try {
    const ms: unknown = (candidate as { [TIMEOUT_KEY]?: unknown })[TIMEOUT_KEY];
    return timeoutProblem(ms) === undefined ? (ms as number) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Checks the well-formedness shared by `createCapability` and `use()`. Each field is read exactly
 * once; the values read here are what gets registered. A getter or proxy trap that throws is
 * CAPABILITY_DEFINITION_INVALID naming the field.
 */
export function checkCapabilityShape(candidate: unknown, where: string) {
  if (!isRecord(candidate, failure(DEFINITION, where))) {
    throw shapeError(DEFINITION, `${where} must be an object, got ${describeValue(candidate)}`);
  }
  const name = field(candidate, 'name', DEFINITION, where);
  if (typeof name !== 'string' || name === '') {
    throw shapeError(
      DEFINITION,
      `${where}: name must be a non-empty string, got ${describeValue(name)}`,
    );
  }
  const label = `${where} ${quoteText(name)}`;
  const version = field(candidate, 'version', DEFINITION, label);
  const description = field(candidate, 'description', DEFINITION, label);
  const risk = field(candidate, 'risk', DEFINITION, label);
  const inputSchema = field(candidate, 'inputSchema', DEFINITION, label);
  const execute = field(candidate, 'execute', DEFINITION, label);
  const prepare = field(candidate, 'prepare', DEFINITION, label);
  const outputSchema = copyOutputSchema(field(candidate, 'outputSchema', DEFINITION, label), label);
  if (typeof version !== 'string') {
    throw shapeError(
      DEFINITION,
      `${label}: version must be a string, got ${describeValue(version)}`,
    );
  }
  if (typeof description !== 'string') {
    throw shapeError(
      DEFINITION,
      `${label}: description must be a string, got ${describeValue(description)}`,
    );
  }
  if (typeof risk !== 'string' || !RISKS.has(risk)) {
    throw shapeError(
      DEFINITION,
      `${label}: risk must be "read", "write" or "destructive", got ${describeValue(risk)}`,
    );
  }
  if (typeof execute !== 'function') {
    throw shapeError(DEFINITION, `${label}: execute must be a function`);
  }
  if (prepare !== undefined && typeof prepare !== 'function') {
    throw shapeError(
      DEFINITION,
      `${label}: prepare must be a function, got ${describeValue(prepare)}`,
    );
  }
  const { fields, standard } = checkInputSchema(inputSchema, label);
  return {
    name,
    version,
    description,
    risk: risk as CapabilityRisk,
    schema: fields,
    standard,
    timeoutMs: timeoutOf(candidate),
    retry: retryOf(candidate),
    cost: costOf(candidate),
    ...(outputSchema !== undefined && { outputSchema }),
    execute: execute as Capability['execute'],
    /** docs/api.md, "Prepared effects": called as `prepare(input, context)`, or absent. */
    prepare: prepare as Capability['prepare'],
    /** `execute` is written in createCapability's `({ input, context })` form (a best guess). */
    destructures: destructuresExecution(execute),
  };
}

/**
 * Refuses a capability object whose `execute` is written `({ input, context })`, the
 * createCapability form: `use()` calls `execute(input, context)`, so it would find no `input`
 * (docs/api.md, "Calling conventions"). An input with a field named `input` is left alone.
 */
export function checkCallingConvention(
  shape: ReturnType<typeof checkCapabilityShape>,
  label: string,
) {
  if (!shape.destructures) return;
  const fields = shape.standard?.fields ?? shape.schema;
  if (fields.some((field) => field.key === 'input')) return;
  throw shapeError(
    DEFINITION,
    `${label}: execute takes ({ input, context }), the createCapability() form, but use() calls a capability object as execute(input, context); wrap the definition in createCapability()`,
  );
}

/** Largest number of capabilities (and manifest entries) one module may hold. */
const MAX_MODULE_CAPABILITIES = 100_000;

/** A module's parts, checked: its name, how messages name it, what it declares and provides. */
export interface ModuleShape {
  readonly moduleName: string;
  readonly where: string;
  readonly declaredList: readonly unknown[];
  readonly candidates: readonly unknown[];
}

/**
 * Checks a module and its manifest (docs/api.md, `runtime.use`), each part read once: throws
 * CAPABILITY_MODULE_INVALID naming the part. Its capabilities are checked one by one at registration.
 */
export function checkModuleShape(module: unknown): ModuleShape {
  if (!isRecord(module, failure(MODULE, 'A capability module'))) {
    throw shapeError(
      MODULE,
      `A capability module must be an object { manifest, capabilities }, got ${describeValue(module)}`,
    );
  }
  const manifest = field(module, 'manifest', MODULE, 'module');
  const capabilities = field(module, 'capabilities', MODULE, 'module');
  if (!isRecord(manifest, failure(MODULE, 'module.manifest'))) {
    throw shapeError(
      MODULE,
      'A capability module needs a manifest { name, version, capabilities }',
    );
  }
  const moduleName = field(manifest, 'name', MODULE, 'manifest');
  if (typeof moduleName !== 'string' || moduleName === '') {
    throw shapeError(
      MODULE,
      `manifest.name must be a non-empty string, got ${describeValue(moduleName)}`,
    );
  }
  const where = `module ${quoteText(moduleName)}`;
  const moduleVersion = field(manifest, 'version', MODULE, `${where}: manifest`);
  if (typeof moduleVersion !== 'string') {
    throw shapeError(
      MODULE,
      `${where}: manifest.version must be a string, got ${describeValue(moduleVersion)}`,
    );
  }
  const declaredField = field(manifest, 'capabilities', MODULE, `${where}: manifest`);
  const declaredFail = failure(MODULE, `${where}: manifest.capabilities`);
  const declaredList = isArrayValue(declaredField, declaredFail)
    ? readArray(declaredField as unknown[], MAX_MODULE_CAPABILITIES, declaredFail)
    : undefined;
  if (declaredList === undefined || !declaredList.every((entry) => typeof entry === 'string')) {
    throw shapeError(
      MODULE,
      `${where}: manifest.capabilities must be an array of capability names`,
    );
  }
  const listFail = failure(MODULE, `${where}: capabilities`);
  if (!isArrayValue(capabilities, listFail)) {
    throw shapeError(MODULE, `${where}: capabilities must be an array of capabilities`);
  }
  const candidates = readArray(capabilities as unknown[], MAX_MODULE_CAPABILITIES, listFail);
  return { moduleName, where, declaredList, candidates };
}
