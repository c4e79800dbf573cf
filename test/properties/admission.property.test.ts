// Property (b): admission rejects iff a rule of docs/api.md (plans, admission, capabilities) is broken, and a rejected plan
// leaves no trace: no job, no event, no authorizer call, no capability call.
//
// A case is a plan that starts out (mostly) valid and receives 0-3 injected violations:
// non-object plan or steps, unsupported version, empty or non-array steps, non-string optional
// fields, duplicate / empty / non-string ids, unknown or non-string capabilities, mismatched or
// non-string pinned versions, missing / mistyped input fields, non-object inputs, and result
// references to the step itself, to later or unknown steps, ambiguous or malformed ones. The
// expected verdict and issues come from an oracle written here from docs/api.md (and, where docs/api.md
// leaves the choice open, docs/decisions.md); it never calls into src/.
//
// The oracle predicts, per step, which issue codes MUST be reported; where docs/api.md does not fix
// the code (a reference to no earlier step: INVALID_RESULT_REFERENCE or
// RESULT_REFERENCE_NOT_EARLIER; a missing or non-string version: UNSUPPORTED_PLAN_VERSION or
// INVALID_PLAN) it accepts either. Every reported issue must be one the oracle permits.
//
// Input field names avoid the names of Object.prototype members: omitting such a field is
// covered by admission-prototype-fields.property.test.ts (a known defect, see there).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  isPlanAdmissionError,
  type CapabilityAuthorizationContext,
  type CapabilityInputField,
  type ExecutionPlan,
  type PlanAdmissionIssue,
  type RuntimeEvent,
} from '../../src/index.js';
import { uniqueName } from '../support/runtime-fixtures.js';
import {
  OBJECT_PROTOTYPE_MEMBERS,
  checkProperty,
  defineOwn,
  memoryRuntime,
  runLabel,
} from './support.js';

type Code = PlanAdmissionIssue['code'];
type FieldType = CapabilityInputField['type'];

// ---------------------------------------------------------------------------------------------
// Registered capabilities (process-global inventory: registered once for the whole property).

interface FieldRule {
  readonly key: string;
  readonly type: FieldType;
  readonly required: boolean;
}

interface Registered {
  readonly name: string;
  readonly version: string;
  readonly fields: readonly FieldRule[];
}

const SCHEMAS: readonly (readonly FieldRule[])[] = [
  [],
  [
    { key: 'name', type: 'string', required: true },
    { key: 'count', type: 'number', required: false },
    { key: 'opts', type: 'object', required: false },
    { key: 'tags', type: 'array', required: false },
    { key: 'flag', type: 'boolean', required: false },
  ],
  [
    { key: 'payload', type: 'object', required: true },
    { key: 'list', type: 'array', required: true },
    { key: 'n', type: 'number', required: false },
    { key: 'label', type: 'string', required: false },
  ],
];
const VERSIONS = ['1.0.0', '2.0.0', ''];

let invocations = 0;

function registerCapabilities(): Registered[] {
  const runtime = memoryRuntime();
  const registered = SCHEMAS.map((fields, index) => ({
    name: uniqueName(`prop.admission.cap${index}`),
    version: VERSIONS[index] as string,
    fields,
  }));
  runtime.use({
    manifest: {
      name: uniqueName('prop.admission.module'),
      version: '1',
      capabilities: registered.map((capability) => capability.name),
    },
    capabilities: registered.map((capability) => ({
      name: capability.name,
      version: capability.version,
      description: 'admission property',
      risk: 'read' as const,
      inputSchema:
        capability.fields.length === 0
          ? undefined
          : Object.fromEntries(
              capability.fields.map((field) => [
                field.key,
                { type: field.type, required: field.required, description: field.key },
              ]),
            ),
      execute: () => {
        invocations += 1;
        return { done: true };
      },
    })),
  });
  void runtime.close();
  return registered;
}

// ---------------------------------------------------------------------------------------------
// Descriptions. Values are pure data; objects are built fresh for every run.

/** A value inside a step input. `refspec` is a reference before ids are known. */
type Value =
  | { readonly t: 'str'; readonly v: string }
  | { readonly t: 'num'; readonly v: number }
  | { readonly t: 'bool'; readonly v: boolean }
  | { readonly t: 'null' }
  | { readonly t: 'undef' }
  | { readonly t: 'obj'; readonly entries: readonly (readonly [string, Value])[] }
  | { readonly t: 'arr'; readonly items: readonly Value[] }
  | { readonly t: 'ref'; readonly text: string }
  | { readonly t: 'refspec'; readonly spec: RefSpec };

type RefSpec =
  | { readonly kind: 'earlier'; readonly pick: number; readonly segments: readonly string[] }
  | { readonly kind: 'self' | 'unknown' }
  | { readonly kind: 'later'; readonly pick: number }
  /** Text around an earlier step's id: `<before>steps.<id>.result<after>`. */
  | {
      readonly kind: 'earlier-malformed';
      readonly pick: number;
      readonly before: string;
      readonly after: string;
    }
  | { readonly kind: 'raw'; readonly text: string };

/** A structural field of the plan or of a step: absent, or present with a primitive value. */
type Field = { readonly present: false } | { readonly present: true; readonly value: unknown };

type Form = 'object' | 'null' | 'array' | 'string' | 'number';

interface Step {
  readonly form: Form;
  readonly id: Field;
  readonly capability: Field;
  readonly capabilityVersion: Field;
  readonly reason: Field;
  readonly idempotencyKey: Field;
  /** Absent, or the input root. */
  readonly input: Value | undefined;
}

interface Plan {
  readonly form: Form;
  readonly version: Field;
  readonly id: Field;
  readonly goal: Field;
  readonly idempotencyKey: Field;
  readonly metadata: Field;
  readonly steps: { readonly kind: 'array'; readonly list: readonly Step[] } | Field;
  /** Wrap the plan, its steps array and its steps in proxies that count property reads. */
  readonly counted: boolean;
}

const ABSENT: Field = { present: false };
const present = (value: unknown): Field => ({ present: true, value });

// ---------------------------------------------------------------------------------------------
// Generators: a base that is valid most of the time, then injected violations.

const ID_POOL = ['a', 'b', 'c', 'a.b', 'A', 'a.result', 'x y', 'ü', 's-1', '0'];
const SEGMENTS = ['x', '0', 'result', 'name', 'y'];
const ENTRY_KEYS = ['k', 'name', 'payload', '$ref', '__proto__', 'deep', 'n'];
const MALFORMED_REFS = [
  'steps.a',
  'step.a.result',
  'steps.a.result.',
  'steps.a.result..x',
  'steps..result',
  '',
  'steps.a.resultx',
  '$ref',
  'steps.a.result.x.',
  'STEPS.a.result',
  'steps.a.b.result',
  'steps.a.result.result',
];

const earlierRefArb: fc.Arbitrary<Value> = fc.record({
  t: fc.constant('refspec' as const),
  spec: fc.record({
    kind: fc.constant('earlier' as const),
    pick: fc.nat(),
    segments: fc.array(fc.constantFrom(...SEGMENTS), { maxLength: 2 }),
  }),
});

const badRefArb: fc.Arbitrary<Value> = fc.record({
  t: fc.constant('refspec' as const),
  spec: fc.oneof(
    fc.constant({ kind: 'self' as const }),
    fc.constant({ kind: 'unknown' as const }),
    fc.record({ kind: fc.constant('later' as const), pick: fc.nat() }),
    fc.record({
      kind: fc.constant('earlier-malformed' as const),
      pick: fc.nat(),
      before: fc.constantFrom('', '', '', 'x', ' ', 'S'),
      after: fc.constantFrom('.', '..x', '.x.', 'x', '.x..y', '.', ' ', '.result', '.x'),
    }),
    fc.record({ kind: fc.constant('raw' as const), text: fc.constantFrom(...MALFORMED_REFS) }),
    fc.record({ kind: fc.constant('raw' as const), text: fc.string({ maxLength: 8 }) }),
  ),
});

const scalarValueArb: fc.Arbitrary<Value> = fc.oneof(
  fc.record({ t: fc.constant('str' as const), v: fc.string({ maxLength: 4 }) }),
  fc.record({ t: fc.constant('num' as const), v: fc.integer() }),
  fc.record({
    t: fc.constant('num' as const),
    v: fc.constantFrom(Number.NaN, Infinity, -Infinity, 0.5, -0),
  }),
  fc.record({ t: fc.constant('bool' as const), v: fc.boolean() }),
  fc.constant({ t: 'null' as const }),
  fc.constant({ t: 'undef' as const }),
);

/** Any value, possibly with (valid or invalid) references nested inside. */
const anyValueArb: fc.Arbitrary<Value> = fc.letrec<{ value: Value }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    scalarValueArb,
    fc.record({
      t: fc.constant('obj' as const),
      entries: fc.array(fc.tuple(fc.constantFrom(...ENTRY_KEYS), tie('value')), {
        maxLength: 3,
      }),
    }),
    fc.record({ t: fc.constant('arr' as const), items: fc.array(tie('value'), { maxLength: 3 }) }),
    earlierRefArb,
  ),
})).value;

/** Plain data without references (for the first step, which has nothing to refer to). */
const dataArb: fc.Arbitrary<Value> = fc.letrec<{ value: Value }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    scalarValueArb,
    fc.record({
      t: fc.constant('obj' as const),
      entries: fc.array(fc.tuple(fc.constantFrom('k', 'deep', 'n'), tie('value')), {
        maxLength: 3,
      }),
    }),
    fc.record({ t: fc.constant('arr' as const), items: fc.array(tie('value'), { maxLength: 3 }) }),
  ),
})).value;

function validFieldValueArb(
  type: FieldType,
  required: boolean,
  refs: boolean,
): fc.Arbitrary<Value> {
  const data = refs ? anyValueArb : dataArb;
  const valid: fc.Arbitrary<Value> = (() => {
    switch (type) {
      case 'string':
        return fc.record({
          t: fc.constant('str' as const),
          v: fc.string({ minLength: required ? 1 : 0, maxLength: 4 }),
        });
      case 'number':
        return fc.record({
          t: fc.constant('num' as const),
          v: fc.double({ noNaN: true, noDefaultInfinity: true }),
        });
      case 'boolean':
        return fc.record({ t: fc.constant('bool' as const), v: fc.boolean() });
      case 'object':
        return fc.record({
          t: fc.constant('obj' as const),
          entries: fc.array(fc.tuple(fc.constantFrom('k', 'deep'), data), { maxLength: 2 }),
        });
      case 'array':
        return fc.record({
          t: fc.constant('arr' as const),
          items: fc.array(data, { maxLength: 2 }),
        });
    }
  })();
  return refs
    ? fc.oneof({ weight: 4, arbitrary: valid }, { weight: 1, arbitrary: earlierRefArb })
    : valid;
}

function validInputArb(capability: Registered, refs: boolean): fc.Arbitrary<Value | undefined> {
  if (capability.fields.length === 0) {
    return fc.option(refs ? anyValueArb : dataArb, { nil: undefined });
  }
  const fields = capability.fields.map((field) => {
    const value = validFieldValueArb(field.type, field.required, refs);
    const entry = value.map((built) => [field.key, built] as const);
    if (field.required) return entry.map((built) => [built]);
    return fc.oneof(
      fc.constant([]),
      entry.map((built) => [built]),
      fc.constant([[field.key, { t: 'null' as const }] as const]),
    );
  });
  const object = fc.tuple(...fields).map((parts): Value => ({ t: 'obj', entries: parts.flat() }));
  return refs
    ? fc.oneof({ weight: 6, arbitrary: object }, { weight: 1, arbitrary: earlierRefArb })
    : object;
}

interface BaseStep {
  readonly capability: number;
  readonly pinVersion: boolean;
  readonly input: Value | undefined;
  readonly reason: string | undefined;
}

function baseStepArb(index: number, capabilities: readonly Registered[]): fc.Arbitrary<BaseStep> {
  return fc.nat({ max: capabilities.length - 1 }).chain((capability) =>
    fc.record({
      capability: fc.constant(capability),
      pinVersion: fc.boolean(),
      input: validInputArb(capabilities[capability] as Registered, index > 0),
      reason: fc.option(fc.string({ maxLength: 4 }), { nil: undefined }),
    }),
  );
}

type Injection =
  | { readonly kind: 'plan-form'; readonly form: Exclude<Form, 'object'> }
  | { readonly kind: 'plan-version'; readonly value: Field }
  | {
      readonly kind: 'plan-field';
      readonly field: 'id' | 'goal' | 'idempotencyKey';
      readonly value: unknown;
    }
  | { readonly kind: 'steps-shape'; readonly value: 'empty' | Field }
  | { readonly kind: 'step-form'; readonly at: number; readonly form: Exclude<Form, 'object'> }
  | {
      readonly kind: 'step-id';
      readonly at: number;
      readonly value: Field | 'duplicate';
      readonly pick: number;
    }
  | {
      readonly kind: 'step-capability';
      readonly at: number;
      readonly value: 'upper' | 'suffix' | 'padded' | 'missing' | Field;
    }
  | { readonly kind: 'step-version'; readonly at: number; readonly value: Field }
  | {
      readonly kind: 'step-text';
      readonly at: number;
      readonly field: 'reason' | 'idempotencyKey';
      readonly value: unknown;
    }
  | { readonly kind: 'input-root'; readonly at: number; readonly value: Value | undefined }
  | {
      readonly kind: 'input-field';
      readonly at: number;
      readonly key: string;
      readonly value: Value;
    }
  | { readonly kind: 'input-remove'; readonly at: number; readonly key: string }
  | {
      readonly kind: 'bad-ref';
      readonly at: number;
      readonly where: 'root' | 'field' | 'nested';
      readonly key: string;
      readonly ref: Value;
    };

const nonStringArb = fc.constantFrom<unknown>(7, null, true, 0);
const FIELD_KEYS = [
  'name',
  'count',
  'opts',
  'tags',
  'flag',
  'payload',
  'list',
  'n',
  'label',
  'other',
];

const injectionArb: fc.Arbitrary<Injection> = fc.oneof(
  fc.record({
    kind: fc.constant('plan-form' as const),
    form: fc.constantFrom<Exclude<Form, 'object'>>('null', 'array', 'string', 'number'),
  }),
  fc.record({
    kind: fc.constant('plan-version' as const),
    value: fc.oneof(
      fc.constant(ABSENT),
      fc
        .constantFrom<unknown>('2.0', '1', '1.0 ', '', 'v1.0', 1, 1.0, null, undefined)
        .map(present),
    ),
  }),
  fc.record({
    kind: fc.constant('plan-field' as const),
    field: fc.constantFrom<'id' | 'goal' | 'idempotencyKey'>('id', 'goal', 'idempotencyKey'),
    value: nonStringArb,
  }),
  fc.record({
    kind: fc.constant('steps-shape' as const),
    value: fc.oneof(
      fc.constant<'empty'>('empty'),
      fc.constant(ABSENT),
      fc.constantFrom<unknown>(null, 'steps', 3, undefined).map(present),
    ),
  }),
  fc.record({
    kind: fc.constant('step-form' as const),
    at: fc.nat(),
    form: fc.constantFrom<Exclude<Form, 'object'>>('null', 'array', 'string', 'number'),
  }),
  fc.record({
    kind: fc.constant('step-id' as const),
    at: fc.nat(),
    value: fc.oneof(
      fc.constant<'duplicate'>('duplicate'),
      fc.constant<'duplicate'>('duplicate'),
      fc.constant(ABSENT),
      fc.constantFrom<unknown>('', 7, null, undefined, 'fresh', 'A', 'a.result').map(present),
    ),
    pick: fc.nat(),
  }),
  fc.record({
    kind: fc.constant('step-capability' as const),
    at: fc.nat(),
    value: fc.oneof(
      fc.constantFrom<'upper' | 'suffix' | 'padded' | 'missing'>(
        'upper',
        'suffix',
        'padded',
        'missing',
      ),
      fc.constant(ABSENT),
      fc.constantFrom<unknown>(7, null, '', undefined).map(present),
    ),
  }),
  fc.record({
    kind: fc.constant('step-version' as const),
    at: fc.nat(),
    value: fc
      .constantFrom<unknown>('', '9.9.9', '2.0', '1.0.0', '2.0.0', ' ', 7, null)
      .map(present),
  }),
  fc.record({
    kind: fc.constant('step-text' as const),
    at: fc.nat(),
    field: fc.constantFrom<'reason' | 'idempotencyKey'>('reason', 'idempotencyKey'),
    value: fc.constantFrom<unknown>(7, null, false),
  }),
  fc.record({
    kind: fc.constant('input-root' as const),
    at: fc.nat(),
    value: fc.option(scalarValueArb, { nil: undefined }),
  }),
  fc.record({
    kind: fc.constant('input-root' as const),
    at: fc.nat(),
    value: fc.record({
      t: fc.constant('arr' as const),
      items: fc.array(dataArb, { maxLength: 2 }),
    }),
  }),
  fc.record({
    kind: fc.constant('input-field' as const),
    at: fc.nat(),
    key: fc.constantFrom(...FIELD_KEYS),
    value: anyValueArb,
  }),
  fc.record({
    kind: fc.constant('input-remove' as const),
    at: fc.nat(),
    key: fc.constantFrom(...FIELD_KEYS),
  }),
  fc.record({
    kind: fc.constant('bad-ref' as const),
    at: fc.nat(),
    where: fc.constantFrom<'root' | 'field' | 'nested'>('root', 'field', 'nested'),
    key: fc.constantFrom(...FIELD_KEYS),
    ref: badRefArb,
  }),
);

interface CaseSpec {
  readonly ids: readonly string[];
  readonly steps: readonly BaseStep[];
  readonly planId: string | undefined;
  readonly goal: string | undefined;
  readonly idempotencyKey: string | undefined;
  readonly injections: readonly Injection[];
  readonly counted: boolean;
}

function caseArb(capabilities: readonly Registered[]): fc.Arbitrary<CaseSpec> {
  return fc.uniqueArray(fc.constantFrom(...ID_POOL), { minLength: 1, maxLength: 6 }).chain((ids) =>
    fc.record({
      ids: fc.constant(ids),
      steps: fc.tuple(...ids.map((_, index) => baseStepArb(index, capabilities))),
      planId: fc.option(fc.string({ maxLength: 4 }), { nil: undefined }),
      goal: fc.option(fc.string({ maxLength: 4 }), { nil: undefined }),
      idempotencyKey: fc.option(fc.string({ maxLength: 4 }), { nil: undefined }),
      injections: fc.oneof(
        { weight: 2, arbitrary: fc.constant([]) },
        { weight: 3, arbitrary: fc.array(injectionArb, { minLength: 1, maxLength: 3 }) },
      ),
      counted: fc.boolean(),
    }),
  );
}

// ---------------------------------------------------------------------------------------------
// From a case to a concrete plan description (ids known, references turned into text).

function refText(spec: RefSpec, index: number, ids: readonly string[]): string {
  switch (spec.kind) {
    case 'earlier': {
      const target = index === 0 ? 'nobody' : (ids[spec.pick % index] as string);
      return [`steps.${target}.result`, ...spec.segments].join('.');
    }
    case 'self':
      return `steps.${ids[index] ?? 'nobody'}.result`;
    case 'later': {
      const later = ids.length - index - 1;
      const target = later <= 0 ? 'nobody' : ids[index + 1 + (spec.pick % later)];
      return `steps.${target ?? 'nobody'}.result`;
    }
    case 'earlier-malformed': {
      const target = index === 0 ? 'nobody' : (ids[spec.pick % index] as string);
      return `${spec.before}steps.${target}.result${spec.after}`;
    }
    case 'unknown':
      return 'steps.nobody.result';
    case 'raw':
      return spec.text;
  }
}

function concreteValue(value: Value, index: number, ids: readonly string[]): Value {
  switch (value.t) {
    case 'refspec':
      return { t: 'ref', text: refText(value.spec, index, ids) };
    case 'obj':
      return {
        t: 'obj',
        entries: value.entries.map(([key, child]) => [key, concreteValue(child, index, ids)]),
      };
    case 'arr':
      return { t: 'arr', items: value.items.map((item) => concreteValue(item, index, ids)) };
    default:
      return value;
  }
}

function concretize(spec: CaseSpec, capabilities: readonly Registered[]): Plan {
  const { ids } = spec;
  let plan: {
    -readonly [K in keyof Plan]: Plan[K];
  } = {
    form: 'object',
    version: present('1.0'),
    id: spec.planId === undefined ? ABSENT : present(spec.planId),
    goal: spec.goal === undefined ? ABSENT : present(spec.goal),
    idempotencyKey: spec.idempotencyKey === undefined ? ABSENT : present(spec.idempotencyKey),
    metadata: ABSENT,
    steps: { kind: 'array', list: [] },
    counted: spec.counted,
  };
  const steps: { -readonly [K in keyof Step]: Step[K] }[] = spec.steps.map((base, index) => {
    const capability = capabilities[base.capability] as Registered;
    return {
      form: 'object',
      id: present(ids[index]),
      capability: present(capability.name),
      capabilityVersion: base.pinVersion ? present(capability.version) : ABSENT,
      reason: base.reason === undefined ? ABSENT : present(base.reason),
      idempotencyKey: ABSENT,
      input: base.input === undefined ? undefined : concreteValue(base.input, index, ids),
    };
  });
  let stepsField: Plan['steps'] | undefined;
  for (const injection of spec.injections) {
    const step = 'at' in injection ? steps[injection.at % steps.length] : undefined;
    const index = 'at' in injection ? injection.at % steps.length : 0;
    switch (injection.kind) {
      case 'plan-form':
        plan = { ...plan, form: injection.form };
        break;
      case 'plan-version':
        plan = { ...plan, version: injection.value };
        break;
      case 'plan-field':
        plan = { ...plan, [injection.field]: present(injection.value) };
        break;
      case 'steps-shape':
        stepsField = injection.value === 'empty' ? { kind: 'array', list: [] } : injection.value;
        break;
      case 'step-form':
        if (step) step.form = injection.form;
        break;
      case 'step-id':
        if (step) {
          step.id =
            injection.value === 'duplicate'
              ? present(ids[injection.pick % ids.length])
              : injection.value;
        }
        break;
      case 'step-capability':
        if (step) {
          const name = step.capability.present ? String(step.capability.value) : 'cap';
          const value = injection.value;
          step.capability =
            value === 'upper'
              ? present(name.toUpperCase())
              : value === 'suffix'
                ? present(`${name}x`)
                : value === 'padded'
                  ? present(` ${name}`)
                  : value === 'missing'
                    ? present('Missing.Capability')
                    : value;
        }
        break;
      case 'step-version':
        if (step) step.capabilityVersion = injection.value;
        break;
      case 'step-text':
        if (step) step[injection.field] = present(injection.value);
        break;
      case 'input-root':
        if (step) {
          step.input =
            injection.value === undefined ? undefined : concreteValue(injection.value, index, ids);
        }
        break;
      case 'input-field':
        if (step) {
          const entries = step.input?.t === 'obj' ? step.input.entries : [];
          step.input = {
            t: 'obj',
            entries: [...entries, [injection.key, concreteValue(injection.value, index, ids)]],
          };
        }
        break;
      case 'input-remove':
        if (step && step.input?.t === 'obj') {
          step.input = {
            t: 'obj',
            entries: step.input.entries.filter(([key]) => key !== injection.key),
          };
        }
        break;
      case 'bad-ref':
        if (step) {
          const ref = concreteValue(injection.ref, index, ids);
          const entries = step.input?.t === 'obj' ? step.input.entries : [];
          step.input =
            injection.where === 'root'
              ? ref
              : injection.where === 'field'
                ? { t: 'obj', entries: [...entries, [injection.key, ref]] }
                : {
                    t: 'obj',
                    entries: [
                      ...entries,
                      ['deep', { t: 'arr', items: [{ t: 'obj', entries: [['at', ref]] }] }],
                    ],
                  };
        }
        break;
    }
  }
  plan.steps = stepsField ?? { kind: 'array', list: steps };
  return plan;
}

// ---------------------------------------------------------------------------------------------
// The oracle (docs/api.md (plans, admission, capabilities), docs/decisions.md where docs/api.md leaves a choice open).

interface ExpectedIssue {
  /** Undefined for plan-level issues. */
  readonly stepIndex: number | undefined;
  /** Codes that satisfy this expectation (usually exactly one). */
  readonly codes: readonly Code[];
}

/** The `$ref` text when the value is a result reference (only own key `$ref`, a string). */
function referenceOf(value: Value): string | undefined {
  if (value.t === 'ref') return value.text;
  if (value.t !== 'obj') return undefined;
  const last = new Map<string, Value>();
  for (const [key, child] of value.entries) last.set(key, child);
  if (last.size !== 1) return undefined;
  const only = last.get('$ref');
  return only?.t === 'str' ? only.v : undefined;
}

function collectReferenceTexts(value: Value, found: string[]): void {
  const text = referenceOf(value);
  if (text !== undefined) {
    found.push(text);
    return;
  }
  if (value.t === 'obj') {
    const last = new Map<string, Value>();
    for (const [key, child] of value.entries) last.set(key, child);
    for (const child of last.values()) collectReferenceTexts(child, found);
  } else if (value.t === 'arr') {
    for (const item of value.items) collectReferenceTexts(item, found);
  }
}

/** docs/api.md, "Plans and result references": the id must be exactly one EARLIER step's id; path segments non-empty. */
function referenceCodes(text: string, earlierIds: ReadonlySet<string>): readonly Code[] {
  const fits: string[] = [];
  for (const id of earlierIds) {
    const head = `steps.${id}.result`;
    if (text === head || text.startsWith(`${head}.`)) fits.push(id);
  }
  if (fits.length > 1) return ['AMBIGUOUS_RESULT_REFERENCE'];
  const [target] = fits;
  if (target === undefined) return ['RESULT_REFERENCE_NOT_EARLIER', 'INVALID_RESULT_REFERENCE'];
  const rest = text.slice(`steps.${target}.result`.length);
  if (rest === '') return [];
  return rest
    .slice(1)
    .split('.')
    .some((segment) => segment === '')
    ? ['INVALID_RESULT_REFERENCE']
    : [];
}

function matchesType(type: FieldType, value: Value): boolean {
  switch (type) {
    case 'string':
      return value.t === 'str';
    case 'number':
      return value.t === 'num' && Number.isFinite(value.v);
    case 'boolean':
      return value.t === 'bool';
    case 'object':
      return value.t === 'obj';
    case 'array':
      return value.t === 'arr';
  }
}

/** docs/api.md, "createCapability" field checks on an input root that is not a reference. */
function inputCodes(input: Value | undefined, fields: readonly FieldRule[]): Code[] {
  if (fields.length === 0) return [];
  if (input === undefined || input.t === 'undef' || input.t === 'null') {
    return fields.filter((field) => field.required).map(() => 'REQUIRED_INPUT_MISSING');
  }
  if (input.t !== 'obj' && input.t !== 'ref') return ['INPUT_TYPE_MISMATCH'];
  if (input.t === 'ref' || referenceOf(input) !== undefined) return [];
  const values = new Map<string, Value>();
  for (const [key, value] of input.entries) values.set(key, value);
  const codes: Code[] = [];
  for (const field of fields) {
    const value = values.get(field.key) ?? { t: 'undef' };
    const empty = value.t === 'str' && value.v === '';
    if (value.t === 'undef' || value.t === 'null' || empty) {
      if (field.required) codes.push('REQUIRED_INPUT_MISSING');
      // docs/decisions.md: '' in an optional field of another type is a type mismatch.
      else if (empty && field.type !== 'string') codes.push('INPUT_TYPE_MISMATCH');
      continue;
    }
    if (referenceOf(value) !== undefined) continue; // checked once resolved, at step time
    if (!matchesType(field.type, value)) codes.push('INPUT_TYPE_MISMATCH');
  }
  return codes;
}

const isNonEmptyString = (field: Field): field is { present: true; value: string } =>
  field.present && typeof field.value === 'string' && field.value !== '';

const badOptionalString = (field: Field): boolean =>
  field.present && field.value !== undefined && typeof field.value !== 'string';

function oracle(plan: Plan, capabilities: readonly Registered[]): ExpectedIssue[] {
  const expected: ExpectedIssue[] = [];
  const planIssue = (...codes: Code[]) => expected.push({ stepIndex: undefined, codes });
  if (plan.form !== 'object') return [{ stepIndex: undefined, codes: ['INVALID_PLAN'] }];
  if (!plan.version.present || typeof plan.version.value !== 'string') {
    planIssue('UNSUPPORTED_PLAN_VERSION', 'INVALID_PLAN');
  } else if (plan.version.value !== '1.0') {
    planIssue('UNSUPPORTED_PLAN_VERSION');
  }
  for (const field of [plan.id, plan.goal, plan.idempotencyKey]) {
    if (badOptionalString(field)) planIssue('INVALID_PLAN');
  }
  if (!('kind' in plan.steps)) {
    planIssue('INVALID_PLAN');
    return expected;
  }
  const list = plan.steps.list;
  if (list.length === 0) planIssue('EMPTY_PLAN');
  const earlierIds = new Set<string>();
  list.forEach((step, index) => {
    const issue = (...codes: Code[]) => expected.push({ stepIndex: index, codes });
    if (step.form !== 'object') {
      issue('INVALID_PLAN');
      return;
    }
    if (!isNonEmptyString(step.id)) issue('INVALID_PLAN');
    else if (earlierIds.has(step.id.value)) issue('DUPLICATE_STEP_ID');
    let registered: Registered | undefined;
    if (!step.capability.present || typeof step.capability.value !== 'string') {
      issue('INVALID_PLAN');
    } else {
      const name = step.capability.value;
      registered = capabilities.find((capability) => capability.name === name);
      if (registered === undefined) issue('UNKNOWN_CAPABILITY');
    }
    const version = step.capabilityVersion;
    if (version.present && version.value !== undefined) {
      if (typeof version.value !== 'string') issue('INVALID_PLAN');
      else if (registered !== undefined && version.value !== registered.version) {
        issue('CAPABILITY_VERSION_MISMATCH');
      }
    }
    if (badOptionalString(step.reason)) issue('INVALID_PLAN');
    if (badOptionalString(step.idempotencyKey)) issue('INVALID_PLAN');
    if (step.input !== undefined) {
      const texts: string[] = [];
      collectReferenceTexts(step.input, texts);
      for (const text of texts) {
        const codes = referenceCodes(text, earlierIds);
        if (codes.length > 0) issue(...codes);
      }
    }
    if (registered !== undefined) {
      for (const code of inputCodes(step.input, registered.fields)) issue(code);
    }
    if (isNonEmptyString(step.id)) earlierIds.add(step.id.value);
  });
  return expected;
}

// ---------------------------------------------------------------------------------------------
// Building the submission (fresh objects; optionally behind read-counting proxies).

type ReadCounts = Map<object, Map<string, number>>;

function counting<T extends object>(target: T, counts: ReadCounts): T {
  const reads = new Map<string, number>();
  const proxy = new Proxy(target, {
    get(object, key, receiver) {
      if (typeof key === 'string') reads.set(key, (reads.get(key) ?? 0) + 1);
      return Reflect.get(object, key, receiver) as unknown;
    },
  });
  counts.set(proxy, reads);
  return proxy;
}

function buildValue(value: Value): unknown {
  switch (value.t) {
    case 'str':
    case 'num':
    case 'bool':
      return value.v;
    case 'null':
      return null;
    case 'undef':
      return undefined;
    case 'ref':
      return { $ref: value.text };
    case 'refspec':
      return assert.fail('unresolved reference spec');
    case 'obj': {
      const built = {};
      for (const [key, child] of value.entries) defineOwn(built, key, buildValue(child));
      return built;
    }
    case 'arr':
      return value.items.map(buildValue);
  }
}

function nonObject(form: Exclude<Form, 'object'>): unknown {
  switch (form) {
    case 'null':
      return null;
    case 'array':
      return [];
    case 'string':
      return 'plan';
    case 'number':
      return 42;
  }
}

function assign(target: Record<string, unknown>, key: string, field: Field): void {
  if (field.present) target[key] = field.value;
}

interface Built {
  readonly submission: unknown;
  /** Objects whose structural fields must each be read exactly once, with those fields. */
  readonly checkedReads: { readonly proxy: object; readonly keys: readonly string[] }[];
  readonly counts: ReadCounts;
}

const PLAN_FIELDS = ['version', 'id', 'goal', 'steps', 'metadata', 'idempotencyKey'];
const STEP_FIELDS = ['id', 'capability', 'capabilityVersion', 'input', 'reason', 'idempotencyKey'];

function buildSubmission(plan: Plan): Built {
  const counts: ReadCounts = new Map();
  const checkedReads: { proxy: object; keys: readonly string[] }[] = [];
  if (plan.form !== 'object') return { submission: nonObject(plan.form), checkedReads, counts };
  const wrap = <T extends object>(target: T, keys: readonly string[]): T => {
    if (!plan.counted) return target;
    const proxy = counting(target, counts);
    checkedReads.push({ proxy, keys });
    return proxy;
  };
  const built: Record<string, unknown> = {};
  assign(built, 'version', plan.version);
  assign(built, 'id', plan.id);
  assign(built, 'goal', plan.goal);
  assign(built, 'idempotencyKey', plan.idempotencyKey);
  assign(built, 'metadata', plan.metadata);
  if ('kind' in plan.steps) {
    const steps = plan.steps.list.map((step) => {
      if (step.form !== 'object') return nonObject(step.form);
      const record: Record<string, unknown> = {};
      assign(record, 'id', step.id);
      assign(record, 'capability', step.capability);
      assign(record, 'capabilityVersion', step.capabilityVersion);
      assign(record, 'reason', step.reason);
      assign(record, 'idempotencyKey', step.idempotencyKey);
      if (step.input !== undefined) record.input = buildValue(step.input);
      return wrap(record, STEP_FIELDS);
    });
    built.steps = wrap(
      steps,
      steps.map((_, index) => String(index)),
    );
  } else {
    assign(built, 'steps', plan.steps);
  }
  return { submission: wrap(built, PLAN_FIELDS), checkedReads, counts };
}

// ---------------------------------------------------------------------------------------------
// Comparing the verdict.

const PREFIX = 'Execution plan failed validation: ';

function describeIssues(issues: readonly { stepIndex?: number; code: string }[]): string {
  return JSON.stringify(issues.map((issue) => [issue.stepIndex ?? 'plan', issue.code]));
}

function checkIssues(
  plan: Plan,
  expected: readonly ExpectedIssue[],
  actual: readonly PlanAdmissionIssue[],
): void {
  const context = `expected ${JSON.stringify(
    expected.map((issue) => [issue.stepIndex ?? 'plan', issue.codes.join('|')]),
  )}, got ${describeIssues(actual)}`;
  // Every expected issue is reported (at its step) with one of its codes.
  for (const issue of expected) {
    assert.ok(
      actual.some(
        (candidate) =>
          candidate.stepIndex === issue.stepIndex && issue.codes.includes(candidate.code),
      ),
      `missing issue: ${context}`,
    );
  }
  // Every reported issue is one the oracle permits at that step.
  for (const issue of actual) {
    const permitted = expected
      .filter((candidate) => candidate.stepIndex === issue.stepIndex)
      .flatMap((candidate) => candidate.codes);
    assert.ok(permitted.includes(issue.code), `unexpected issue: ${context}`);
  }
  // Plan-level issues first, then steps in order (docs/api.md, "runtime.executePlan": "in step order").
  const order = actual.map((issue) => issue.stepIndex ?? -1);
  assert.deepEqual(
    order,
    [...order].sort((left, right) => left - right),
    `issues out of order: ${context}`,
  );
  // stepId names the step when its id is usable.
  const list = 'kind' in plan.steps ? plan.steps.list : [];
  for (const issue of actual) {
    if (issue.stepIndex === undefined) continue;
    const step = list[issue.stepIndex];
    assert.ok(step !== undefined, `issue for a step that does not exist: ${context}`);
    const id = step.form === 'object' && isNonEmptyString(step.id) ? step.id.value : undefined;
    assert.equal(issue.stepId, id, `stepId of ${issue.code}`);
  }
}

// ---------------------------------------------------------------------------------------------
// The property.

describe('property: admission rejects exactly the plans that break a rule, and leaves no trace', () => {
  it(`holds for generated plans with injected violations (${runLabel})`, async () => {
    const capabilities = registerCapabilities();
    await checkProperty(
      fc.asyncProperty(caseArb(capabilities), async (spec) => {
        const plan = concretize(spec, capabilities);
        const expected = oracle(plan, capabilities);
        const { submission, checkedReads, counts } = buildSubmission(plan);
        const asked: CapabilityAuthorizationContext[] = [];
        const runtime = memoryRuntime({
          authorizer: {
            authorize(context) {
              asked.push(context);
              return { decision: 'allow' };
            },
          },
        });
        const events: RuntimeEvent[] = [];
        runtime.subscribe('*', (event) => {
          events.push(event);
        });
        invocations = 0;
        try {
          let outcome: { admitted: true } | { admitted: false; error: unknown };
          try {
            await runtime.executePlan(submission as ExecutionPlan);
            outcome = { admitted: true };
          } catch (error) {
            outcome = { admitted: false, error };
          }
          // Capture reads each structural field exactly once (docs/api.md, "runtime.executePlan").
          for (const { proxy, keys } of checkedReads) {
            const reads = counts.get(proxy) ?? new Map<string, number>();
            for (const key of keys) {
              assert.equal(
                reads.get(key) ?? 0,
                1,
                `field ${key} read ${reads.get(key) ?? 0} times`,
              );
            }
          }
          const jobs = await runtime.listJobs();
          if (expected.length === 0) {
            assert.ok(
              outcome.admitted,
              `a valid plan was rejected: ${outcome.admitted ? '' : String(outcome.error)}`,
            );
            assert.equal(jobs.length, 1);
            assert.equal(events[0]?.type, 'job.created');
            assert.equal(jobs[0]?.steps.length, 'kind' in plan.steps ? plan.steps.list.length : 0);
            return;
          }
          assert.ok(
            !outcome.admitted,
            `an invalid plan was admitted; expected ${JSON.stringify(expected)}`,
          );
          const { error } = outcome;
          assert.ok(isPlanAdmissionError(error), `not a PlanAdmissionError: ${String(error)}`);
          assert.equal(error.code, 'PLAN_ADMISSION_REJECTED');
          checkIssues(plan, expected, error.issues);
          assert.equal(
            error.message,
            PREFIX + error.issues.map((issue) => issue.message).join('; '),
          );
          assert.ok(Object.isFrozen(error.issues));
          assert.ok(error.issues.every((issue) => Object.isFrozen(issue)));
          // Nothing happened: no job, no event, no authorizer call, no capability call.
          assert.deepEqual(jobs, []);
          assert.deepEqual(events, []);
          assert.deepEqual(asked, []);
          assert.equal(invocations, 0);
        } finally {
          await runtime.close();
        }
      }),
    );
  });
});

// ---------------------------------------------------------------------------------------------
// Regression (found by this property, fixed in src/capabilities/input-schema.ts): checkInput
// used to read `input[field.key]`, which finds INHERITED members. For a schema field named like
// an Object.prototype member (`toString`, `valueOf`, `constructor`, ...), an input omitting the
// field saw the inherited function: an omitted optional field was rejected with
// "input.toString must be a string, got a function", an omitted required one was reported as
// INPUT_TYPE_MISMATCH instead of REQUIRED_INPUT_MISSING. Fields are now own properties only,
// at admission and again at step time on resolved inputs.

// `toString` first, so that fast-check shrinks a counterexample to the most familiar name.
const PROTOTYPE_FIELD_NAMES = [
  'toString',
  ...OBJECT_PROTOTYPE_MEMBERS.filter((name) => name !== '__proto__' && name !== 'toString'),
];

interface PrototypeFieldCase {
  readonly key: string;
  readonly type: FieldType;
  readonly required: boolean;
  readonly input: 'omitted' | 'other-keys' | 'present' | 'reference';
}

const prototypeFieldCaseArb: fc.Arbitrary<PrototypeFieldCase> = fc.record({
  key: fc.constantFrom(...PROTOTYPE_FIELD_NAMES),
  type: fc.constantFrom<FieldType>('string', 'number', 'boolean', 'object', 'array'),
  required: fc.boolean(),
  input: fc.constantFrom<PrototypeFieldCase['input']>(
    'omitted',
    'other-keys',
    'present',
    'reference',
  ),
});

function validFieldValue(type: FieldType): unknown {
  return { string: 'text', number: 2, boolean: true, object: {}, array: [] }[type];
}

describe('property: an input field named like an Object.prototype member is read as an own field', () => {
  it(`omitted prototype-named fields are missing, never the inherited member (${runLabel})`, async () => {
    const registry = memoryRuntime();
    const source = uniqueName('prop.admission.source');
    const sourceResult: { other: number } = { other: 1 };
    registry.use({
      manifest: {
        name: uniqueName('prop.admission.source.module'),
        version: '1',
        capabilities: [source],
      },
      capabilities: [
        {
          name: source,
          version: '1',
          description: 'result without fields',
          risk: 'read',
          execute: () => ({ ...sourceResult }),
        },
      ],
    });
    const names = new Map<string, string>();
    const capabilityFor = (key: string, type: FieldType, required: boolean): string => {
      const cacheKey = JSON.stringify([key, type, required]);
      let name = names.get(cacheKey);
      if (name === undefined) {
        name = uniqueName('prop.admission.protofield');
        const schema: Record<string, CapabilityInputField> = {};
        defineOwn(schema, key, { type, required, description: key });
        registry.use({
          manifest: {
            name: uniqueName('prop.admission.protofield.module'),
            version: '1',
            capabilities: [name],
          },
          capabilities: [
            {
              name,
              version: '1',
              description: 'prototype-named field',
              risk: 'read',
              inputSchema: schema,
              execute: () => 'ran',
            },
          ],
        });
        names.set(cacheKey, name);
      }
      return name;
    };
    await registry.close();

    await checkProperty(
      fc.asyncProperty(prototypeFieldCaseArb, async ({ key, type, required, input }) => {
        const capability = capabilityFor(key, type, required);
        const runtime = memoryRuntime({ authorizer: { authorize: () => ({ decision: 'allow' }) } });
        const value: Record<string, unknown> = {};
        if (input === 'other-keys') value.other = 1;
        if (input === 'present') defineOwn(value, key, validFieldValue(type));
        const steps: ExecutionPlan['steps'] =
          input === 'reference'
            ? [
                { id: 'source', capability: source },
                { id: 'use', capability, input: { $ref: 'steps.source.result' } },
              ]
            : [{ id: 'use', capability, input: value }];
        const omitted = input !== 'present';
        try {
          let job;
          try {
            job = await runtime.executePlan({ version: '1.0', steps });
          } catch (error) {
            assert.ok(isPlanAdmissionError(error), String(error));
            assert.ok(
              required && omitted && input !== 'reference',
              `admission rejected a plan that omits only an OPTIONAL field or supplies it: ${error.message}`,
            );
            assert.deepEqual(
              error.issues.map((issue) => [issue.code, issue.field]),
              [['REQUIRED_INPUT_MISSING', `input.${key}`]],
              error.message,
            );
            return;
          }
          if (required && omitted) {
            // Only reachable through a reference (checked at step time).
            assert.equal(input, 'reference', 'an omitted required field was admitted');
            assert.equal(job.status, 'failed');
            assert.match(String(job.error), new RegExp(`input\\.${key} is required`));
          } else {
            assert.equal(job.status, 'completed', String(job.error));
          }
        } finally {
          await runtime.close();
        }
      }),
    );
  });
});
