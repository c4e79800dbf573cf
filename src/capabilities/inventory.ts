/**
 * The process-global capability inventory (docs/api.md, `runtime.use`). One inventory per
 * process, shared by the ESM and the CommonJS builds loaded together: a frozen holder of
 * functions over a private Map, kept on globalThis and created on first use (see processGlobal).
 *
 * Registration snapshots everything the runtime relies on (metadata, the compiled schema and
 * the `execute` function), so mutating a registered capability object later changes nothing.
 */
import type { RetryPolicy } from './capability-shape.js';
import { ErrorCode } from '../errors/error-codes.js';
import { quoteText } from '../errors/describe-value.js';
import { createError } from '../errors/warrant-error.js';
import { processGlobal } from '../process/process-global.js';
import type { Capability, CapabilityModule, CapabilityRisk } from './capability.js';
import {
  checkCallingConvention,
  checkCapabilityShape,
  checkModuleShape,
  RISKS,
} from './capability-shape.js';
import { boundedExecute, plainOptions } from './declared-options.js';
import type { CompiledSchema } from './input-schema.js';
import type { StandardInput } from './standard-input.js';

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
  /** `createCapability`'s `retry` (docs/api.md, "Retries"); undefined: one invocation. */
  readonly retry: RetryPolicy | undefined;
  /** `createCapability`'s `cost` (docs/api.md, "Limits"); undefined: a cost limit counts 1. */
  readonly cost?: number | undefined;
  /** Frozen `{ name, version, risk }`, handed to authorizers as is. */
  readonly identity: Readonly<{ name: string; version: string; risk: CapabilityRisk }>;
  readonly target: Capability;
  readonly execute: Capability['execute'];
  /** The capability's `prepare`, taken at registration (docs/api.md, "Prepared effects"). */
  readonly prepare: Capability['prepare'];
  readonly module: string;
}

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
    retry,
    cost,
    target,
    execute,
    prepare,
    module,
  } = record;
  if (
    typeof name !== 'string' ||
    !RISKS.has(risk) ||
    typeof execute !== 'function' ||
    (prepare !== undefined && typeof prepare !== 'function')
  ) {
    throw createError(
      TypeError,
      ErrorCode.CAPABILITY_DEFINITION_INVALID,
      'A capability record is malformed',
    );
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
    retry,
    ...(cost !== undefined && { cost }),
    identity: Object.freeze({ name, version, risk }),
    target,
    execute,
    prepare,
    module,
  });
}

function alreadyRegistered(name: string, existing: RegisteredCapability): TypeError {
  return createError(
    TypeError,
    ErrorCode.CAPABILITY_ALREADY_REGISTERED,
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

/**
 * Registers every capability of a module, or none (docs/api.md, `runtime.use`): the whole module
 * is checked before the inventory is touched, and every part of it is read once (a throwing
 * getter or proxy trap is a coded error naming the part). Throws TypeError with
 * CAPABILITY_MODULE_INVALID, CAPABILITY_DEFINITION_INVALID or CAPABILITY_ALREADY_REGISTERED.
 */
export function registerModule(module: CapabilityModule): void {
  const { moduleName, where, declaredList, candidates } = checkModuleShape(module);
  const declared = new Set<string>(declaredList as string[]);
  const inventory = capabilityInventory();
  const staged = new Map<string, RegisteredCapability>();
  candidates.forEach((candidate: unknown, index: number) => {
    const shape = checkCapabilityShape(candidate, `${where}: capabilities[${index}]`);
    if (!declared.has(shape.name)) {
      throw createError(
        TypeError,
        ErrorCode.CAPABILITY_MODULE_INVALID,
        `${where}: capability ${quoteText(shape.name)} is not declared in manifest.capabilities`,
      );
    }
    const label = `${where}: capabilities[${index}] ${quoteText(shape.name)}`;
    checkCallingConvention(shape, label);
    // A capability object's own timeoutMs, retry and cost, as createCapability checks them.
    const plain = plainOptions(candidate as object, label);
    const existing = staged.get(shape.name) ?? inventory.get(shape.name);
    if (existing !== undefined) throw alreadyRegistered(shape.name, existing);
    const identity = Object.freeze({ name: shape.name, version: shape.version, risk: shape.risk });
    staged.set(
      shape.name,
      Object.freeze({
        ...shape,
        timeoutMs: plain.timeoutMs ?? shape.timeoutMs,
        retry: plain.retry ?? shape.retry,
        cost: plain.cost ?? shape.cost,
        execute:
          plain.timeoutMs === undefined
            ? shape.execute
            : boundedExecute(shape.execute, plain.timeoutMs, identity),
        identity,
        target: candidate as Capability,
        module: moduleName,
      }),
    );
  });
  for (const name of declared) {
    if (!staged.has(name)) {
      throw createError(
        TypeError,
        ErrorCode.CAPABILITY_MODULE_INVALID,
        `${where}: manifest declares ${quoteText(name)} but the module provides no such capability`,
      );
    }
  }
  inventory.add([...staged.values()]);
}
