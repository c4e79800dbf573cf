/**
 * The process-global capability inventory (docs/api.md, `runtime.use`). One inventory per
 * process, shared by the ESM and the CommonJS builds loaded together: a frozen holder of
 * functions over a private Map, kept on globalThis and created on first use (see processGlobal).
 *
 * Registration snapshots everything the runtime relies on (metadata, the compiled schema and
 * the `execute` function), so mutating a registered capability object later changes nothing.
 */
import { createError } from '../errors/warrant-error.js';
import { describeValue, quoteText } from '../errors/describe-value.js';
import { processGlobal } from '../errors/process-global.js';
import type { Capability, CapabilityModule, CapabilityRisk } from './capability.js';
import { FIELD_TYPES, type CompiledField, type CompiledSchema } from './input-schema.js';

/** Internal record of a registered capability. Frozen; shared by both builds (keep the shape). */
export interface RegisteredCapability {
  readonly name: string;
  readonly version: string;
  readonly description: string;
  readonly risk: CapabilityRisk;
  readonly schema: CompiledSchema;
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
  const { name, version, description, risk, schema, target, execute, module } = record;
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

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Checks a schema record and compiles it; throws CAPABILITY_DEFINITION_INVALID. */
export function compileSchema(schema: unknown, where: string): CompiledSchema {
  if (schema === undefined) return [];
  if (!isRecord(schema)) {
    throw invalid(
      'CAPABILITY_DEFINITION_INVALID',
      `${where}: inputSchema must be an object of field records, got ${describeValue(schema)}`,
    );
  }
  const fields: CompiledField[] = [];
  for (const key of Object.keys(schema)) {
    if (key === '__proto__') {
      throw invalid(
        'CAPABILITY_DEFINITION_INVALID',
        `${where}: inputSchema field name "__proto__" is not allowed`,
      );
    }
    const field = schema[key];
    if (!isRecord(field)) {
      throw invalid(
        'CAPABILITY_DEFINITION_INVALID',
        `${where}: inputSchema.${key} must be a field record { type, required, description }`,
      );
    }
    const { type, required, description } = field;
    if (typeof type !== 'string' || !FIELD_TYPES.has(type)) {
      throw invalid(
        'CAPABILITY_DEFINITION_INVALID',
        `${where}: inputSchema.${key}.type must be one of string, number, boolean, object, array; got ${describeValue(type)}`,
      );
    }
    if (typeof required !== 'boolean') {
      throw invalid(
        'CAPABILITY_DEFINITION_INVALID',
        `${where}: inputSchema.${key}.required must be a boolean, got ${describeValue(required)}`,
      );
    }
    if (typeof description !== 'string') {
      throw invalid(
        'CAPABILITY_DEFINITION_INVALID',
        `${where}: inputSchema.${key}.description must be a string, got ${describeValue(description)}`,
      );
    }
    fields.push(Object.freeze({ key, type: type as CompiledField['type'], required, description }));
  }
  return Object.freeze(fields);
}

/** Checks the well-formedness shared by `createCapability` and `use()`. */
export function checkCapabilityShape(candidate: unknown, where: string) {
  if (!isRecord(candidate)) {
    throw invalid(
      'CAPABILITY_DEFINITION_INVALID',
      `${where} must be an object, got ${describeValue(candidate)}`,
    );
  }
  // Each field is read exactly once; the values read here are what gets registered.
  const { name, version, description, risk, inputSchema, execute } = candidate;
  if (typeof name !== 'string' || name === '') {
    throw invalid(
      'CAPABILITY_DEFINITION_INVALID',
      `${where}: name must be a non-empty string, got ${describeValue(name)}`,
    );
  }
  const label = `${where} ${JSON.stringify(name)}`;
  if (typeof version !== 'string') {
    throw invalid(
      'CAPABILITY_DEFINITION_INVALID',
      `${label}: version must be a string, got ${describeValue(version)}`,
    );
  }
  if (typeof description !== 'string') {
    throw invalid(
      'CAPABILITY_DEFINITION_INVALID',
      `${label}: description must be a string, got ${describeValue(description)}`,
    );
  }
  if (typeof risk !== 'string' || !RISKS.has(risk)) {
    throw invalid(
      'CAPABILITY_DEFINITION_INVALID',
      `${label}: risk must be "read", "write" or "destructive", got ${describeValue(risk)}`,
    );
  }
  if (typeof execute !== 'function') {
    throw invalid('CAPABILITY_DEFINITION_INVALID', `${label}: execute must be a function`);
  }
  const schema = compileSchema(inputSchema, label);
  return {
    name,
    version,
    description,
    risk: risk as CapabilityRisk,
    schema,
    execute: execute as Capability['execute'],
  };
}

/**
 * Registers every capability of a module, or none (API.md §5): the whole module is checked
 * before the inventory is touched. Throws TypeError with CAPABILITY_MODULE_INVALID,
 * CAPABILITY_DEFINITION_INVALID or CAPABILITY_ALREADY_REGISTERED.
 */
export function registerModule(module: CapabilityModule): void {
  if (!isRecord(module)) {
    throw invalid(
      'CAPABILITY_MODULE_INVALID',
      `A capability module must be an object { manifest, capabilities }, got ${describeValue(module)}`,
    );
  }
  const { manifest, capabilities } = module as unknown as Record<string, unknown>;
  if (!isRecord(manifest)) {
    throw invalid(
      'CAPABILITY_MODULE_INVALID',
      'A capability module needs a manifest { name, version, capabilities }',
    );
  }
  const moduleName: unknown = manifest.name;
  if (typeof moduleName !== 'string' || moduleName === '') {
    throw invalid(
      'CAPABILITY_MODULE_INVALID',
      `manifest.name must be a non-empty string, got ${describeValue(moduleName)}`,
    );
  }
  const where = `module ${JSON.stringify(moduleName)}`;
  if (typeof manifest.version !== 'string') {
    throw invalid(
      'CAPABILITY_MODULE_INVALID',
      `${where}: manifest.version must be a string, got ${describeValue(manifest.version)}`,
    );
  }
  const declaredList: unknown = manifest.capabilities;
  if (!Array.isArray(declaredList) || !declaredList.every((entry) => typeof entry === 'string')) {
    throw invalid(
      'CAPABILITY_MODULE_INVALID',
      `${where}: manifest.capabilities must be an array of capability names`,
    );
  }
  if (!Array.isArray(capabilities)) {
    throw invalid(
      'CAPABILITY_MODULE_INVALID',
      `${where}: capabilities must be an array of capabilities`,
    );
  }
  const declared = new Set<string>(declaredList as string[]);
  const inventory = capabilityInventory();
  const staged = new Map<string, RegisteredCapability>();
  capabilities.forEach((candidate: unknown, index: number) => {
    const shape = checkCapabilityShape(candidate, `${where}: capabilities[${index}]`);
    if (!declared.has(shape.name)) {
      throw invalid(
        'CAPABILITY_MODULE_INVALID',
        `${where}: capability ${JSON.stringify(shape.name)} is not declared in manifest.capabilities`,
      );
    }
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
        `${where}: manifest declares ${JSON.stringify(name)} but the module provides no such capability`,
      );
    }
  }
  inventory.add([...staged.values()]);
}
