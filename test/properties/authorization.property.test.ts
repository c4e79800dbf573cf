// Property (a): a capability runs only after an own `decision: 'allow'` for that exact step and
// that exact input object (docs/api.md, "new OperatorRuntime", "runtime.executePlan" and "createCapability").
//
// Each case is a valid plan of 1-6 steps over four registered capabilities (read / write /
// destructive, with and without an input schema, hand-built and made by createCapability with
// lifecycle logging, a timeout and user middleware), inputs with result references, a
// decision per step (allow, deny, garbage, throw, reject, synchronous / promise / later /
// thenable, a proxy whose `decision` changes after the first read) or the default policy, and
// a behaviour per capability call; in half the cases the caller's plan object is edited
// (ids, capabilities, versions, input roots, order, version) while the job runs, which must
// change nothing (docs/api.md, "runtime.executePlan"). A log records every authorizer call and every capability call in
// order. An independent model of docs/api.md predicts, step by step, whether the step resolves,
// validates, is authorized and runs, and what the job records. The identity promise checked is
// the strongest docs/api.md, "new OperatorRuntime" makes: the authorizer's `context.input` IS (===) the object the
// capability receives; a step without references receives its submitted input root itself.
// The context is also checked to be frozen (docs/decisions.md).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  createCapability,
  type Capability,
  type CapabilityAuthorizationContext,
  type CapabilityMiddleware,
  type CapabilityRisk,
  type ExecutionAuthorizer,
  type ExecutionCaller,
  type ExecutionContext,
  type ExecutionPlan,
  type Job,
  type OperatorRuntime,
} from '../../src/index.js';
import { uniqueName } from '../support/runtime-fixtures.js';
import {
  checkProperty,
  memoryRuntime,
  nextTurn,
  plainCopy,
  plainDataArb,
  runLabel,
  stepIdArb,
} from './support.js';

// ---------------------------------------------------------------------------------------------
// The log and the per-case state the registered capabilities read.

interface AuthorizationEntry {
  readonly kind: 'authorize';
  readonly stepId: string;
  readonly context: CapabilityAuthorizationContext;
  /** What the model says this answer means (computed from the spec of the answer). */
  readonly meaning: Meaning;
}

interface InvocationEntry {
  readonly kind: 'invoke';
  readonly stepId: string;
  readonly capability: string;
  readonly input: unknown;
  readonly context: ExecutionContext;
}

type LogEntry = AuthorizationEntry | InvocationEntry;

interface CaseState {
  readonly log: LogEntry[];
  /** Edits the caller's plan once, while the job runs (when the case asks for it). */
  readonly meddle: () => void;
  /** Behaviour of the capability call of each step, by step id. */
  readonly behaviours: ReadonlyMap<string, Behaviour>;
  /** The result object each step's capability returned, by step id. */
  readonly results: Map<string, object>;
}

let current: CaseState | undefined;

function state(): CaseState {
  assert.ok(current !== undefined, 'a capability ran outside of a property case');
  return current;
}

// ---------------------------------------------------------------------------------------------
// Behaviours and results. A result is `{ n, v }`; references address it, `n` or `v` (and into
// `v` when it is an object or an array).

type ResultN = number | string;
type ResultV = { kind: 'number'; value: number } | { kind: 'object' } | { kind: 'array' };

interface Behaviour {
  readonly outcome: 'return' | 'return-later' | 'throw' | 'reject';
  readonly n: ResultN;
  readonly v: ResultV;
  readonly message: string;
}

function buildResult(behaviour: Behaviour): object {
  const v =
    behaviour.v.kind === 'number'
      ? behaviour.v.value
      : behaviour.v.kind === 'object'
        ? { x: 1 }
        : [7];
  return { n: behaviour.n, v };
}

async function invoke(name: string, input: unknown, context: ExecutionContext): Promise<unknown> {
  const { log, behaviours, results, meddle } = state();
  meddle();
  log.push({ kind: 'invoke', stepId: context.stepId, capability: name, input, context });
  const behaviour = behaviours.get(context.stepId);
  assert.ok(behaviour !== undefined, `no behaviour for step ${context.stepId}`);
  if (behaviour.outcome === 'throw') throw new Error(behaviour.message);
  if (behaviour.outcome !== 'return') await nextTurn();
  if (behaviour.outcome === 'reject') throw new Error(behaviour.message);
  const result = buildResult(behaviour);
  results.set(context.stepId, result);
  return result;
}

// ---------------------------------------------------------------------------------------------
// The registered capabilities (the inventory is process-global: registered once, reused).

type SchemaKind = 'none' | 'typed' | 'payload';

interface CapabilityUnderTest {
  readonly name: string;
  readonly version: string;
  readonly risk: CapabilityRisk;
  readonly schema: SchemaKind;
}

const passThrough: CapabilityMiddleware = {
  execute: (execution, next) => next(execution),
};

function registerCapabilities(runtime: OperatorRuntime): CapabilityUnderTest[] {
  const readName = uniqueName('prop.auth.read');
  const writeName = uniqueName('prop.auth.write');
  const destructiveName = uniqueName('prop.auth.destructive');
  const payloadName = uniqueName('prop.auth.payload');
  // Hand-built: the runtime calls execute(input, context) itself.
  const read: Capability = {
    name: readName,
    version: '1.0.0',
    description: 'read, no schema',
    risk: 'read',
    execute: (input, context) => invoke(readName, input, context),
  };
  const write = createCapability({
    name: writeName,
    version: '2.1.0',
    description: 'write, typed input',
    risk: 'write',
    inputSchema: {
      n: { type: 'number', required: true, description: 'a number' },
      label: { type: 'string', required: false, description: 'a label' },
    },
    execute: ({ input, context }) => invoke(writeName, input, context),
  });
  const destructive = createCapability({
    name: destructiveName,
    version: '',
    description: 'destructive, no schema',
    risk: 'destructive',
    lifecycleLogging: false,
    timeoutMs: 60_000,
    middleware: [passThrough],
    execute: ({ input, context }) => invoke(destructiveName, input, context),
  });
  const payload: Capability = {
    name: payloadName,
    version: '0.0.1',
    description: 'read, object payload',
    risk: 'read',
    inputSchema: { payload: { type: 'object', required: true, description: 'payload' } },
    execute: (input, context) => invoke(payloadName, input, context),
  };
  runtime.use({
    manifest: {
      name: uniqueName('prop.auth.module'),
      version: '1.0.0',
      capabilities: [readName, writeName, destructiveName, payloadName],
    },
    capabilities: [read, write, destructive, payload],
  });
  return [
    { name: readName, version: '1.0.0', risk: 'read', schema: 'none' },
    { name: writeName, version: '2.1.0', risk: 'write', schema: 'typed' },
    { name: destructiveName, version: '', risk: 'destructive', schema: 'none' },
    { name: payloadName, version: '0.0.1', risk: 'read', schema: 'payload' },
  ];
}

// ---------------------------------------------------------------------------------------------
// Decisions.

type Delivery = 'sync' | 'promise' | 'later' | 'thenable';

/** What an answer means under docs/api.md, "new OperatorRuntime" (the model's verdict). */
type Meaning =
  | { readonly kind: 'allow' }
  | { readonly kind: 'deny'; readonly reason: string | undefined }
  | { readonly kind: 'invalid' }
  | { readonly kind: 'error'; readonly message: string };

type AllowShape = 'plain' | 'frozen' | 'null-prototype' | 'extra-fields' | 'class-field';
type GarbageShape =
  | 'null'
  | 'undefined'
  | 'string-allow'
  | 'number'
  | 'array'
  | 'array-with-decision'
  | 'empty-object'
  | 'wrong-case'
  | 'padded'
  | 'boolean-decision'
  | 'inherited-allow'
  | 'inherited-getter-allow'
  | 'deny-numeric-reason'
  | 'deny-null-reason'
  | 'deny-getter-numeric-reason'
  | 'inherited-deny';

type DecisionSpec =
  | { readonly kind: 'allow'; readonly shape: AllowShape; readonly delivery: Delivery }
  | {
      readonly kind: 'deny';
      readonly reason: { readonly present: boolean; readonly value: string | undefined };
      readonly delivery: Delivery;
    }
  | { readonly kind: 'garbage'; readonly shape: GarbageShape; readonly delivery: Delivery }
  | { readonly kind: 'flip'; readonly first: 'allow' | 'deny'; readonly delivery: Delivery }
  | { readonly kind: 'throw'; readonly message: string; readonly asRejection: boolean }
  | { readonly kind: 'throw-value'; readonly value: number | string };

const deliveryArb = fc.constantFrom<Delivery>('sync', 'promise', 'later', 'thenable');

const decisionArb: fc.Arbitrary<DecisionSpec> = fc.oneof(
  {
    weight: 14,
    arbitrary: fc.record({
      kind: fc.constant('allow' as const),
      shape: fc.constantFrom<AllowShape>(
        'plain',
        'frozen',
        'null-prototype',
        'extra-fields',
        'class-field',
      ),
      delivery: deliveryArb,
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('deny' as const),
      reason: fc.record({
        present: fc.boolean(),
        value: fc.option(fc.string({ maxLength: 12 }), { nil: undefined }),
      }),
      delivery: deliveryArb,
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('garbage' as const),
      shape: fc.constantFrom<GarbageShape>(
        'null',
        'undefined',
        'string-allow',
        'number',
        'array',
        'array-with-decision',
        'empty-object',
        'wrong-case',
        'padded',
        'boolean-decision',
        'inherited-allow',
        'inherited-getter-allow',
        'deny-numeric-reason',
        'deny-null-reason',
        'deny-getter-numeric-reason',
        'inherited-deny',
      ),
      delivery: deliveryArb,
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('flip' as const),
      first: fc.constantFrom<'allow' | 'deny'>('allow', 'deny'),
      delivery: deliveryArb,
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('throw' as const),
      message: fc.string({ minLength: 1, maxLength: 12 }),
      asRejection: fc.boolean(),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('throw-value' as const),
      value: fc.oneof(fc.integer(), fc.string({ minLength: 1, maxLength: 8 })),
    }),
  },
);

/** The model: what docs/api.md, "new OperatorRuntime" (and docs/decisions.md for thrown values) says an answer means. */
function meaningOf(spec: DecisionSpec): Meaning {
  switch (spec.kind) {
    case 'allow':
      return { kind: 'allow' };
    case 'deny':
      return { kind: 'deny', reason: spec.reason.present ? spec.reason.value : undefined };
    case 'garbage':
      return { kind: 'invalid' };
    case 'flip':
      // `decision` is read once: the first read is the answer.
      return spec.first === 'allow' ? { kind: 'allow' } : { kind: 'deny', reason: undefined };
    case 'throw':
      return { kind: 'error', message: spec.message };
    case 'throw-value':
      return {
        kind: 'error',
        message:
          typeof spec.value === 'string'
            ? spec.value
            : `A non-error value was thrown: ${String(spec.value)}`,
      };
  }
}

class AllowDecision {
  readonly decision = 'allow';
}

function garbage(shape: GarbageShape): unknown {
  switch (shape) {
    case 'null':
      return null;
    case 'undefined':
      return undefined;
    case 'string-allow':
      return 'allow';
    case 'number':
      return 1;
    case 'array':
      return ['allow'];
    case 'array-with-decision':
      return Object.assign(['allow'], { decision: 'allow' });
    case 'empty-object':
      return {};
    case 'wrong-case':
      return { decision: 'Allow' };
    case 'padded':
      return { decision: 'allow ' };
    case 'boolean-decision':
      return { decision: true };
    case 'inherited-allow':
      return Object.create({ decision: 'allow' }) as object;
    case 'inherited-getter-allow':
      // docs/decisions.md: an own getter counts (called once); an inherited one fails closed.
      return new (class {
        get decision() {
          return 'allow';
        }
      })();
    case 'deny-numeric-reason':
      return { decision: 'deny', reason: 42 };
    case 'deny-null-reason':
      return { decision: 'deny', reason: null };
    case 'deny-getter-numeric-reason':
      return {
        decision: 'deny',
        get reason() {
          return 42;
        },
      };
    case 'inherited-deny':
      return Object.create({ decision: 'deny', reason: 'inherited' }) as object;
  }
}

function allowValue(shape: AllowShape): unknown {
  switch (shape) {
    case 'plain':
      return { decision: 'allow' };
    case 'frozen':
      return Object.freeze({ decision: 'allow' });
    case 'null-prototype':
      return Object.assign(Object.create(null) as object, { decision: 'allow' });
    case 'extra-fields':
      return { decision: 'allow', reason: 7, note: 'extra' };
    case 'class-field':
      return new AllowDecision();
  }
}

/** A decision whose `decision` property answers `first` once and the opposite afterwards. */
function flipping(first: 'allow' | 'deny'): unknown {
  const second = first === 'allow' ? 'deny' : 'allow';
  let reads = 0;
  return new Proxy<Record<string, unknown>>(
    { decision: first },
    {
      getOwnPropertyDescriptor(target, key) {
        if (key !== 'decision') return Reflect.getOwnPropertyDescriptor(target, key);
        reads += 1;
        return {
          value: reads === 1 ? first : second,
          writable: true,
          enumerable: true,
          configurable: true,
        };
      },
      get(target, key, receiver) {
        if (key === 'decision') return reads === 0 ? first : second;
        return Reflect.get(target, key, receiver) as unknown;
      },
    },
  );
}

function deliver(value: unknown, delivery: Delivery): unknown {
  switch (delivery) {
    case 'sync':
      return value;
    case 'promise':
      return Promise.resolve().then(() => value);
    case 'later':
      return nextTurn().then(() => value);
    case 'thenable':
      return {
        then(resolve: (answer: unknown) => void) {
          resolve(value);
        },
      };
  }
}

/** Builds the answer fresh for every call (shrinking replays cases). */
function answer(spec: DecisionSpec): unknown {
  switch (spec.kind) {
    case 'allow':
      return deliver(allowValue(spec.shape), spec.delivery);
    case 'deny': {
      const value: Record<string, unknown> = { decision: 'deny' };
      if (spec.reason.present) value.reason = spec.reason.value;
      return deliver(value, spec.delivery);
    }
    case 'garbage':
      return deliver(garbage(spec.shape), spec.delivery);
    case 'flip':
      return deliver(flipping(spec.first), spec.delivery);
    case 'throw':
      if (spec.asRejection) return nextTurn().then(() => Promise.reject(new Error(spec.message)));
      throw new Error(spec.message);
    case 'throw-value':
      throw spec.value;
  }
}

// ---------------------------------------------------------------------------------------------
// Plans.

/** Where a reference points inside an earlier result `{ n, v }`. */
type RefPath = 'whole' | 'n' | 'v' | 'v.x' | 'v.0' | 'missing' | 'toString' | 'constructor';

const refPathArb = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom<RefPath>('whole', 'n', 'v', 'v.x', 'v.0') },
  { weight: 1, arbitrary: fc.constantFrom<RefPath>('missing', 'toString', 'constructor') },
);

interface RefSpec {
  /** Picks one of the earlier steps (modulo their number). */
  readonly target: number;
  readonly path: RefPath;
}

const refArb: fc.Arbitrary<RefSpec> = fc.record({ target: fc.nat(), path: refPathArb });

/** Inputs per capability kind; a reference falls back to literal data on the first step. */
type InputSpec =
  | { readonly kind: 'absent' }
  | { readonly kind: 'data'; readonly value: unknown }
  | { readonly kind: 'root-ref'; readonly ref: RefSpec }
  | { readonly kind: 'nested-ref'; readonly ref: RefSpec; readonly data: unknown }
  | { readonly kind: 'typed'; readonly n: number | RefSpec; readonly label: string | undefined }
  | { readonly kind: 'payload'; readonly payload: unknown /* data or a RefSpec */ };

const looseInputArb: fc.Arbitrary<InputSpec> = fc.oneof(
  fc.constant({ kind: 'absent' as const }),
  fc.record({ kind: fc.constant('data' as const), value: plainDataArb }),
  fc.record({ kind: fc.constant('root-ref' as const), ref: refArb }),
  fc.record({ kind: fc.constant('nested-ref' as const), ref: refArb, data: plainDataArb }),
);

const finiteArb = fc.double({ noNaN: true, noDefaultInfinity: true });

const typedInputArb: fc.Arbitrary<InputSpec> = fc.oneof(
  fc.record({
    kind: fc.constant('typed' as const),
    n: fc.oneof(finiteArb, refArb),
    label: fc.option(fc.string({ maxLength: 5 }), { nil: undefined }),
  }),
  fc.record({ kind: fc.constant('root-ref' as const), ref: refArb }),
);

const payloadInputArb: fc.Arbitrary<InputSpec> = fc.record({
  kind: fc.constant('payload' as const),
  payload: fc.oneof(
    fc.dictionary(
      fc.string({ maxLength: 3 }).filter((key) => key !== '$ref'),
      plainDataArb,
      { maxKeys: 3 },
    ),
    refArb,
  ),
});

interface StepSpec {
  readonly id: string;
  readonly capability: number;
  readonly pinVersion: boolean;
  readonly input: InputSpec;
  readonly decision: DecisionSpec;
  readonly behaviour: Behaviour;
}

const behaviourArb: fc.Arbitrary<Behaviour> = fc.record({
  outcome: fc.oneof(
    { weight: 10, arbitrary: fc.constantFrom<Behaviour['outcome']>('return', 'return-later') },
    { weight: 1, arbitrary: fc.constantFrom<Behaviour['outcome']>('throw', 'reject') },
  ),
  n: fc.oneof(
    { weight: 4, arbitrary: fc.integer() },
    { weight: 1, arbitrary: fc.constantFrom<ResultN>('seven', '', Number.NaN, Infinity) },
  ),
  v: fc.oneof(
    fc.record({ kind: fc.constant('number' as const), value: fc.integer() }),
    fc.constant({ kind: 'object' as const }),
    fc.constant({ kind: 'array' as const }),
  ),
  message: fc.string({ minLength: 1, maxLength: 10 }),
});

function stepSpecArb(id: string): fc.Arbitrary<StepSpec> {
  return fc.nat({ max: 3 }).chain((capability) =>
    fc.record({
      id: fc.constant(id),
      capability: fc.constant(capability),
      pinVersion: fc.boolean(),
      input: capability === 1 ? typedInputArb : capability === 3 ? payloadInputArb : looseInputArb,
      decision: decisionArb,
      behaviour: behaviourArb,
    }),
  );
}

interface CaseSpec {
  readonly steps: readonly StepSpec[];
  /** Default policy (no authorizer) instead of the scripted, logging authorizer. */
  readonly defaultPolicy: boolean;
  readonly caller: ExecutionCaller | undefined;
  /** Edit the submitted plan while the job runs: it must change nothing (docs/api.md, "runtime.executePlan"). */
  readonly meddle: boolean;
}

const caseArb: fc.Arbitrary<CaseSpec> = fc
  .uniqueArray(stepIdArb, { minLength: 1, maxLength: 6 })
  .chain((ids) =>
    fc.record({
      steps: fc.tuple(...ids.map(stepSpecArb)),
      defaultPolicy: fc.oneof(
        { weight: 1, arbitrary: fc.constant(true) },
        { weight: 4, arbitrary: fc.constant(false) },
      ),
      caller: fc.option(
        fc.record({
          id: fc.string({ maxLength: 5 }),
          scopes: fc.array(fc.string(), { maxLength: 2 }),
        }),
        { nil: undefined },
      ),
      meddle: fc.boolean(),
    }),
  );

function refText(spec: CaseSpec, index: number, ref: RefSpec): string {
  const target = spec.steps[ref.target % index] as StepSpec;
  const suffix = ref.path === 'whole' ? '' : `.${ref.path}`;
  return `steps.${target.id}.result${suffix}`;
}

/** The caller's input, built fresh (references included). */
function buildInput(spec: CaseSpec, index: number): unknown {
  const step = spec.steps[index] as StepSpec;
  const input = step.input;
  const reference = (ref: RefSpec) => ({ $ref: refText(spec, index, ref) });
  const isRef = (value: unknown): value is RefSpec =>
    typeof value === 'object' && value !== null && 'path' in value && 'target' in value;
  switch (input.kind) {
    case 'absent':
      return undefined;
    case 'data':
      return plainCopy(input.value);
    case 'root-ref':
      // On the first step there is nothing to refer to: data valid for every schema instead.
      return index === 0 ? { n: 0, payload: {} } : reference(input.ref);
    case 'nested-ref':
      return index === 0
        ? { data: plainCopy(input.data) }
        : { data: plainCopy(input.data), list: [1, { at: reference(input.ref) }] };
    case 'typed': {
      const built: Record<string, unknown> = {
        n: isRef(input.n) ? (index === 0 ? 1 : reference(input.n)) : input.n,
      };
      if (input.label !== undefined) built.label = input.label;
      return built;
    }
    case 'payload':
      return {
        payload: isRef(input.payload)
          ? index === 0
            ? {}
            : reference(input.payload)
          : plainCopy(input.payload),
      };
  }
}

function buildPlan(spec: CaseSpec, capabilities: readonly CapabilityUnderTest[]): ExecutionPlan {
  return {
    version: '1.0',
    goal: 'property (a)',
    steps: spec.steps.map((step, index) => {
      const capability = capabilities[step.capability] as CapabilityUnderTest;
      const built: ExecutionPlan['steps'][number] = { id: step.id, capability: capability.name };
      if (step.pinVersion) built.capabilityVersion = capability.version;
      const input = buildInput(spec, index);
      if (input !== undefined || step.input.kind !== 'absent') built.input = input;
      return built;
    }),
  };
}

// ---------------------------------------------------------------------------------------------
// The model of one run.

/** The modelled value a reference resolves to, or `unresolvable`. */
type Modelled = { readonly ok: true; readonly value: unknown } | { readonly ok: false };

function resolveModel(result: object, behaviour: Behaviour, path: RefPath): Modelled {
  const v = (result as { v: unknown }).v;
  switch (path) {
    case 'whole':
      return { ok: true, value: result };
    case 'n':
      return { ok: true, value: behaviour.n };
    case 'v':
      return { ok: true, value: v };
    case 'v.x':
      return behaviour.v.kind === 'object' ? { ok: true, value: 1 } : { ok: false };
    case 'v.0':
      return behaviour.v.kind === 'array' ? { ok: true, value: 7 } : { ok: false };
    case 'missing':
    case 'toString':
    case 'constructor':
      // Not own properties of `{ n, v }`: the reference must not resolve (docs/api.md, "Plans and result references").
      return { ok: false };
  }
}

type ModelStepOutcome =
  | { readonly kind: 'completed' }
  | { readonly kind: 'failed-before-authorization' }
  | { readonly kind: 'refused'; readonly meaning: Meaning }
  | { readonly kind: 'failed-in-capability'; readonly message: string };

function isFiniteNumber(value: unknown): boolean {
  return typeof value === 'number' && Number.isFinite(value);
}

function isObjectValue(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Resolves the input of step `index` in the model: `unresolvable` when a reference does not
 * resolve; otherwise whether the resolved input passes the schema, and the value a reference
 * resolved to (for identity checks).
 */
function modelStepInput(
  spec: CaseSpec,
  index: number,
  capability: CapabilityUnderTest,
  results: readonly object[],
): { resolved: boolean; valid: boolean; referenced: Modelled | undefined } {
  const step = spec.steps[index] as StepSpec;
  const input = step.input;
  const lookup = (ref: RefSpec): Modelled => {
    const targetIndex = ref.target % index;
    const target = spec.steps[targetIndex] as StepSpec;
    return resolveModel(results[targetIndex] as object, target.behaviour, ref.path);
  };
  const refOf = (value: unknown): RefSpec | undefined =>
    typeof value === 'object' && value !== null && 'path' in value ? (value as RefSpec) : undefined;
  let referenced: Modelled | undefined;
  if (index > 0) {
    if (input.kind === 'root-ref' || input.kind === 'nested-ref') referenced = lookup(input.ref);
    if (input.kind === 'typed' && refOf(input.n)) referenced = lookup(refOf(input.n) as RefSpec);
    if (input.kind === 'payload' && refOf(input.payload))
      referenced = lookup(refOf(input.payload) as RefSpec);
  }
  if (referenced !== undefined && !referenced.ok)
    return { resolved: false, valid: false, referenced };
  const value = referenced?.ok === true ? referenced.value : undefined;
  if (capability.schema === 'typed') {
    if (input.kind === 'root-ref' && index > 0) {
      // The whole input is the referenced value: it must be an object with a finite `n`.
      const valid = isObjectValue(value) && isFiniteNumber((value as { n?: unknown }).n);
      return { resolved: true, valid, referenced };
    }
    if (input.kind === 'typed') {
      const n = referenced === undefined ? (refOf(input.n) ? 1 : input.n) : value;
      return { resolved: true, valid: isFiniteNumber(n), referenced };
    }
    return { resolved: true, valid: true, referenced };
  }
  if (capability.schema === 'payload' && referenced !== undefined) {
    return { resolved: true, valid: isObjectValue(value), referenced };
  }
  return { resolved: true, valid: true, referenced };
}

function defaultPolicyMeaning(risk: CapabilityRisk): Meaning {
  if (risk === 'read') return { kind: 'allow' };
  return {
    kind: 'deny',
    reason:
      risk === 'write'
        ? 'Write capability requires explicit approval.'
        : 'Destructive capability requires explicit approval.',
  };
}

function expectedError(meaning: Meaning, capability: string): string {
  switch (meaning.kind) {
    case 'deny':
      return meaning.reason ?? `Capability not permitted: ${capability}`;
    case 'invalid':
      return 'Invalid authorization decision';
    case 'error':
      return meaning.message;
    case 'allow':
      return assert.fail('an allow has no error');
  }
}

// ---------------------------------------------------------------------------------------------
// The property.

/** A plain caller object (fast-check records may have a null prototype). */
function buildCaller(caller: ExecutionCaller): ExecutionCaller {
  return { id: caller.id, scopes: [...(caller.scopes ?? [])] };
}

async function runCase(
  spec: CaseSpec,
  capabilities: readonly CapabilityUnderTest[],
): Promise<void> {
  const log: LogEntry[] = [];
  const results = new Map<string, object>();
  const plan = buildPlan(spec, capabilities);
  const submittedInputs = plan.steps.map((step) => plainCopy(step.input));
  const inputRoots = plan.steps.map((step) => step.input);
  let meddled = !spec.meddle;
  const meddle = () => {
    if (meddled) return;
    meddled = true;
    // Later caller edits cannot redirect the submission: rename, rebind, re-root, reorder.
    for (const step of plan.steps) {
      step.id = `${step.id}!`;
      step.capability = (capabilities[0] as CapabilityUnderTest).name;
      step.capabilityVersion = 'edited';
      step.input = { edited: true };
    }
    plan.steps.reverse();
    plan.steps.push({ id: 'added', capability: (capabilities[2] as CapabilityUnderTest).name });
    (plan as { version: string }).version = 'edited';
  };
  current = {
    log,
    results,
    meddle,
    behaviours: new Map(spec.steps.map((step) => [step.id, step.behaviour])),
  };
  const decisions = new Map(spec.steps.map((step) => [step.id, step.decision]));
  const authorizer: ExecutionAuthorizer = {
    authorize(context) {
      const decision = decisions.get(context.stepId);
      assert.ok(decision !== undefined, `authorizer asked about unknown step ${context.stepId}`);
      log.push({
        kind: 'authorize',
        stepId: context.stepId,
        context,
        meaning: meaningOf(decision),
      });
      meddle();
      return answer(decision) as never;
    },
  };
  const runtime = memoryRuntime(spec.defaultPolicy ? {} : { authorizer });
  let job: Job;
  try {
    job = await runtime.executePlan(
      plan,
      spec.caller === undefined ? {} : { caller: buildCaller(spec.caller) },
    );
  } finally {
    current = undefined;
  }
  try {
    checkRun(spec, capabilities, inputRoots, submittedInputs, job, log, results);
  } finally {
    await runtime.close();
  }
}

function checkRun(
  spec: CaseSpec,
  capabilities: readonly CapabilityUnderTest[],
  inputRoots: readonly unknown[],
  submittedInputs: readonly unknown[],
  job: Job,
  log: readonly LogEntry[],
  results: ReadonlyMap<string, object>,
): void {
  // 1. The invariant itself, read off the log: every invocation is IMMEDIATELY preceded by an
  //    authorizer call for the same step whose answer was an allow, and the capability got the
  //    very object the authorizer was shown (===). Every step is asked and run at most once.
  if (!spec.defaultPolicy) {
    log.forEach((entry, position) => {
      if (entry.kind !== 'invoke') return;
      const before = log[position - 1];
      assert.ok(before?.kind === 'authorize', `step ${entry.stepId} ran without being authorized`);
      assert.equal(before.stepId, entry.stepId, 'authorized a different step than the one run');
      assert.equal(before.meaning.kind, 'allow', `step ${entry.stepId} ran without an allow`);
      assert.ok(
        Object.is(before.context.input, entry.input),
        'the capability received a different input object than the authorizer saw',
      );
    });
  }
  for (const kind of ['authorize', 'invoke'] as const) {
    const ids = log.filter((entry) => entry.kind === kind).map((entry) => entry.stepId);
    assert.equal(new Set(ids).size, ids.length, `a step was asked to ${kind} twice`);
  }

  // 2. The model, step by step.
  const modelResults: object[] = [];
  const expectedLog: string[] = [];
  let failure: { index: number; outcome: ModelStepOutcome } | undefined;
  for (const [index, step] of spec.steps.entries()) {
    const capability = capabilities[step.capability] as CapabilityUnderTest;
    const modelled = modelStepInput(spec, index, capability, modelResults);
    if (!modelled.resolved || !modelled.valid) {
      failure = { index, outcome: { kind: 'failed-before-authorization' } };
      break;
    }
    const meaning = spec.defaultPolicy
      ? defaultPolicyMeaning(capability.risk)
      : meaningOf(step.decision);
    if (!spec.defaultPolicy) expectedLog.push(`authorize ${step.id}`);
    if (meaning.kind !== 'allow') {
      failure = { index, outcome: { kind: 'refused', meaning } };
      break;
    }
    expectedLog.push(`invoke ${step.id}`);
    const entry = log.find(
      (candidate): candidate is InvocationEntry =>
        candidate.kind === 'invoke' && candidate.stepId === step.id,
    );
    assert.ok(entry !== undefined, `step ${step.id} was allowed but its capability never ran`);
    checkInvocation(spec, index, capability, inputRoots, job, entry, modelled.referenced);
    if (step.behaviour.outcome === 'throw' || step.behaviour.outcome === 'reject') {
      failure = {
        index,
        outcome: { kind: 'failed-in-capability', message: step.behaviour.message },
      };
      break;
    }
    const result = results.get(step.id);
    assert.ok(result !== undefined);
    modelResults.push(result);
  }
  assert.deepEqual(
    log.map((entry) => `${entry.kind} ${entry.stepId}`),
    expectedLog,
    'authorizer and capability calls differ from the model',
  );

  // 3. Authorizer contexts: frozen (docs/decisions.md), about this job, step and capability.
  const callers = new Set<unknown>();
  for (const entry of log) {
    if (entry.kind !== 'authorize') continue;
    const step = spec.steps.find((candidate) => candidate.id === entry.stepId) as StepSpec;
    const capability = capabilities[step.capability] as CapabilityUnderTest;
    assert.ok(Object.isFrozen(entry.context), 'authorization context is not frozen');
    assert.equal(entry.context.jobId, job.id);
    assert.deepEqual(entry.context.capability, {
      name: capability.name,
      version: capability.version,
      risk: capability.risk,
    });
    callers.add(entry.context.caller);
    if (spec.caller === undefined) assert.equal(entry.context.caller, undefined);
    else assert.deepEqual(entry.context.caller, buildCaller(spec.caller));
  }
  for (const entry of log) if (entry.kind === 'invoke') callers.add(entry.context.caller);
  assert.ok(callers.size <= 1, 'the caller snapshot differs between calls of one job');

  // 4. The job record.
  assert.equal(job.steps.length, spec.steps.length);
  const startedSteps = job.events
    .filter((event) => event.type === 'capability.started')
    .map((event) => event.data?.stepId);
  assert.deepEqual(
    startedSteps,
    log.filter((entry) => entry.kind === 'invoke').map((entry) => entry.stepId),
    'capability.started events differ from the capability calls',
  );
  if (failure === undefined) {
    assert.equal(job.status, 'completed');
    assert.equal(job.outcome, 'success');
    assert.equal(job.error, undefined);
    assert.ok(job.steps.every((step) => step.status === 'completed'));
    assert.equal(job.events.at(-1)?.type, 'job.completed');
    const expected = spec.steps.map((step) => results.get(step.id));
    if (expected.length === 1) assert.equal(job.result, expected[0]);
    else assert.deepEqual(job.result, expected);
  } else {
    const { index, outcome } = failure;
    const step = spec.steps[index] as StepSpec;
    const capability = capabilities[step.capability] as CapabilityUnderTest;
    assert.equal(job.status, 'failed');
    assert.equal(job.outcome, 'failed');
    job.steps.forEach((record, position) => {
      const expected = position < index ? 'completed' : position === index ? 'failed' : 'skipped';
      assert.equal(record.status, expected, `steps[${position}] status`);
    });
    const failedStep = job.steps[index];
    assert.equal(failedStep?.error, job.error);
    const last = job.events.at(-1);
    const cause = job.events.at(-2);
    assert.equal(last?.type, 'job.failed');
    if (outcome.kind === 'refused') {
      assert.equal(job.error, expectedError(outcome.meaning, capability.name));
      assert.equal(failedStep?.startedAt, undefined, 'a refused step has no start');
      assert.equal(
        cause?.type,
        outcome.meaning.kind === 'deny' ? 'capability.denied' : 'capability.failed',
      );
    } else if (outcome.kind === 'failed-in-capability') {
      assert.equal(job.error, outcome.message);
      assert.equal(cause?.type, 'capability.failed');
    } else {
      assert.equal(cause?.type, 'capability.failed');
      assert.equal(failedStep?.startedAt, undefined);
    }
    // docs/api.md, "Jobs and events" event payloads, plus the input digest when a decision was made (docs/api.md,
    // "The decision record"): a step refused or failed in its capability was decided on.
    const decided = outcome.kind === 'refused' || outcome.kind === 'failed-in-capability';
    const inputDigest = failedStep?.decision?.inputDigest;
    if (decided) assert.match(inputDigest ?? '', /^sha256:[0-9a-f]{64}$/);
    else assert.equal(failedStep?.decision, undefined, 'no decision before authorization');
    const payload =
      cause?.type === 'capability.denied'
        ? { stepId: step.id, capability: capability.name, risk: capability.risk, reason: job.error }
        : { stepId: step.id, capability: capability.name, error: job.error };
    // A step refused at its decision: the event carries the decision's fields too (docs/api.md,
    // "Jobs and events"), so verifyJob proves the decision a reader sees.
    const made = failedStep?.decision;
    const decision =
      outcome.kind === 'refused' && made !== undefined
        ? {
            outcome: made.outcome,
            ...(cause?.type === 'capability.failed' &&
              made.reason !== undefined && { reason: made.reason }),
            capabilityVersion: made.capabilityVersion,
            ...(made.authorizer !== undefined && { authorizer: made.authorizer }),
            decidedAt: made.decidedAt,
          }
        : {};
    assert.deepEqual(cause?.data, decided ? { ...payload, inputDigest, ...decision } : payload);
    assert.deepEqual(last?.data, { error: job.error });
  }

  // 5. The caller's inputs were never written to (references stay in place), and the job
  //    records the submitted roots (docs/decisions.md), whatever the caller edited meanwhile.
  assert.deepEqual(
    job.steps.map((step) => step.id),
    spec.steps.map((step) => step.id),
  );
  inputRoots.forEach((root, index) => {
    assert.deepEqual(plainCopy(root), submittedInputs[index], `steps[${index}].input`);
    assert.equal(job.steps[index]?.input, root, 'job records the submitted input root');
  });
}

/** The capability's context and input for step `index`: identity as far as docs/api.md promises. */
function checkInvocation(
  spec: CaseSpec,
  index: number,
  capability: CapabilityUnderTest,
  inputRoots: readonly unknown[],
  job: Job,
  entry: InvocationEntry,
  referenced: Modelled | undefined,
): void {
  const step = spec.steps[index] as StepSpec;
  assert.equal(entry.capability, capability.name);
  assert.equal(entry.context.jobId, job.id);
  assert.equal(entry.context.stepId, step.id);
  const submitted = inputRoots[index];
  if (referenced === undefined) {
    // No reference: the input root is handed over by identity (docs/decisions.md).
    assert.ok(Object.is(entry.input, submitted), 'input root not passed by identity');
    return;
  }
  assert.ok(referenced.ok);
  const { input } = entry;
  switch (step.input.kind) {
    case 'root-ref':
      assert.ok(Object.is(input, referenced.value), 'root reference not resolved to its value');
      return;
    case 'nested-ref': {
      assert.notEqual(input, submitted, 'the caller input was resolved in place');
      const list = (input as { list: [number, { at: unknown }] }).list;
      assert.ok(Object.is(list[1].at, referenced.value));
      return;
    }
    case 'typed':
      assert.ok(Object.is((input as { n: unknown }).n, referenced.value));
      return;
    case 'payload':
      assert.ok(Object.is((input as { payload: unknown }).payload, referenced.value));
      return;
    default:
      assert.fail(`unexpected reference in ${step.input.kind} input`);
  }
}

describe('property: a capability runs only after an own allow for that step and input', () => {
  it(`holds for generated plans, inputs and decisions (${runLabel})`, async () => {
    const runtime = memoryRuntime();
    const capabilities = registerCapabilities(runtime);
    await runtime.close();
    await checkProperty(
      fc.asyncProperty(caseArb, async (spec) => {
        await runCase(spec, capabilities);
      }),
    );
  });
});
