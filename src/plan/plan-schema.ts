/**
 * The JSON Schema of an admissible plan (docs/api.md, "runtime.planSchema"): draft 2020-12, one
 * `oneOf` branch per registered capability, each field of its input also allowed to be a result
 * reference. A planner (a language model) writes its plan against it; admission still decides,
 * and reports what no schema can say (unique ids, references to earlier steps only).
 *
 * Deterministic: the same registry gives the same bytes. Built from the frozen registration
 * records only (no capability code runs), and cached until the inventory grows (it never
 * shrinks and a name keeps its registration, docs/api.md "runtime.use").
 */
import type { CapabilityDescriptor } from '../capabilities/capability.js';
import { listCapabilities } from '../capabilities/descriptors.js';
import type { CompiledSchema } from '../capabilities/input-schema.js';
import { capabilityInventory, type RegisteredCapability } from '../capabilities/inventory.js';
import { describeValue } from '../errors/describe-value.js';
import { ErrorCode } from '../errors/error-codes.js';
import { createError } from '../errors/warrant-error.js';
import type { PlanVersion } from './execution-plan.js';
import { BOUND_TYPES, MAX_PATTERN_CHARS } from './bounds.js';
import { KNOWN_PLAN_VERSIONS } from './plan-versions.js';
import { MAX_REFERENCE_TEXT_CHARS } from './references.js';

/** Options of `runtime.planSchema(options?)`. */
export interface PlanSchemaOptions {
  /** Which registered capabilities the schema offers. Default: all of them. */
  include?: (capability: CapabilityDescriptor) => boolean;
  /** The plan version the schema describes: one the runtime admits. Default: the newest. */
  version?: PlanVersion;
}

/** A JSON Schema object (JSON data only). */
export type JsonSchema = Record<string, unknown>;

export const PLAN_SCHEMA_DIALECT = 'https://json-schema.org/draft/2020-12/schema';

/** Where the plan schema defines a result reference, once (every field points there). */
const REFERENCE = '#/$defs/resultReference';

/** Where the plan schema defines a bound, once: it nests (`items`, `properties`). */
const BOUND = '#/$defs/bound';

/** The JSON Schema subset a bound may use (docs/api.md, "Bounds"), as a schema. */
function boundSchema(): JsonSchema {
  const number = { type: 'number' };
  const length = { type: 'integer', minimum: 0 };
  const typeName = { enum: [...BOUND_TYPES] };
  return {
    type: 'object',
    description:
      'What an input field may hold, in a JSON Schema subset; checked on the resolved input when a plan approval is used',
    properties: {
      type: {
        anyOf: [typeName, { type: 'array', items: typeName, minItems: 1, uniqueItems: true }],
      },
      const: {},
      enum: { type: 'array', minItems: 1 },
      minimum: number,
      exclusiveMinimum: number,
      maximum: number,
      exclusiveMaximum: number,
      minLength: length,
      maxLength: length,
      pattern: { type: 'string', maxLength: MAX_PATTERN_CHARS },
      maxItems: length,
      items: { $ref: BOUND },
      required: { type: 'array', items: { type: 'string' }, uniqueItems: true },
      properties: { type: 'object', additionalProperties: { $ref: BOUND } },
    },
    additionalProperties: false,
  };
}

/** A 2.0 step's `bounds`: on the declared fields of a field record, else on any field. */
function stepBoundsSchema(record: RegisteredCapability): JsonSchema {
  const description = "Bounds on the step's top-level input fields (plan approvals)";
  if (record.standard !== undefined || record.schema.length === 0)
    return { type: 'object', description, additionalProperties: { $ref: BOUND } };
  const properties: JsonSchema = {};
  for (const field of record.schema) properties[field.key] = { $ref: BOUND };
  return { type: 'object', description, properties, additionalProperties: false };
}

/** What a result reference looks like to a schema: an object whose only key is `$ref`. */
function referenceSchema(): JsonSchema {
  return {
    type: 'object',
    description: "An earlier step's result, or a value inside it: steps.<stepId>.result[.<key>...]",
    properties: {
      $ref: {
        type: 'string',
        pattern: '^steps\\..+\\.result(\\..+)?$',
        maxLength: MAX_REFERENCE_TEXT_CHARS,
      },
    },
    required: ['$ref'],
    additionalProperties: false,
  };
}

/** A field's schema, or a result reference in its place. */
function orReference(field: unknown, description?: string): JsonSchema {
  return {
    ...(description !== undefined && description !== '' && { description }),
    anyOf: [field, { $ref: REFERENCE }],
  };
}

/** A field record as JSON Schema; a required string may not be empty (admission says so). */
function fieldRecordSchema(fields: CompiledSchema, strict: boolean): JsonSchema {
  const properties: JsonSchema = {};
  const required: string[] = [];
  for (const field of fields) {
    const type: JsonSchema = { type: field.type };
    if (field.required && field.type === 'string') type.minLength = 1;
    properties[field.key] = orReference(type, field.description);
    if (field.required) required.push(field.key);
  }
  return {
    type: 'object',
    properties,
    ...(required.length > 0 && { required }),
    ...(strict && { additionalProperties: false }),
  };
}

function isJsonObject(value: unknown): value is JsonSchema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** True when a vendor schema points inside itself (`$ref: '#...'`). */
function hasLocalReference(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(hasLocalReference);
  if (!isJsonObject(value)) return false;
  for (const [key, inner] of Object.entries(value)) {
    if (key === '$ref' && typeof inner === 'string' && inner.startsWith('#')) return true;
    if (hasLocalReference(inner)) return true;
  }
  return false;
}

/** A copy of `value` with every local `$ref` (`#...`) moved under `base` (`#/$defs/<key>`). */
function rebased(value: unknown, base: string): unknown {
  if (Array.isArray(value)) return value.map((item) => rebased(item, base));
  if (!isJsonObject(value)) return value;
  const copy: JsonSchema = {};
  for (const [key, inner] of Object.entries(value)) {
    copy[key] =
      key === '$ref' && typeof inner === 'string' && inner.startsWith('#')
        ? `${base}${inner.slice(1)}`
        : rebased(inner, base);
  }
  return copy;
}

/** A JSON pointer segment as it sits in a URI fragment (RFC 6901, sections 4 and 6). */
function pointerSegment(key: string): string {
  return encodeURIComponent(key.replaceAll('~', '~0').replaceAll('/', '~1'));
}

/**
 * The vendor's JSON Schema of a Standard Schema input (taken at registration), each top-level
 * property also allowed to be a reference. It keeps its own `additionalProperties`: a Standard
 * Schema decides for itself. `$schema` and `$id` are left out (the plan schema is the document);
 * its own pointers are moved under `base` first, when it is kept at `base`.
 */
function vendorSchema(vendor: Readonly<JsonSchema>, base: string | undefined): JsonSchema {
  const copy = structuredClone(vendor) as JsonSchema;
  delete copy.$schema;
  delete copy.$id;
  const rest = base === undefined ? copy : (rebased(copy, base) as JsonSchema);
  if (!isJsonObject(rest.properties)) return rest;
  const properties: JsonSchema = {};
  for (const [key, property] of Object.entries(rest.properties)) {
    properties[key] = orReference(property);
  }
  return { ...rest, properties };
}

/** One capability's `oneOf` branch, and the definition its input needs, if any. */
interface Branch {
  readonly schema: JsonSchema;
  readonly definition?: readonly [string, JsonSchema];
}

function inputRequired(record: RegisteredCapability): boolean {
  // A Standard Schema is asked about an absent input too; a field record only when a field is required.
  return record.standard !== undefined || record.schema.some((field) => field.required);
}

function buildBranch(record: RegisteredCapability, version: PlanVersion): Branch {
  const strict = version !== '1.0';
  const vendor = record.standard?.jsonSchema;
  let input: JsonSchema;
  let definition: readonly [string, JsonSchema] | undefined;
  if (vendor !== undefined) {
    // A vendor schema that points inside itself is kept whole in `$defs`, its pointers moved there.
    if (hasLocalReference(vendor)) {
      const key = `input:${record.name}`;
      const base = `#/$defs/${pointerSegment(key)}`;
      definition = [key, vendorSchema(vendor, base)];
      input = { $ref: base };
    } else {
      input = vendorSchema(vendor, undefined);
    }
  } else if (record.standard !== undefined || record.schema.length === 0) {
    // No JSON Schema to offer: admission (or the Standard Schema at step time) decides.
    input = {};
  } else {
    input = fieldRecordSchema(record.schema, strict);
  }
  const properties: JsonSchema = {
    id: { type: 'string', minLength: 1 },
    capability: { const: record.name },
    capabilityVersion: { const: record.version },
    input,
    // The other step fields admission takes; `bounds` in a 2.0 plan only (docs/api.md, "Bounds").
    ...(strict && { bounds: stepBoundsSchema(record) }),
    reason: { type: 'string' },
    idempotencyKey: { type: 'string' },
  };
  const required = ['id', 'capability'];
  if (inputRequired(record)) required.push('input');
  const schema: JsonSchema = {
    type: 'object',
    description: `${record.description} (risk: ${record.risk})`,
    properties,
    required,
    // docs/api.md, "Plan version 2.0": a 2.0 step takes the declared keys only.
    ...(strict && { additionalProperties: false }),
  };
  return definition === undefined ? { schema } : { schema, definition };
}

/** Branches of registered capabilities, per version: a record never changes once registered. */
const branches = new Map<string, Branch>();

function branchOf(record: RegisteredCapability, version: PlanVersion): Branch {
  const key = `${version}\u0000${record.name}`;
  let branch = branches.get(key);
  if (branch === undefined) {
    branch = buildBranch(record, version);
    branches.set(key, branch);
  }
  return branch;
}

function assemble(
  records: readonly RegisteredCapability[],
  version: PlanVersion,
  maxSteps: number,
): JsonSchema {
  const oneOf: JsonSchema[] = [];
  const definitions: JsonSchema = { resultReference: referenceSchema() };
  if (version !== '1.0') definitions.bound = boundSchema();
  for (const record of records) {
    const branch = branchOf(record, version);
    oneOf.push(branch.schema);
    if (branch.definition !== undefined) definitions[branch.definition[0]] = branch.definition[1];
  }
  return {
    $schema: PLAN_SCHEMA_DIALECT,
    title: 'Warrant execution plan',
    description:
      'A plan of steps run in order, each a registered capability and its input; an input field may hold a result reference to an earlier step.',
    type: 'object',
    properties: {
      version: { const: version },
      goal: { type: 'string', description: 'What the plan is for' },
      // Each step: one capability, its id unique within the plan (admission checks that).
      steps: {
        type: 'array',
        minItems: 1,
        maxItems: maxSteps,
        // No capability offered: no step is admissible.
        items: oneOf.length === 0 ? false : { oneOf },
      },
    },
    required: ['version', 'steps'],
    $defs: definitions,
  };
}

/** The whole schema's JSON text per version and step bound, with the inventory size it was built for. */
const whole = new Map<string, { readonly size: number; readonly text: string }>();

function invalid(message: string): TypeError {
  return createError(TypeError, ErrorCode.PLAN_SCHEMA_OPTIONS_INVALID, message);
}

/** The newest of the versions a runtime admits (KNOWN_PLAN_VERSIONS is oldest first). */
export function newestVersion(accepted: readonly PlanVersion[]): PlanVersion {
  let newest: PlanVersion = accepted[0] ?? '1.0';
  for (const version of accepted)
    if (KNOWN_PLAN_VERSIONS.indexOf(version) > KNOWN_PLAN_VERSIONS.indexOf(newest))
      newest = version;
  return newest;
}

function readOptions(
  options: unknown,
  accepted: readonly PlanVersion[],
): { include: PlanSchemaOptions['include']; version: PlanVersion } {
  if (options === undefined) return { include: undefined, version: newestVersion(accepted) };
  if (!isJsonObject(options))
    throw invalid(`planSchema options must be an object, got ${describeValue(options)}`);
  let include: unknown;
  let version: unknown;
  try {
    ({ include, version } = options as PlanSchemaOptions);
  } catch {
    throw invalid('planSchema options could not be read');
  }
  if (include !== undefined && typeof include !== 'function')
    throw invalid(`options.include must be a function, got ${describeValue(include)}`);
  if (version !== undefined && !accepted.includes(version as PlanVersion)) {
    const listed = accepted.map((known) => `"${known}"`).join(', ');
    throw invalid(
      `options.version must be a plan version this runtime admits (${listed}), got ${describeValue(version)}`,
    );
  }
  return {
    include: include as PlanSchemaOptions['include'],
    version: (version as PlanVersion | undefined) ?? newestVersion(accepted),
  };
}

/**
 * The plan schema for the registered capabilities (`include` filters them), a fresh object.
 * `accepted` are the runtime's plan versions, `maxSteps` its `maxPlanSteps`.
 * @throws TypeError PLAN_SCHEMA_OPTIONS_INVALID for malformed options or a version the runtime
 * does not admit; whatever `include` throws.
 */
export function planSchemaFor(
  options: unknown,
  accepted: readonly PlanVersion[],
  maxSteps: number,
): JsonSchema {
  const { include, version } = readOptions(options, accepted);
  const records = capabilityInventory().list();
  if (include === undefined) {
    const key = `${version}\u0000${maxSteps}`;
    let cached = whole.get(key);
    if (cached === undefined || cached.size !== records.length) {
      cached = { size: records.length, text: JSON.stringify(assemble(records, version, maxSteps)) };
      whole.set(key, cached);
    }
    return JSON.parse(cached.text) as JsonSchema;
  }
  const byName = new Map(records.map((record) => [record.name, record]));
  const chosen: RegisteredCapability[] = [];
  for (const descriptor of listCapabilities()) {
    const record = byName.get(descriptor.name);
    if (record !== undefined && include(descriptor) === true) chosen.push(record);
  }
  // JSON data only: a JSON round trip is the fresh copy, and cheaper than structuredClone.
  return JSON.parse(JSON.stringify(assemble(chosen, version, maxSteps))) as JsonSchema;
}
