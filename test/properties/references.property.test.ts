// Property (c): result references read OWN properties only (docs/api.md, "Plans and result references").
//
// Each case builds a step result from a generated description: plain objects, null-prototype
// objects, objects inheriting from a prototype with its own properties, class instances,
// functions, arrays (with holes), transparent proxies, own getters (some throwing) and own
// keys named `__proto__`, `constructor`, `toString`, ... A reference path into that result is
// generated from own keys and from inherited or made-up names. A model built from the
// description (never by reflecting on the built value) says whether every segment is an own
// property. If so, the next step must receive exactly the value reached; if not, the step must
// fail at run time without an authorizer call and without invoking its capability (a
// primitive part-way also fails: docs/decisions.md "Walking a path").
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  createCapability,
  isPlanAdmissionError,
  type CapabilityAuthorizationContext,
  type ExecutionContext,
  type ExecutionPlan,
} from '../../src/index.js';
import { uniqueName } from '../support/runtime-fixtures.js';
import {
  Holder,
  NON_INDEX_KEYS,
  buildHostile,
  hostileKeyArb,
  hostileSpecArb,
  type HostileSpec,
} from './hostile-values.js';
import {
  OBJECT_PROTOTYPE_MEMBERS,
  checkProperty,
  defineOwn,
  memoryRuntime,
  plainCopy,
  runLabel,
} from './support.js';

// ---------------------------------------------------------------------------------------------
// Descriptions of result values.

type Leaf = string | number | boolean | null;
type Entries = readonly (readonly [string, NodeSpec])[];

type NodeSpec =
  | { readonly kind: 'leaf'; readonly value: Leaf }
  | { readonly kind: 'plain'; readonly own: Entries }
  | { readonly kind: 'null-prototype'; readonly own: Entries }
  | { readonly kind: 'inherits'; readonly own: Entries; readonly proto: Entries }
  | { readonly kind: 'instance'; readonly own: Entries }
  | { readonly kind: 'function'; readonly own: Entries }
  | { readonly kind: 'array'; readonly items: readonly (NodeSpec | null)[] }
  | {
      readonly kind: 'getters';
      readonly own: Entries;
      readonly getters: readonly (readonly [string, NodeSpec | 'throws'])[];
    }
  | { readonly kind: 'proxy'; readonly own: Entries; readonly proto: Entries };

/**
 * Own keys used in results. `then` is left out on purpose: a result with a callable `then` is a
 * thenable and is awaited by JavaScript itself.
 */
const KEY_POOL = [
  'a',
  'b',
  'value',
  'constructor',
  '__proto__',
  'toString',
  'hasOwnProperty',
  'valueOf',
  'prototype',
  'result',
  'length',
  'name',
  '0',
  '1',
  'steps',
  '$ref',
] as const;

/** Names a path may use that are usually NOT own: prototype members and made-up names. */
const PROBE_POOL: readonly string[] = [
  ...OBJECT_PROTOTYPE_MEMBERS,
  'map',
  'push',
  'call',
  'apply',
  'bind',
  'describe',
  'length',
  'name',
  'prototype',
  '0',
  '00',
  '-0',
  '1e0',
  ' 0',
  'inherited',
  'shadowed',
  'missing',
];

const keyArb = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...KEY_POOL) },
  { weight: 1, arbitrary: fc.constantFrom('inherited', 'shadowed', 'x') },
);

const leafArb: fc.Arbitrary<Leaf> = fc.oneof(
  fc.integer(),
  fc.string({ maxLength: 4 }),
  fc.boolean(),
  fc.constant(null),
);

const nodeArb: fc.Arbitrary<NodeSpec> = fc.letrec<{ node: NodeSpec; entries: Entries }>((tie) => ({
  entries: fc.array(fc.tuple(keyArb, tie('node')), { maxLength: 3 }),
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.record({ kind: fc.constant('leaf' as const), value: leafArb }),
    fc.record({ kind: fc.constant('plain' as const), own: tie('entries') }),
    fc.record({ kind: fc.constant('null-prototype' as const), own: tie('entries') }),
    fc.record({
      kind: fc.constant('inherits' as const),
      own: tie('entries'),
      proto: tie('entries'),
    }),
    fc.record({ kind: fc.constant('instance' as const), own: tie('entries') }),
    fc.record({ kind: fc.constant('function' as const), own: tie('entries') }),
    fc.record({
      kind: fc.constant('array' as const),
      items: fc.array(fc.option(tie('node'), { nil: null, freq: 4 }), { maxLength: 3 }),
    }),
    fc.record({
      kind: fc.constant('getters' as const),
      own: tie('entries'),
      getters: fc.array(fc.tuple(keyArb, fc.oneof(tie('node'), fc.constant('throws' as const))), {
        maxLength: 2,
      }),
    }),
    fc.record({
      kind: fc.constant('proxy' as const),
      own: tie('entries'),
      proto: tie('entries'),
    }),
  ),
})).node;

// ---------------------------------------------------------------------------------------------
// Building a value together with its model (own keys -> children), from the description only.

interface Built {
  readonly value: unknown;
  /** Undefined for primitives; otherwise the OWN properties, as the description defines them. */
  readonly own: Map<string, Built | 'throws'> | undefined;
}

class Box {
  describe(): string {
    return 'a box';
  }
}

function leaf(value: unknown): Built {
  return { value, own: undefined };
}

function fill(target: object, entries: Entries, own: Map<string, Built | 'throws'>): void {
  for (const [key, spec] of entries) {
    const child = build(spec);
    defineOwn(target, key, child.value);
    own.set(key, child);
  }
}

function build(spec: NodeSpec): Built {
  const own = new Map<string, Built | 'throws'>();
  switch (spec.kind) {
    case 'leaf':
      return leaf(spec.value);
    case 'plain': {
      const value = {};
      fill(value, spec.own, own);
      return { value, own };
    }
    case 'null-prototype': {
      const value = Object.create(null) as object;
      fill(value, spec.own, own);
      return { value, own };
    }
    case 'inherits': {
      // The prototype's properties are NOT own properties of the value: not in `own`.
      const prototype = {};
      fill(prototype, spec.proto, new Map());
      const value = Object.create(prototype) as object;
      fill(value, spec.own, own);
      return { value, own };
    }
    case 'instance': {
      const value = new Box();
      fill(value, spec.own, own);
      return { value, own };
    }
    case 'function': {
      const value = (
        (): (() => number) => () =>
          0
      )();
      // An anonymous arrow function has exactly two own properties, `length` and `name`.
      own.set('length', leaf(0));
      own.set('name', leaf(''));
      fill(value, spec.own, own);
      return { value, own };
    }
    case 'array': {
      const value: unknown[] = new Array<unknown>(spec.items.length);
      spec.items.forEach((item, index) => {
        if (item === null) return; // a hole: not an own property
        const child = build(item);
        value[index] = child.value;
        own.set(String(index), child);
      });
      own.set('length', leaf(spec.items.length));
      return { value, own };
    }
    case 'getters': {
      const value = {};
      fill(value, spec.own, own);
      for (const [key, getter] of spec.getters) {
        if (getter === 'throws') {
          Object.defineProperty(value, key, {
            get() {
              throw new Error(`getter ${key} throws`);
            },
            enumerable: true,
            configurable: true,
          });
          own.set(key, 'throws');
        } else {
          const child = build(getter);
          Object.defineProperty(value, key, {
            get: () => child.value,
            enumerable: true,
            configurable: true,
          });
          own.set(key, child);
        }
      }
      return { value, own };
    }
    case 'proxy': {
      const prototype = {};
      fill(prototype, spec.proto, new Map());
      const target = Object.create(prototype) as object;
      fill(target, spec.own, own);
      return { value: new Proxy(target, {}), own };
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Paths.

type SegmentChoice =
  | { readonly pick: 'own'; readonly index: number }
  | { readonly pick: 'name'; readonly name: string };

const segmentArb: fc.Arbitrary<SegmentChoice> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ pick: fc.constant('own' as const), index: fc.nat() }) },
  {
    weight: 2,
    arbitrary: fc.record({
      pick: fc.constant('name' as const),
      name: fc.constantFrom(...PROBE_POOL),
    }),
  },
);

type Expectation =
  | { readonly resolves: true; readonly value: unknown }
  | { readonly resolves: false; readonly why: string };

/** Turns choices into segments and predicts the outcome, walking the model only. */
function walk(root: Built, choices: readonly SegmentChoice[]): [string[], Expectation] {
  const segments: string[] = [];
  let current: Built = root;
  let expectation: Expectation | undefined;
  for (const choice of choices) {
    let segment: string;
    if (choice.pick === 'name') segment = choice.name;
    else {
      const keys = current.own === undefined ? [] : [...current.own.keys()];
      segment = keys.length === 0 ? 'missing' : (keys[choice.index % keys.length] as string);
    }
    segments.push(segment);
    if (expectation !== undefined) continue;
    if (current.own === undefined) {
      expectation = { resolves: false, why: `${segment} read from a primitive` };
      continue;
    }
    const child = current.own.get(segment);
    if (child === undefined) {
      expectation = { resolves: false, why: `${segment} is not an own property` };
    } else if (child === 'throws') {
      expectation = { resolves: false, why: `own getter ${segment} throws` };
    } else {
      current = child;
    }
  }
  return [segments, expectation ?? { resolves: true, value: current.value }];
}

// ---------------------------------------------------------------------------------------------
// The property.

type Placement = 'root' | 'field' | 'nested';

interface CaseSpec {
  readonly producerId: string;
  readonly result: NodeSpec;
  readonly path: readonly SegmentChoice[];
  readonly placement: Placement;
}

const caseArb: fc.Arbitrary<CaseSpec> = fc.record({
  producerId: fc.constantFrom('p', 'load.v1', 'results', 'steps'),
  result: nodeArb,
  path: fc.oneof(
    { weight: 1, arbitrary: fc.constant([]) },
    { weight: 6, arbitrary: fc.array(segmentArb, { minLength: 1, maxLength: 4 }) },
  ),
  placement: fc.constantFrom<Placement>('root', 'field', 'nested'),
});

interface CaseState {
  result: unknown;
  readonly received: { input: unknown; context: ExecutionContext }[];
}

let current: CaseState | undefined;

function placeReference(placement: Placement, text: string): unknown {
  const reference = { $ref: text };
  switch (placement) {
    case 'root':
      return reference;
    case 'field':
      return { got: reference, other: 1 };
    case 'nested':
      return { deep: ['x', { got: reference }] };
  }
}

function receivedValue(placement: Placement, input: unknown): unknown {
  switch (placement) {
    case 'root':
      return input;
    case 'field':
      return (input as { got: unknown }).got;
    case 'nested':
      return (input as { deep: [string, { got: unknown }] }).deep[1].got;
  }
}

describe('property: result references resolve own properties only', () => {
  it(`holds for generated results and reference paths (${runLabel})`, async () => {
    const producer = uniqueName('prop.refs.producer');
    const consumer = uniqueName('prop.refs.consumer');
    const setup = memoryRuntime();
    setup.use({
      manifest: {
        name: uniqueName('prop.refs.module'),
        version: '1',
        capabilities: [producer, consumer],
      },
      capabilities: [
        createCapability({
          name: producer,
          version: '1',
          description: 'returns the generated result',
          risk: 'read',
          execute: () => {
            assert.ok(current !== undefined);
            return current.result;
          },
        }),
        {
          name: consumer,
          version: '1',
          description: 'records what it receives',
          risk: 'write',
          execute: (input, context) => {
            assert.ok(current !== undefined);
            current.received.push({ input, context });
            return 'consumed';
          },
        },
      ],
    });
    await setup.close();

    await checkProperty(
      fc.asyncProperty(caseArb, async (spec) => {
        const root = build(spec.result);
        const [segments, expectation] = walk(root, spec.path);
        const text = [`steps.${spec.producerId}.result`, ...segments].join('.');
        const state: CaseState = { result: root.value, received: [] };
        current = state;
        const asked: CapabilityAuthorizationContext[] = [];
        const runtime = memoryRuntime({
          authorizer: {
            authorize(context) {
              asked.push(context);
              return { decision: 'allow' };
            },
          },
        });
        const input = placeReference(spec.placement, text);
        const submitted = plainCopy(input);
        const plan: ExecutionPlan = {
          version: '1.0',
          steps: [
            { id: spec.producerId, capability: producer },
            { id: 'c', capability: consumer, input },
          ],
        };
        try {
          const job = await runtime.executePlan(plan);
          assert.equal(job.steps[0]?.status, 'completed');
          assert.ok(Object.is(job.steps[0]?.result, root.value));
          if (expectation.resolves) {
            assert.equal(job.status, 'completed', `${text}: ${String(job.error)}`);
            assert.equal(state.received.length, 1);
            const [call] = state.received;
            assert.ok(call !== undefined);
            assert.ok(
              Object.is(receivedValue(spec.placement, call.input), expectation.value),
              `${text} did not resolve to the own value it addresses`,
            );
            assert.deepEqual(
              asked.map((context) => context.stepId),
              [spec.producerId, 'c'],
            );
            assert.ok(Object.is(asked[1]?.input, call.input));
          } else {
            // Not an own property (or unreadable): a run-time failure of the consuming step,
            // before authorization; the capability never sees any value for it.
            assert.equal(job.status, 'failed', `${text} resolved although ${expectation.why}`);
            assert.equal(state.received.length, 0, `${text}: capability ran (${expectation.why})`);
            assert.deepEqual(
              asked.map((context) => context.stepId),
              [spec.producerId],
              'the authorizer was asked about a step whose reference does not resolve',
            );
            assert.equal(job.steps[1]?.status, 'failed');
            assert.equal(job.steps[1]?.startedAt, undefined);
            assert.equal(typeof job.error, 'string');
            assert.deepEqual(
              job.events.map((event) => event.type),
              [
                'job.created',
                'execution.started',
                'capability.started',
                'capability.completed',
                'capability.failed',
                'job.failed',
              ],
            );
          }
          // The caller's input still holds the reference: resolution never writes to it.
          assert.deepEqual(plainCopy(input), submitted);
        } finally {
          current = undefined;
          await runtime.close();
        }
      }),
    );
  });
});

// ---------------------------------------------------------------------------------------------
// Regression (found by this property, fixed in src/plan/references.ts): references were
// located at admission by a walk that skipped every container it had already seen, so when the
// same object appeared at two places of one input (which JavaScript inputs allow), only the
// references under its FIRST path were resolved; at the others the authorizer and the capability
// received the raw `{ $ref: ... }` object. The walk now skips only a container's own ancestors
// (cycles) and resolves every occurrence. (What a cyclic input resolves to is not specified, so
// cycles are left out here.)

interface SharedCase {
  readonly leaf: Leaf;
  /** Where the shared container sits, besides its first place. */
  readonly shape: 'sibling' | 'nested' | 'array' | 'shared-array';
  readonly holderKey: string;
}

const sharedCaseArb: fc.Arbitrary<SharedCase> = fc.record({
  leaf: leafArb,
  shape: fc.constantFrom<SharedCase['shape']>('sibling', 'nested', 'array', 'shared-array'),
  holderKey: fc.constantFrom('got', 'value', 'x'),
});

/** Builds the input and lists the paths at which the reference must appear resolved. */
function sharedInput(spec: SharedCase): { input: unknown; paths: (string | number)[][] } {
  const holder: Record<string, unknown> = {};
  defineOwn(holder, spec.holderKey, { $ref: 'steps.p.result.v' });
  const key = spec.holderKey;
  switch (spec.shape) {
    case 'sibling':
      return {
        input: { first: holder, second: holder },
        paths: [
          ['first', key],
          ['second', key],
        ],
      };
    case 'nested':
      return {
        input: { a: holder, b: { c: holder } },
        paths: [
          ['a', key],
          ['b', 'c', key],
        ],
      };
    case 'array':
      return {
        input: { list: [holder, 0, holder] },
        paths: [
          ['list', 0, key],
          ['list', 2, key],
        ],
      };
    case 'shared-array': {
      const list = [{ $ref: 'steps.p.result.v' }];
      return {
        input: { x: list, y: [list] },
        paths: [
          ['x', 0],
          ['y', 0, 0],
        ],
      };
    }
  }
}

function at(value: unknown, path: readonly (string | number)[]): unknown {
  let current = value;
  for (const key of path) current = (current as Record<string | number, unknown>)[key];
  return current;
}

describe('property: every occurrence of a result reference is resolved', () => {
  it(`a container that appears twice in an input is resolved at both places (${runLabel})`, async () => {
    const producer = uniqueName('prop.refs.shared.producer');
    const consumer = uniqueName('prop.refs.shared.consumer');
    let received: unknown[] = [];
    let produced: unknown;
    const setup = memoryRuntime();
    setup.use({
      manifest: {
        name: uniqueName('prop.refs.shared.module'),
        version: '1',
        capabilities: [producer, consumer],
      },
      capabilities: [
        { name: producer, version: '1', description: 'p', risk: 'read', execute: () => produced },
        {
          name: consumer,
          version: '1',
          description: 'c',
          risk: 'read',
          execute: (input) => {
            received.push(input);
            return 'ok';
          },
        },
      ],
    });
    await setup.close();

    await checkProperty(
      fc.asyncProperty(sharedCaseArb, async (spec) => {
        produced = { v: spec.leaf };
        received = [];
        const runtime = memoryRuntime();
        try {
          const { input, paths } = sharedInput(spec);
          const job = await runtime.executePlan({
            version: '1.0',
            steps: [
              { id: 'p', capability: producer },
              { id: 'c', capability: consumer, input },
            ],
          });
          assert.equal(job.status, 'completed', String(job.error));
          const [got] = received;
          for (const path of paths) {
            assert.ok(
              Object.is(at(got, path), spec.leaf),
              `input.${path.join('.')} is ${JSON.stringify(at(got, path))}, not the resolved value`,
            );
          }
        } finally {
          await runtime.close();
        }
      }),
    );
  });
});

// ---------------------------------------------------------------------------------------------
// Where references live (issue 15, item 3; docs/decisions.md "Result references"). A reference
// sits at the end of a generated chain of containers, each holding hostile values
// (test/properties/hostile-values.ts) beside the next link. It is resolved when every link is a
// plain object (null prototype, transparent proxy and an own toJSON method included) or an array
// holding it at an index key (holes before it, or a transparent proxy of the array); anywhere
// else (a class instance, a boxed primitive, a function, an array's non-index key) admission
// refuses it with INVALID_RESULT_REFERENCE naming its place, and nothing runs.

type LinkKind =
  | 'plain'
  | 'null-prototype'
  | 'to-json'
  | 'proxy-plain'
  | 'array'
  | 'sparse'
  | 'proxy-array'
  | 'named-key'
  | 'instance'
  | 'boxed'
  | 'function';

const RESOLVED_IN: ReadonlySet<LinkKind> = new Set([
  'plain',
  'null-prototype',
  'to-json',
  'proxy-plain',
  'array',
  'sparse',
  'proxy-array',
]);

interface LinkSpec {
  readonly kind: LinkKind;
  readonly key: string;
  readonly nonIndexKey: string;
  readonly siblings: readonly HostileSpec[];
}

const linkArb: fc.Arbitrary<LinkSpec> = fc.record({
  kind: fc.constantFrom<LinkKind>(
    'plain',
    'null-prototype',
    'to-json',
    'proxy-plain',
    'array',
    'sparse',
    'proxy-array',
    'named-key',
    'instance',
    'boxed',
    'function',
  ),
  key: fc.oneof(
    fc.constantFrom('got', '__proto__', 'constructor', '0', 'x y'),
    hostileKeyArb.filter((key) => !/^\d+$/.test(key) && key !== 'length' && key !== ''),
  ),
  nonIndexKey: fc.constantFrom(...NON_INDEX_KEYS),
  siblings: fc.array(hostileSpecArb, { maxLength: 2 }),
});

/** Builds one link holding `child`; returns the container and the key the child sits under. */
function buildLink(link: LinkSpec, child: unknown): { container: unknown; key: string | number } {
  const siblings = link.siblings.map(buildHostile);
  const objectWith = (target: object, key = link.key): object => {
    siblings.forEach((sibling, index) => defineOwn(target, `sibling${index}`, sibling));
    defineOwn(target, key, child);
    return target;
  };
  switch (link.kind) {
    case 'plain':
      return { container: objectWith({}), key: link.key };
    case 'null-prototype':
      return { container: objectWith(Object.create(null) as object), key: link.key };
    case 'to-json':
      return { container: objectWith({ toJSON: () => 'as JSON' }), key: link.key };
    case 'proxy-plain':
      return { container: new Proxy(objectWith({}), {}), key: link.key };
    case 'array':
      return { container: [...siblings, child], key: siblings.length };
    case 'sparse': {
      const list = [...siblings];
      list[siblings.length + 2] = child;
      return { container: list, key: siblings.length + 2 };
    }
    case 'proxy-array':
      return { container: new Proxy([...siblings, child], {}), key: siblings.length };
    case 'named-key': {
      const list: unknown[] = [...siblings];
      defineOwn(list, link.nonIndexKey, child);
      return { container: list, key: link.nonIndexKey };
    }
    case 'instance':
      return { container: objectWith(new Holder()), key: link.key };
    // Their own index keys, `length` and `name` are fixed: the reference goes under another key.
    case 'boxed':
      return { container: objectWith(new String('ab'), `x${link.key}`), key: `x${link.key}` };
    case 'function':
      return { container: objectWith(() => 0, `x${link.key}`), key: `x${link.key}` };
  }
}

describe('property: result references are resolved where they live, refused anywhere else', () => {
  it(`holds for chains of hostile containers (${runLabel})`, async () => {
    const producer = uniqueName('prop.refs.where.producer');
    const consumer = uniqueName('prop.refs.where.consumer');
    let received: unknown[] = [];
    let extra: unknown;
    const setup = memoryRuntime();
    setup.use({
      manifest: {
        name: uniqueName('prop.refs.where.module'),
        version: '1',
        capabilities: [producer, consumer],
      },
      capabilities: [
        {
          name: producer,
          version: '1',
          description: 'p',
          risk: 'read',
          execute: () => ({ v: 'resolved', extra }),
        },
        {
          name: consumer,
          version: '1',
          description: 'c',
          risk: 'read',
          execute: (input) => {
            received.push(input);
            return 'ok';
          },
        },
      ],
    });
    await setup.close();

    await checkProperty(
      fc.asyncProperty(
        fc.array(linkArb, { maxLength: 4 }),
        hostileSpecArb,
        async (links, extraSpec) => {
          received = [];
          extra = buildHostile(extraSpec);
          const reference = { $ref: 'steps.p.result.v' };
          // Built from the innermost link outwards; `path` is from the root down.
          let input: unknown = reference;
          const path: (string | number)[] = [];
          for (let index = links.length - 1; index >= 0; index--) {
            const built = buildLink(links[index] as LinkSpec, input);
            input = built.container;
            path.unshift(built.key);
          }
          const resolvable = links.every((link) => RESOLVED_IN.has(link.kind));
          const runtime = memoryRuntime();
          try {
            const run = runtime.executePlan({
              version: '1.0',
              steps: [
                { id: 'p', capability: producer },
                { id: 'c', capability: consumer, input },
              ],
            });
            if (resolvable) {
              const job = await run;
              assert.equal(job.status, 'completed', String(job.error));
              assert.ok(Object.is(at(received[0], path), 'resolved'), path.join('.'));
              assert.ok(at(input, path) === reference, "the caller's input still holds it");
            } else {
              const field = ['input', ...path].join('.');
              await assert.rejects(run, (error: unknown) => {
                assert.ok(isPlanAdmissionError(error), String(error));
                assert.deepEqual(
                  error.issues.map((issue) => [issue.code, issue.field]),
                  [['INVALID_RESULT_REFERENCE', field]],
                );
                return true;
              });
              assert.deepEqual(received, []);
              assert.deepEqual(await runtime.listJobs(), []);
            }
          } finally {
            await runtime.close();
          }
        },
      ),
    );
  });
});
