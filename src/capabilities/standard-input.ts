/**
 * Standard Schema v1 inputs (docs/api.md, "Input schemas"): read once at registration, called at
 * admission (literal inputs) and at step time. Only the types of `@standard-schema/spec` are used;
 * no schema library is imported. Everything read from a schema is read defensively: a vendor
 * object may be a proxy, a getter may throw, a validate may throw or never settle.
 */
import { boundText, describeThrown, describeValue } from '../errors/describe-value.js';
import { readField, type ReadFailure } from '../values/hostile-reads.js';
import type { CompiledField, CompiledSchema } from './input-schema.js';

/** A Standard Schema as registered: what validation needs, taken once. Frozen. */
export interface StandardInput {
  /** The schema object as given (a capability made by createCapability hands it on). */
  readonly schema: object;
  /** Its `~standard` properties, the `this` of `validate`. */
  readonly props: object;
  readonly validate: (value: unknown) => unknown;
  readonly vendor: string;
  /** The field record derived from the vendor's JSON Schema, for descriptors only. */
  readonly fields: CompiledSchema;
  /** A JSON copy of the vendor's JSON Schema of the input, when it provides one. */
  readonly jsonSchema: Readonly<Record<string, unknown>> | undefined;
}

/** One problem a schema reported, its path written `input.a.b` (`input` for the root). */
export interface StandardIssue {
  readonly path: string;
  readonly message: string;
  /** The keys of `path` below the input, as the schema gave them (a key may hold a dot). */
  readonly segments?: readonly string[];
}

/** What a validation gave: the schema's output, or its issues (at least one). */
export type StandardOutcome =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly issues: readonly StandardIssue[] };

/** Most issues read from one failed validation (a hostile schema may return millions). */
export const MAX_STANDARD_ISSUES = 100;

/** Longest issue message or path kept. */
const MAX_ISSUE_TEXT = 200;

/** Most properties of a vendor JSON Schema turned into descriptor fields. */
const MAX_DERIVED_FIELDS = 1_000;

const DERIVED_TYPES: Readonly<Record<string, CompiledField['type']>> = {
  string: 'string',
  number: 'number',
  integer: 'number',
  boolean: 'boolean',
  object: 'object',
  array: 'array',
};

function isObjectLike(value: unknown): value is object {
  return (typeof value === 'object' && value !== null) || typeof value === 'function';
}

/** `target['~standard']`, read once; undefined means "not a Standard Schema". */
export function standardPropsOf(schema: unknown, fail: ReadFailure): unknown {
  if (!isObjectLike(schema)) return undefined;
  return readField(schema, '~standard', fail);
}

/** The record of a JSON object value, without trusting it; undefined when it is not one. */
function jsonObject(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

/** A field type from a JSON Schema `type` (`integer` counts as `number`; `[T, 'null']` as T). */
function derivedType(type: unknown): CompiledField['type'] | undefined {
  if (typeof type === 'string') return DERIVED_TYPES[type];
  if (!Array.isArray(type)) return undefined;
  const named = type.filter((entry) => entry !== 'null');
  return named.length === 1 ? derivedType(named[0]) : undefined;
}

/**
 * The descriptor field record of a JSON Schema: one field per property whose type the field
 * contract can name; other properties are left out. A schema that is not an object gives `{}`.
 */
export function fieldsOfJsonSchema(jsonSchema: Readonly<Record<string, unknown>>): CompiledSchema {
  const properties = jsonObject(jsonSchema.properties);
  if (properties === undefined) return Object.freeze([]);
  const required = Array.isArray(jsonSchema.required) ? jsonSchema.required : [];
  const fields: CompiledField[] = [];
  for (const key of Object.keys(properties).slice(0, MAX_DERIVED_FIELDS)) {
    if (key === '__proto__') continue;
    const property = jsonObject(properties[key]);
    const type = derivedType(property?.type);
    if (type === undefined) continue;
    const description = property?.description;
    fields.push(
      Object.freeze({
        key,
        type,
        required: required.includes(key),
        description: typeof description === 'string' ? description : '',
      }),
    );
  }
  return Object.freeze(fields);
}

/**
 * The vendor's JSON Schema of the input (`~standard.jsonSchema.input`, Standard JSON Schema),
 * as a detached JSON copy; undefined when the vendor provides none or it cannot be had (the
 * converter may throw for schemas JSON Schema cannot express).
 */
function vendorJsonSchema(props: object): Readonly<Record<string, unknown>> | undefined {
  try {
    const converter = (props as { jsonSchema?: unknown }).jsonSchema;
    if (!isObjectLike(converter)) return undefined;
    const input = (converter as { input?: unknown }).input;
    if (typeof input !== 'function') return undefined;
    const produced: unknown = Reflect.apply(input, converter, [{ target: 'draft-2020-12' }]);
    const copy = jsonObject(JSON.parse(JSON.stringify(produced)) as unknown);
    return copy === undefined ? undefined : Object.freeze(copy);
  } catch {
    return undefined;
  }
}

/**
 * Checks the `~standard` properties of a schema and takes what validation needs, once.
 * @throws what `fail` builds, naming the part that is missing or unreadable.
 */
export function readStandardSchema(
  schema: object,
  props: unknown,
  fail: ReadFailure,
): StandardInput {
  if (!isObjectLike(props)) {
    throw fail(`['~standard'] must be an object, got ${describeValue(props)}`);
  }
  const version = readField(props, 'version', (problem) =>
    fail(`['~standard'].version ${problem}`),
  );
  const vendor = readField(props, 'vendor', (problem) => fail(`['~standard'].vendor ${problem}`));
  const validate = readField(props, 'validate', (problem) =>
    fail(`['~standard'].validate ${problem}`),
  );
  if (version !== 1) {
    throw fail(
      `['~standard'].version must be 1 (Standard Schema v1), got ${describeValue(version)}`,
    );
  }
  if (typeof vendor !== 'string') {
    throw fail(`['~standard'].vendor must be a string, got ${describeValue(vendor)}`);
  }
  if (typeof validate !== 'function') {
    throw fail(`['~standard'].validate must be a function`);
  }
  const jsonSchema = vendorJsonSchema(props);
  return Object.freeze({
    schema,
    props,
    validate: validate as (value: unknown) => unknown,
    vendor,
    fields: jsonSchema === undefined ? Object.freeze([]) : fieldsOfJsonSchema(jsonSchema),
    jsonSchema,
  });
}

/** A path segment: a property key, or `{ key }`. */
function segmentText(segment: unknown): string {
  const key: unknown = isObjectLike(segment) ? (segment as { key?: unknown }).key : segment;
  if (typeof key === 'string') return key;
  if (typeof key === 'number' || typeof key === 'symbol') return String(key);
  return '?';
}

/** One issue, read without trusting it. */
function issueOf(issue: unknown): StandardIssue {
  try {
    const message: unknown = isObjectLike(issue)
      ? (issue as { message?: unknown }).message
      : undefined;
    const path: unknown = isObjectLike(issue) ? (issue as { path?: unknown }).path : undefined;
    let where = 'input';
    const segments: string[] = [];
    if (Array.isArray(path)) {
      for (const segment of path.slice(0, 32)) {
        const text = segmentText(segment);
        segments.push(boundText(text, MAX_ISSUE_TEXT));
        where += `.${text}`;
      }
    }
    return {
      path: boundText(where, MAX_ISSUE_TEXT),
      message: typeof message === 'string' ? boundText(message, MAX_ISSUE_TEXT) : 'is invalid',
      segments,
    };
  } catch (error) {
    return { path: 'input', message: `an issue could not be read (${describeThrown(error)})` };
  }
}

const MALFORMED: StandardOutcome = Object.freeze({
  ok: false,
  issues: Object.freeze([
    Object.freeze({ path: 'input', message: 'the schema returned a malformed result' }),
  ]),
});

/** The outcome of a validation result (`{ value }` or `{ issues }`), read once, never trusted. */
export function outcomeOf(result: unknown): StandardOutcome {
  try {
    if (typeof result !== 'object' || result === null) return MALFORMED;
    const issues: unknown = (result as { issues?: unknown }).issues;
    if (!issues) return { ok: true, value: (result as { value?: unknown }).value };
    if (!Array.isArray(issues)) return MALFORMED;
    const length = issues.length;
    const listed: StandardIssue[] = [];
    for (let index = 0; index < Math.min(length, MAX_STANDARD_ISSUES); index++) {
      listed.push(issueOf(issues[index]));
    }
    // `issues: []` is a failure without a reason: still a failure (fail closed).
    return listed.length === 0 ? MALFORMED : { ok: false, issues: listed };
  } catch (error) {
    return {
      ok: false,
      issues: [
        { path: 'input', message: `the result could not be read (${describeThrown(error)})` },
      ],
    };
  }
}

/** Thrown by `validate`: a failure of validation, never of the runtime. */
function thrownOutcome(error: unknown): StandardOutcome {
  return {
    ok: false,
    issues: [
      {
        path: 'input',
        message: `the schema threw: ${boundText(describeThrown(error), MAX_ISSUE_TEXT)}`,
      },
    ],
  };
}

/** A pending validation (the schema answered with a promise). */
export interface PendingValidation {
  readonly pending: Promise<StandardOutcome>;
}

/**
 * Calls `validate` once. A synchronous answer is its outcome; a thenable is returned as
 * `{ pending }`, a promise that never rejects. Never throws.
 */
export function runValidate(
  standard: StandardInput,
  input: unknown,
): StandardOutcome | PendingValidation {
  let result: unknown;
  let then: unknown;
  try {
    result = Reflect.apply(standard.validate, standard.props, [input]);
    then = isObjectLike(result) ? (result as { then?: unknown }).then : undefined;
  } catch (error) {
    return thrownOutcome(error);
  }
  if (typeof then !== 'function') return outcomeOf(result);
  const pending = new Promise<unknown>((resolve, reject) => {
    Reflect.apply(then, result, [resolve, reject]);
  }).then(outcomeOf, thrownOutcome);
  return { pending };
}

/** Most issues a failure message lists; the rest are counted. */
const MAX_LISTED_ISSUES = 20;

/** `Input validation failed: <path>: <message>; ...`, one bounded line. */
export function validationMessage(issues: readonly StandardIssue[]): string {
  const listed = issues
    .slice(0, MAX_LISTED_ISSUES)
    .map((issue) => `${issue.path}: ${issue.message}`);
  const more = issues.length - listed.length;
  if (more > 0) listed.push(`and ${more} more issue${more === 1 ? '' : 's'}`);
  return `Input validation failed: ${listed.join('; ')}`;
}
