/**
 * The process-global capability inventory (docs/api.md, `runtime.use`). One inventory per
 * process, shared by the ESM and the CommonJS builds loaded together: a frozen holder of
 * functions over a private Map, kept on globalThis and created on first use (see processGlobal).
 *
 * Registration snapshots everything the runtime relies on (metadata, the compiled schema and
 * the `execute` function), so mutating a registered capability object later changes nothing.
 */
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
import { processGlobal } from '../process/process-global.js';
import type { Capability, CapabilityModule, CapabilityRisk } from './capability.js';
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

/** Internal record of a registered capability. Frozen; shared by both builds (keep the shape). */
export interface RegisteredCapability {
  readonly name: string;
  readonly version: string;
  readonly description: string;
  readonly risk: CapabilityRisk;
  /** The field record checked at admission and step time (empty for a Standard Schema). */
  readonly schema: CompiledSchema;
  /** A deep-frozen JSON copy of the capability's `outputSchema`, when it has one. */
  readonly outputSchema?: Readonly<Record<string, unknown>>;
  /** The Standard Schema that checks (and may transform) the input, if `inputSchema` is one. */
  readonly standard: StandardInput | undefined;
  /** `createCapability`'s `timeoutMs`: it also bounds an asynchronous validation. */
  readonly timeoutMs: number | undefined;
  /** Frozen `{ name, version, risk }`, handed to authorizers as is. */
  readonly identity: Readonly<{ name: string; version: string; risk: CapabilityRisk }>;
  readonly target: Capability;
  readonly execute: Capability['execute'];
  readonly module: string;
}

const RISKS: ReadonlySet<string> = new Set(['read', 'write', 'destructive']);

/**
 * The process-global inventory: functions over a private Map, in a frozen holder (see
 * processGlobal). Nothing it hands out can change what is registered: records are frozen, lists
 * are fresh arrays, and `add` registers new names only, all or none.
 */
export interface CapabilityInventory {
  get(name: string): RegisteredCapability | undefined;
  has(name: string): boolean;
  /** Every record, in registration order (a fresh array). */
  list(): RegisteredCapability[];
  /** Registers every record or none: throws CAPABILITY_ALREADY_REGISTERED for a taken name. */
  add(records: readonly RegisteredCapability[]): void;
}

// A new key for a new shape: version 1 of this key held the Map itself.
const INVENTORY_KEY = Symbol.for('warrant.capabilityInventory.v2');

/** A frozen copy of a record, so no object handed to `add` stays reachable from the inventory. */
function frozenRecord(record: RegisteredCapability): RegisteredCapability {
  const {
    name,
    version,
    description,
    risk,
    schema,
    outputSchema,
    standard,
    timeoutMs,
    target,
    execute,
    module,
  } = record;
  if (typeof name !== 'string' || !RISKS.has(risk) || typeof execute !== 'function') {
    throw invalid('CAPABILITY_DEFINITION_INVALID', 'A capability record is malformed');
  }
  return Object.freeze({
    name,
    version,
    description,
    risk,
    schema: Object.freeze(
      Array.from(schema, ({ key, type, required, description: text }) =>
        Object.freeze({ key, type, required, description: text }),
      ),
    ),
    ...(outputSchema !== undefined && { outputSchema }),
    standard,
    timeoutMs,
    identity: Object.freeze({ name, version, risk }),
    target,
    execute,
    module,
  });
}

function alreadyRegistered(name: string, existing: RegisteredCapability): TypeError {
  return invalid(
    'CAPABILITY_ALREADY_REGISTERED',
    `Capability ${quoteText(name)} is already registered (version ${quoteText(existing.version)}); names are unique whatever the version`,
  );
}

function createInventory(): CapabilityInventory {
  const records = new Map<string, RegisteredCapability>();
  return {
    get: (name) => (typeof name === 'string' ? records.get(name) : undefined),
    has: (name) => typeof name === 'string' && records.has(name),
    list: () => [...records.values()],
    add(candidates) {
      const staged = new Map<string, RegisteredCapability>();
      for (const candidate of Array.from(candidates)) {
        const record = frozenRecord(candidate);
        const existing = records.get(record.name) ?? staged.get(record.name);
        if (existing !== undefined) throw alreadyRegistered(record.name, existing);
        staged.set(record.name, record);
      }
      for (const [name, record] of staged) records.set(name, record);
    },
  };
}

let inventory: CapabilityInventory | undefined;

/** The shared inventory, created on first use (nothing happens at import). */
export function capabilityInventory(): CapabilityInventory {
  inventory ??= processGlobal(INVENTORY_KEY, createInventory);
  return inventory;
}

function invalid(code: string, message: string): TypeError {
  return createError(TypeError, code, message);
}

type ShapeCode = 'CAPABILITY_MODULE_INVALID' | 'CAPABILITY_DEFINITION_INVALID';

/** A ReadFailure naming `what`: a throwing getter or trap becomes a coded TypeError. */
function failure(code: ShapeCode, what: string): ReadFailure {
  return (problem) => invalid(code, `${what} ${problem}`);
}

/** A non-null, non-array object. */
function isRecord(value: unknown, fail: ReadFailure): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !isArrayValue(value, fail);
}

/** Reads `target[key]` once, as `<what>.<key>` in messages. */
function field(target: object, key: string, code: ShapeCode, what: string): unknown {
  return readField(target, key, failure(code, `${what}.${key}`));
}

const DEFINITION = 'CAPABILITY_DEFINITION_INVALID';
const MODULE = 'CAPABILITY_MODULE_INVALID';

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
    invalid(DEFINITION, `${what}${problem}`),
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
    throw invalid(
      DEFINITION,
      `${what} must be a plain object of field records, got ${describeValue(schema)}`,
    );
  }
  const fields: CompiledField[] = [];
  for (const key of readKeys(schema, failure(DEFINITION, what))) {
    if (key === '__proto__') {
      throw invalid(DEFINITION, `${what} field name "__proto__" is not allowed`);
    }
    const at = `${what}.${boundText(key, 80)}`;
    const record = field(schema, key, DEFINITION, what);
    if (!isRecord(record, failure(DEFINITION, at))) {
      throw invalid(DEFINITION, `${at} must be a field record { type, required, description }`);
    }
    const type = field(record, 'type', DEFINITION, at);
    const required = field(record, 'required', DEFINITION, at);
    const description = field(record, 'description', DEFINITION, at);
    if (typeof type !== 'string' || !FIELD_TYPES.has(type)) {
      throw invalid(
        DEFINITION,
        `${at}.type must be one of string, number, boolean, object, array; got ${describeValue(type)}`,
      );
    }
    if (typeof required !== 'boolean') {
      throw invalid(DEFINITION, `${at}.required must be a boolean, got ${describeValue(required)}`);
    }
    if (typeof description !== 'string') {
      throw invalid(
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
    throw invalid(
      DEFINITION,
      `${what} must be a plain object (JSON Schema), got ${describeValue(schema)}`,
    );
  }
  try {
    return deepFreeze(JSON.parse(JSON.stringify(schema)) as Record<string, unknown>);
  } catch {
    throw invalid(DEFINITION, `${what} must be JSON data (JSON Schema)`);
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
    throw invalid(DEFINITION, `${where} must be an object, got ${describeValue(candidate)}`);
  }
  const name = field(candidate, 'name', DEFINITION, where);
  if (typeof name !== 'string' || name === '') {
    throw invalid(
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
  const outputSchema = copyOutputSchema(field(candidate, 'outputSchema', DEFINITION, label), label);
  if (typeof version !== 'string') {
    throw invalid(DEFINITION, `${label}: version must be a string, got ${describeValue(version)}`);
  }
  if (typeof description !== 'string') {
    throw invalid(
      DEFINITION,
      `${label}: description must be a string, got ${describeValue(description)}`,
    );
  }
  if (typeof risk !== 'string' || !RISKS.has(risk)) {
    throw invalid(
      DEFINITION,
      `${label}: risk must be "read", "write" or "destructive", got ${describeValue(risk)}`,
    );
  }
  if (typeof execute !== 'function') {
    throw invalid(DEFINITION, `${label}: execute must be a function`);
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
    ...(outputSchema !== undefined && { outputSchema }),
    execute: execute as Capability['execute'],
    /** `execute` is written in createCapability's `({ input, context })` form (a best guess). */
    destructures: destructuresExecution(execute),
  };
}

/**
 * Refuses a capability object whose `execute` is written `({ input, context })`, the
 * createCapability form: `use()` calls `execute(input, context)`, so it would find no `input`
 * (docs/api.md, "Calling conventions"). An input with a field named `input` is left alone.
 */
function checkCallingConvention(shape: ReturnType<typeof checkCapabilityShape>, label: string) {
  if (!shape.destructures) return;
  const fields = shape.standard?.fields ?? shape.schema;
  if (fields.some((field) => field.key === 'input')) return;
  throw invalid(
    DEFINITION,
    `${label}: execute takes ({ input, context }), the createCapability() form, but use() calls a capability object as execute(input, context); wrap the definition in createCapability()`,
  );
}

/** Largest number of capabilities (and manifest entries) one module may hold. */
const MAX_MODULE_CAPABILITIES = 100_000;

/**
 * Registers every capability of a module, or none (docs/api.md, `runtime.use`): the whole module
 * is checked before the inventory is touched, and every part of it is read once (a throwing
 * getter or proxy trap is a coded error naming the part). Throws TypeError with
 * CAPABILITY_MODULE_INVALID, CAPABILITY_DEFINITION_INVALID or CAPABILITY_ALREADY_REGISTERED.
 */
export function registerModule(module: CapabilityModule): void {
  if (!isRecord(module, failure(MODULE, 'A capability module'))) {
    throw invalid(
      MODULE,
      `A capability module must be an object { manifest, capabilities }, got ${describeValue(module)}`,
    );
  }
  const manifest = field(module, 'manifest', MODULE, 'module');
  const capabilities = field(module, 'capabilities', MODULE, 'module');
  if (!isRecord(manifest, failure(MODULE, 'module.manifest'))) {
    throw invalid(MODULE, 'A capability module needs a manifest { name, version, capabilities }');
  }
  const moduleName = field(manifest, 'name', MODULE, 'manifest');
  if (typeof moduleName !== 'string' || moduleName === '') {
    throw invalid(
      MODULE,
      `manifest.name must be a non-empty string, got ${describeValue(moduleName)}`,
    );
  }
  const where = `module ${quoteText(moduleName)}`;
  const moduleVersion = field(manifest, 'version', MODULE, `${where}: manifest`);
  if (typeof moduleVersion !== 'string') {
    throw invalid(
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
    throw invalid(MODULE, `${where}: manifest.capabilities must be an array of capability names`);
  }
  const listFail = failure(MODULE, `${where}: capabilities`);
  if (!isArrayValue(capabilities, listFail)) {
    throw invalid(MODULE, `${where}: capabilities must be an array of capabilities`);
  }
  const candidates = readArray(capabilities as unknown[], MAX_MODULE_CAPABILITIES, listFail);
  const declared = new Set<string>(declaredList as string[]);
  const inventory = capabilityInventory();
  const staged = new Map<string, RegisteredCapability>();
  candidates.forEach((candidate: unknown, index: number) => {
    const shape = checkCapabilityShape(candidate, `${where}: capabilities[${index}]`);
    if (!declared.has(shape.name)) {
      throw invalid(
        'CAPABILITY_MODULE_INVALID',
        `${where}: capability ${quoteText(shape.name)} is not declared in manifest.capabilities`,
      );
    }
    checkCallingConvention(shape, `${where}: capabilities[${index}] ${quoteText(shape.name)}`);
    const existing = staged.get(shape.name) ?? inventory.get(shape.name);
    if (existing !== undefined) throw alreadyRegistered(shape.name, existing);
    staged.set(
      shape.name,
      Object.freeze({
        ...shape,
        identity: Object.freeze({ name: shape.name, version: shape.version, risk: shape.risk }),
        target: candidate as Capability,
        module: moduleName,
      }),
    );
  });
  for (const name of declared) {
    if (!staged.has(name)) {
      throw invalid(
        'CAPABILITY_MODULE_INVALID',
        `${where}: manifest declares ${quoteText(name)} but the module provides no such capability`,
      );
    }
  }
  inventory.add([...staged.values()]);
}
