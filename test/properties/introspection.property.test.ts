// Property (d): listCapabilities() / describeCapability() snapshots never alias registered data
// (docs/api.md, "runtime.listCapabilities"), and editing the objects a capability was registered from changes
// nothing (docs/api.md, "createCapability", docs/decisions.md "Registration snapshots").
//
// Capabilities are generated (hand-built objects and createCapability definitions; any version
// including '', all risks, schemas with field names such as `constructor`, `toString`, `0`).
// A pool is registered before the run; about one case in 80 registers one or two more (the
// inventory is process-global and listCapabilities() is linear in it, so registering in every
// one of 10,000 cases would make the run quadratic). Every case then:
//   1. takes a snapshot and checks it against descriptors computed from the generated specs
//      (the descriptors the case touches in full every case, all of them every 50th case and
//      after the run: damage to registered data would persist, so it is still caught);
//   2. mutates that snapshot (and a describeCapability() answer, and the list array) deeply:
//      sets, deletes, adds, replaces records, changes prototypes, freezes;
//   3. mutates the live definition / capability / schema / manifest objects it registered;
//   4. checks that a new snapshot is again exactly the expected descriptors, built of fresh,
//      unfrozen objects sharing nothing with the first, and that admission and execution still
//      follow the registered schema, version and execute function;
//   5. checks that introspection called no authorizer or capability and published no event.
// Mutations of pool objects accumulate over the run, which only makes the property stronger.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  createCapability,
  isPlanAdmissionError,
  type Capability,
  type CapabilityDescriptor,
  type CapabilityInputField,
  type CapabilityModule,
  type CapabilityRisk,
  type OperatorRuntime,
  type RuntimeEvent,
} from '../../src/index.js';
import { uniqueName } from '../support/runtime-fixtures.js';
import { checkProperty, defineOwn, memoryRuntime, runLabel, settings } from './support.js';

type FieldType = CapabilityInputField['type'];

// ---------------------------------------------------------------------------------------------
// Generated capability specs and the descriptors docs/api.md, "runtime.listCapabilities" says they must produce.

interface FieldSpec {
  readonly key: string;
  readonly type: FieldType;
  readonly required: boolean;
  readonly description: string;
}

interface CapabilitySpec {
  readonly style: 'hand-built' | 'createCapability';
  readonly version: string;
  readonly description: string;
  readonly risk: CapabilityRisk;
  /** Undefined: no inputSchema at all. */
  readonly schema: readonly FieldSpec[] | undefined;
}

const FIELD_KEYS = [
  'a',
  'name',
  'constructor',
  'toString',
  'valueOf',
  'hasOwnProperty',
  'then',
  '0',
  '10',
  ' ',
  'ü',
  '$ref',
  'type',
  'required',
  'description',
  'inputSchema',
];
const TYPES: readonly FieldType[] = ['string', 'number', 'boolean', 'object', 'array'];

const fieldSpecArb = (key: string): fc.Arbitrary<FieldSpec> =>
  fc.record({
    key: fc.constant(key),
    type: fc.constantFrom(...TYPES),
    required: fc.boolean(),
    description: fc.string({ maxLength: 6 }),
  });

const capabilitySpecArb: fc.Arbitrary<CapabilitySpec> = fc.record({
  style: fc.constantFrom<CapabilitySpec['style']>('hand-built', 'createCapability'),
  version: fc.oneof(fc.constantFrom('', '1.0.0', '2'), fc.string({ maxLength: 5 })),
  description: fc.string({ maxLength: 8 }),
  risk: fc.constantFrom<CapabilityRisk>('read', 'write', 'destructive'),
  schema: fc.option(
    fc
      .uniqueArray(fc.constantFrom(...FIELD_KEYS), { maxLength: 4 })
      .chain((keys) => fc.tuple(...keys.map(fieldSpecArb))),
    { nil: undefined, freq: 4 },
  ),
});

function expectedDescriptor(name: string, spec: CapabilitySpec): CapabilityDescriptor {
  const inputSchema: Record<string, CapabilityInputField> = {};
  for (const field of spec.schema ?? []) {
    defineOwn(inputSchema, field.key, {
      type: field.type,
      required: field.required,
      description: field.description,
    });
  }
  return {
    name,
    version: spec.version,
    description: spec.description,
    risk: spec.risk,
    inputSchema,
  };
}

// ---------------------------------------------------------------------------------------------
// Registration: the live objects are kept so that cases can mutate them afterwards.

interface Tracked {
  readonly name: string;
  readonly spec: CapabilitySpec;
  readonly expected: CapabilityDescriptor;
  /** Objects the registration was made from (mutated by later cases). */
  readonly live: {
    readonly definition: Record<string, unknown>;
    readonly schema: Record<string, unknown> | undefined;
    readonly capability: object;
    readonly module: CapabilityModule;
  };
}

const FULL_CHECK_EVERY = 50;

/** Every capability call, by the name the capability was registered under. */
const calls: string[] = [];

function register(runtime: OperatorRuntime, specs: readonly CapabilitySpec[]): Tracked[] {
  const built = specs.map((spec) => {
    const name = uniqueName('prop.intro');
    let schema: Record<string, unknown> | undefined;
    if (spec.schema !== undefined) {
      schema = {};
      for (const field of spec.schema) {
        defineOwn(schema, field.key, {
          type: field.type,
          required: field.required,
          description: field.description,
        });
      }
    }
    const definition: Record<string, unknown> = {
      name,
      version: spec.version,
      description: spec.description,
      risk: spec.risk,
    };
    if (schema !== undefined) definition.inputSchema = schema;
    let capability: object;
    if (spec.style === 'hand-built') {
      definition.execute = () => {
        calls.push(name);
        return 'registered';
      };
      capability = definition;
    } else {
      definition.execute = () => {
        calls.push(name);
        return 'registered';
      };
      definition.lifecycleLogging = false;
      capability = createCapability(definition as never);
    }
    return { name, spec, definition, schema, capability };
  });
  const module: CapabilityModule = {
    manifest: {
      name: uniqueName('prop.intro.module'),
      version: '1',
      capabilities: built.map((entry) => entry.name),
    },
    capabilities: built.map((entry) => entry.capability as Capability),
  };
  runtime.use(module);
  return built.map((entry) => ({
    name: entry.name,
    spec: entry.spec,
    expected: expectedDescriptor(entry.name, entry.spec),
    live: {
      definition: entry.definition,
      schema: entry.schema,
      capability: entry.capability,
      module,
    },
  }));
}

// ---------------------------------------------------------------------------------------------
// Mutations. Reflect.* is used so that frozen objects (a createCapability result, a snapshot a
// previous operation froze) make an operation a no-op instead of a TypeError.

type Garbage = 'string' | 'number' | 'null' | 'object' | 'undefined';

const GARBAGE: Record<Garbage, () => unknown> = {
  string: () => 'MUTATED',
  number: () => 13,
  null: () => null,
  object: () => ({ type: 'string', required: true, description: 'injected' }),
  undefined: () => undefined,
};

type Mutation =
  | { readonly op: 'set'; readonly key: string; readonly garbage: Garbage }
  | { readonly op: 'delete'; readonly key: string }
  | {
      readonly op: 'set-in-schema';
      readonly pick: number;
      readonly key: string;
      readonly garbage: Garbage;
    }
  | { readonly op: 'delete-in-schema'; readonly pick: number }
  | { readonly op: 'add-schema-field'; readonly key: string }
  | { readonly op: 'replace-schema' }
  | { readonly op: 'prototype' }
  | { readonly op: 'freeze' }
  | { readonly op: 'replace-execute' };

const TOP_KEYS = ['name', 'version', 'description', 'risk', 'inputSchema', 'execute', 'extra'];
const RECORD_KEYS = ['type', 'required', 'description', 'extra'];

const garbageArb = fc.constantFrom<Garbage>('string', 'number', 'null', 'object', 'undefined');

const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({
    op: fc.constant('set' as const),
    key: fc.constantFrom(...TOP_KEYS),
    garbage: garbageArb,
  }),
  fc.record({ op: fc.constant('delete' as const), key: fc.constantFrom(...TOP_KEYS) }),
  fc.record({
    op: fc.constant('set-in-schema' as const),
    pick: fc.nat(),
    key: fc.constantFrom(...RECORD_KEYS),
    garbage: garbageArb,
  }),
  fc.record({ op: fc.constant('delete-in-schema' as const), pick: fc.nat() }),
  fc.record({
    op: fc.constant('add-schema-field' as const),
    key: fc.constantFrom(...FIELD_KEYS, 'new'),
  }),
  fc.constant({ op: 'replace-schema' as const }),
  fc.constant({ op: 'prototype' as const }),
  fc.constant({ op: 'freeze' as const }),
  fc.constant({ op: 'replace-execute' as const }),
);

function asObject(value: unknown): object | undefined {
  return typeof value === 'object' && value !== null ? value : undefined;
}

/** Applies a mutation to an object shaped like a descriptor / definition. */
function mutate(target: object, mutation: Mutation): void {
  const schema = asObject(Reflect.get(target, 'inputSchema'));
  const schemaKeys = schema === undefined ? [] : Reflect.ownKeys(schema).map(String);
  const pickRecord = (pick: number): object | undefined => {
    if (schema === undefined || schemaKeys.length === 0) return undefined;
    return asObject(Reflect.get(schema, schemaKeys[pick % schemaKeys.length] as string));
  };
  switch (mutation.op) {
    case 'set':
      Reflect.set(target, mutation.key, GARBAGE[mutation.garbage]());
      return;
    case 'delete':
      Reflect.deleteProperty(target, mutation.key);
      return;
    case 'set-in-schema': {
      const record = pickRecord(mutation.pick);
      if (record !== undefined) Reflect.set(record, mutation.key, GARBAGE[mutation.garbage]());
      return;
    }
    case 'delete-in-schema':
      if (schema !== undefined && schemaKeys.length > 0) {
        Reflect.deleteProperty(schema, schemaKeys[mutation.pick % schemaKeys.length] as string);
      }
      return;
    case 'add-schema-field':
      if (schema !== undefined) {
        Reflect.set(schema, mutation.key, { type: 'number', required: true, description: 'x' });
      }
      return;
    case 'replace-schema':
      Reflect.set(target, 'inputSchema', {
        injected: { type: 'string', required: true, description: 'injected' },
      });
      return;
    case 'prototype':
      if (schema !== undefined) {
        Reflect.setPrototypeOf(schema, {
          inherited: { type: 'string', required: true, description: 'inherited' },
        });
      }
      Reflect.setPrototypeOf(target, { name: 'INHERITED', risk: 'read' });
      return;
    case 'freeze':
      if (schema !== undefined) {
        for (const key of schemaKeys) {
          const record = asObject(Reflect.get(schema, key));
          if (record !== undefined) Object.freeze(record);
        }
        Object.freeze(schema);
      }
      Object.freeze(target);
      return;
    case 'replace-execute':
      Reflect.set(target, 'execute', () => {
        calls.push('MUTATED');
        return 'mutated';
      });
      return;
  }
}

type ListMutation = 'reverse' | 'splice' | 'push' | 'fill' | 'none';

interface CaseSpec {
  /** Capabilities to register in this case (empty in most cases). */
  readonly fresh: readonly CapabilitySpec[];
  readonly snapshotMutations: readonly (readonly [number, Mutation])[];
  readonly describeMutations: readonly Mutation[];
  readonly listMutation: ListMutation;
  readonly liveMutations: readonly (readonly [
    number,
    'definition' | 'schema' | 'capability' | 'manifest',
    Mutation,
  ])[];
  readonly probe: number;
}

const caseArb: fc.Arbitrary<CaseSpec> = fc.record({
  fresh: fc.oneof(
    { weight: 79, arbitrary: fc.constant([]) },
    { weight: 1, arbitrary: fc.array(capabilitySpecArb, { minLength: 1, maxLength: 2 }) },
  ),
  snapshotMutations: fc.array(fc.tuple(fc.nat(), mutationArb), { maxLength: 6 }),
  describeMutations: fc.array(mutationArb, { maxLength: 3 }),
  listMutation: fc.constantFrom<ListMutation>('reverse', 'splice', 'push', 'fill', 'none'),
  liveMutations: fc.array(
    fc.tuple(
      fc.nat(),
      fc.constantFrom<'definition' | 'schema' | 'capability' | 'manifest'>(
        'definition',
        'schema',
        'capability',
        'manifest',
      ),
      mutationArb,
    ),
    { maxLength: 4 },
  ),
  probe: fc.nat(),
});

// ---------------------------------------------------------------------------------------------
// Checks.

/** Our descriptors, in list order; they must appear in registration order. */
function ours(list: readonly CapabilityDescriptor[], tracked: readonly Tracked[]) {
  const position = new Map(tracked.map((entry, index) => [entry.name, index]));
  const mine = list.filter((descriptor) => position.has(descriptor.name));
  mine.forEach((descriptor, index) => {
    assert.equal(position.get(descriptor.name), index, 'not in registration order');
  });
  return mine;
}

/** Every object of a snapshot: descriptors, schema records, field records. */
function objectsOf(descriptors: readonly CapabilityDescriptor[]): object[] {
  const found: object[] = [];
  for (const descriptor of descriptors) {
    found.push(descriptor);
    const schema = asObject(Reflect.get(descriptor, 'inputSchema'));
    if (schema === undefined) continue;
    found.push(schema);
    for (const key of Reflect.ownKeys(schema)) {
      const record = asObject(Reflect.get(schema, key));
      if (record !== undefined) found.push(record);
    }
  }
  return found;
}

/** Own string keys of a plain object are exactly `keys` (any order), and nothing else. */
function hasExactlyKeys(value: object, keys: readonly string[]): boolean {
  const own = Reflect.ownKeys(value);
  return own.length === keys.length && keys.every((key) => Object.hasOwn(value, key));
}

/** A hand-written deep comparison (assert.deepEqual over ~10^3 descriptors per case is slow). */
function sameDescriptor(actual: unknown, expected: CapabilityDescriptor): boolean {
  const descriptor = asObject(actual);
  if (descriptor === undefined || Object.getPrototypeOf(descriptor) !== Object.prototype)
    return false;
  if (!hasExactlyKeys(descriptor, ['name', 'version', 'description', 'risk', 'inputSchema'])) {
    return false;
  }
  const { name, version, description, risk, inputSchema } = descriptor as CapabilityDescriptor;
  if (
    name !== expected.name ||
    version !== expected.version ||
    description !== expected.description ||
    risk !== expected.risk
  ) {
    return false;
  }
  const schema = asObject(inputSchema);
  if (schema === undefined || Object.getPrototypeOf(schema) !== Object.prototype) return false;
  const keys = Object.keys(expected.inputSchema);
  if (!hasExactlyKeys(schema, keys)) return false;
  return keys.every((key) => {
    const record = asObject(Reflect.get(schema, key));
    const want = expected.inputSchema[key] as CapabilityInputField;
    return (
      record !== undefined &&
      Object.getPrototypeOf(record) === Object.prototype &&
      hasExactlyKeys(record, ['type', 'required', 'description']) &&
      Reflect.get(record, 'type') === want.type &&
      Reflect.get(record, 'required') === want.required &&
      Reflect.get(record, 'description') === want.description
    );
  });
}

/**
 * Checks a snapshot: our descriptors are listed in registration order, and those at `indices`
 * (all of them when undefined) are exactly the expected descriptors, made of unfrozen objects.
 */
function checkSnapshot(
  list: CapabilityDescriptor[],
  tracked: readonly Tracked[],
  indices?: ReadonlySet<number>,
): CapabilityDescriptor[] {
  assert.ok(Array.isArray(list) && !Object.isFrozen(list));
  const mine = ours(list, tracked);
  assert.equal(mine.length, tracked.length);
  const checked = indices ?? new Set(tracked.keys());
  for (const index of checked) {
    const descriptor = mine[index];
    const { expected } = tracked[index] as Tracked;
    if (!sameDescriptor(descriptor, expected)) {
      assert.deepEqual(descriptor, expected, 'listCapabilities() differs from the registration');
      assert.fail('listCapabilities() differs from the registration');
    }
  }
  const selected = [...checked].map((index) => mine[index] as CapabilityDescriptor);
  for (const object of objectsOf(selected)) {
    assert.ok(!Object.isFrozen(object), 'a snapshot object is frozen');
  }
  return selected;
}

function validValue(type: FieldType): unknown {
  switch (type) {
    case 'string':
      return 'text';
    case 'number':
      return 1.5;
    case 'boolean':
      return false;
    case 'object':
      return { any: 1 };
    case 'array':
      return [1];
  }
}

function wrongValue(type: FieldType): unknown {
  return type === 'string' ? 5 : type === 'array' ? { not: 'array' } : 'not this type';
}

/** Admission and execution still follow the registered schema, version and execute function. */
async function checkBehaviour(runtime: OperatorRuntime, entry: Tracked, pick: number) {
  const fields = entry.spec.schema ?? [];
  // `extra` (not in any schema, so ignored) keeps an input like { $ref: 'text' } from being a
  // result reference.
  const validInput: Record<string, unknown> = { extra: true };
  for (const field of fields) defineOwn(validInput, field.key, validValue(field.type));
  calls.length = 0;
  const job = await runtime.executePlan({
    version: '1.0',
    steps: [
      {
        id: 'probe',
        capability: entry.name,
        capabilityVersion: entry.spec.version,
        input: validInput,
      },
    ],
  });
  assert.equal(job.status, 'completed', `probe of ${entry.name}: ${String(job.error)}`);
  assert.equal(job.result, 'registered');
  assert.deepEqual(calls, [entry.name], 'the registered execute function did not run');

  const field = fields[pick % Math.max(fields.length, 1)];
  const invalid: Record<string, unknown> = { ...validInput };
  let expectedCode: string;
  if (field === undefined) {
    // No schema: only the version can be wrong.
    expectedCode = 'CAPABILITY_VERSION_MISMATCH';
  } else if (field.required) {
    defineOwn(invalid, field.key, null);
    expectedCode = 'REQUIRED_INPUT_MISSING';
  } else {
    defineOwn(invalid, field.key, wrongValue(field.type));
    expectedCode = 'INPUT_TYPE_MISMATCH';
  }
  calls.length = 0;
  await assert.rejects(
    runtime.executePlan({
      version: '1.0',
      steps: [
        {
          id: 'probe',
          capability: entry.name,
          capabilityVersion: field === undefined ? `${entry.spec.version}.x` : entry.spec.version,
          input: invalid,
        },
      ],
    }),
    (error: unknown) => {
      assert.ok(isPlanAdmissionError(error));
      assert.deepEqual(
        error.issues.map((issue) => [issue.code, issue.field]),
        [[expectedCode, field === undefined ? 'capabilityVersion' : `input.${field.key}`]],
      );
      return true;
    },
  );
  assert.deepEqual(calls, []);
}

describe('property: introspection snapshots never alias registered data', () => {
  it(`holds for generated capabilities and deep mutations (${runLabel})`, async () => {
    let authorizations = 0;
    const runtime = memoryRuntime({
      authorizer: {
        authorize: () => {
          authorizations += 1;
          return { decision: 'allow' };
        },
      },
    });
    const events: RuntimeEvent[] = [];
    runtime.subscribe('*', (event) => {
      events.push(event);
    });
    try {
      const pool = fc.sample(capabilitySpecArb, { seed: settings.seed, numRuns: 12 });
      const tracked: Tracked[] = register(runtime, pool);
      let caseNumber = 0;

      await checkProperty(
        fc.asyncProperty(caseArb, async (spec) => {
          if (spec.fresh.length > 0) tracked.push(...register(runtime, spec.fresh));
          events.length = 0;
          calls.length = 0;
          authorizations = 0;

          // Descriptors this case touches are compared in full on every case; all of them every
          // FULL_CHECK_EVERY cases and after the run (damage to registered data would persist).
          caseNumber += 1;
          const full = caseNumber % FULL_CHECK_EVERY === 0;
          const touched = new Set<number>([spec.probe % tracked.length]);
          for (let index = tracked.length - spec.fresh.length; index < tracked.length; index++) {
            touched.add(index);
          }
          for (const [pick] of spec.snapshotMutations) touched.add(pick % tracked.length);
          for (const [pick] of spec.liveMutations) touched.add(pick % tracked.length);
          const indices = full ? undefined : touched;

          // 1. A snapshot equals the expected descriptors.
          const first = runtime.listCapabilities();
          const firstObjects = new Set(objectsOf(checkSnapshot(first, tracked, indices)));
          const probe = tracked[spec.probe % tracked.length] as Tracked;
          const described = runtime.describeCapability(probe.name);
          assert.deepEqual(described, probe.expected);
          assert.ok(described !== undefined);

          // 2. Mutate the snapshot, a describeCapability() answer and the list itself.
          const mine = ours(first, tracked);
          for (const [pick, mutation] of spec.snapshotMutations) {
            mutate(mine[pick % mine.length] as object, mutation);
          }
          for (const mutation of spec.describeMutations) mutate(described, mutation);
          switch (spec.listMutation) {
            case 'reverse':
              first.reverse();
              break;
            case 'splice':
              first.splice(0, 1);
              break;
            case 'push':
              first.push(expectedDescriptor('pushed', probe.spec));
              break;
            case 'fill':
              first.fill(expectedDescriptor('filled', probe.spec));
              break;
            case 'none':
              break;
          }

          // 3. Mutate what the capabilities were registered from.
          for (const [pick, where, mutation] of spec.liveMutations) {
            const entry = tracked[pick % tracked.length] as Tracked;
            const target =
              where === 'definition'
                ? entry.live.definition
                : where === 'schema'
                  ? entry.live.schema
                  : where === 'capability'
                    ? entry.live.capability
                    : entry.live.module.manifest;
            if (target !== undefined) mutate(target, mutation);
          }

          // 4. Later snapshots and behaviour are unchanged.
          const second = runtime.listCapabilities();
          assert.notEqual(second, first);
          for (const object of objectsOf(checkSnapshot(second, tracked, indices))) {
            assert.ok(!firstObjects.has(object), 'a new snapshot shares an object with an old one');
          }
          const again = runtime.describeCapability(probe.name, probe.spec.version);
          assert.deepEqual(again, probe.expected);
          assert.notEqual(again, described);
          assert.equal(runtime.describeCapability(probe.name, `${probe.spec.version}!`), undefined);
          assert.equal(runtime.describeCapability(`${probe.name}!`), undefined);

          // 5. Introspection invoked nothing and published nothing.
          assert.deepEqual(calls, []);
          assert.deepEqual(events, []);
          assert.equal(authorizations, 0);

          await checkBehaviour(runtime, probe, spec.probe);
        }),
      );
      // Everything registered is still exactly as registered after all the mutations.
      checkSnapshot(runtime.listCapabilities(), tracked);
    } finally {
      await runtime.close();
    }
  });
});
