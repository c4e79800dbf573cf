// A generator of hostile values for the property suites (issue 15): values that JSON.stringify
// records in a way of its own — objects with toJSON (also one that reads its key), boxed
// primitives, URLs, Dates, transparent proxies, class instances, null-prototype objects, sparse
// arrays, arrays with named (non-index) keys, undefined, -0 — with strings that hold lone
// surrogates, U+0000 and U+2028, and keys such as `__proto__`, `constructor`, '01' and '-0'.
//
// Every generated value is one `JSON.stringify` can encode (no cycle, bigint, function, NaN, Map
// or Set: the substitutions of docs/guide/stores.md, "Values JSON cannot hold", for those have
// their own tests), so `JSON.stringify` is the oracle of what a record must hold. No generated object is a result reference (no `$ref` key).
import fc from 'fast-check';
import { defineOwn } from './support.js';

/** One UTF-16 unit that text columns and JSON get wrong most easily, or any code point. */
const oddUnitArb: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('\ud800', '\udbff', '\udc00', '\udfff', '\u0000', '\u2028', '"', '\\', '\u001f'),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
);

/** Strings with lone surrogates, U+0000 and other units a store must keep exactly. */
export const hostileStringArb: fc.Arbitrary<string> = fc.string({
  unit: oddUnitArb,
  maxLength: 6,
});

/** Keys of generated objects: prototype member names, index-like names and odd text. */
export const hostileKeyArb: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      'a',
      'b',
      '__proto__',
      'constructor',
      'toString',
      'valueOf',
      'length',
      '0',
      '1',
      '01',
      '-0',
      'x y',
      '',
    ),
  },
  { weight: 1, arbitrary: hostileStringArb.filter((key) => key !== '$ref') },
);

/** Keys of an array that are not index keys. */
export const NON_INDEX_KEYS: readonly string[] = ['01', '-0', 'foo', '4294967295', '1.5', ' 1'];

type Leaf = string | number | boolean | null | undefined;
type Entries = readonly (readonly [string, HostileSpec])[];

export type HostileSpec =
  | { readonly kind: 'leaf'; readonly value: Leaf }
  | { readonly kind: 'plain' | 'null-prototype' | 'instance'; readonly own: Entries }
  | { readonly kind: 'to-json'; readonly returns: HostileSpec; readonly withKey: boolean }
  | { readonly kind: 'boxed'; readonly value: number | string | boolean }
  | { readonly kind: 'url'; readonly path: string }
  | { readonly kind: 'date'; readonly time: number }
  | { readonly kind: 'sparse'; readonly items: readonly (HostileSpec | null)[] }
  | {
      readonly kind: 'named-array';
      readonly items: readonly HostileSpec[];
      readonly named: Entries;
    }
  | { readonly kind: 'proxy'; readonly of: HostileSpec };

const leafArb: fc.Arbitrary<Leaf> = fc.oneof(
  hostileStringArb,
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constant(-0),
  fc.boolean(),
  fc.constant(null),
  fc.constant(undefined),
);

function isToJson(spec: HostileSpec): boolean {
  if (spec.kind === 'proxy') return isToJson(spec.of);
  return spec.kind === 'to-json' || spec.kind === 'date' || spec.kind === 'url';
}

export const hostileSpecArb: fc.Arbitrary<HostileSpec> = fc.letrec<{
  node: HostileSpec;
  entries: Entries;
}>((tie) => ({
  entries: fc.array(fc.tuple(hostileKeyArb, tie('node')), { maxLength: 3 }),
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.record({ kind: fc.constant('leaf' as const), value: leafArb }),
    fc.record({ kind: fc.constant('plain' as const), own: tie('entries') }),
    fc.record({ kind: fc.constant('null-prototype' as const), own: tie('entries') }),
    fc.record({ kind: fc.constant('instance' as const), own: tie('entries') }),
    // What toJSON returns is not asked for toJSON again. When that is another object with a
    // toJSON method, JSON.stringify writes its own keys: {} for a Date, where the records apply
    // the documented Date substitution (an ISO string), and its toJSON method, which
    // JSON.stringify drops and the records show as "[Function toJSON]" as for any function. So
    // the generator does not return such objects from toJSON.
    fc.record({
      kind: fc.constant('to-json' as const),
      returns: tie('node').filter((returned) => !isToJson(returned)),
      withKey: fc.boolean(),
    }),
    fc.record({
      kind: fc.constant('boxed' as const),
      value: fc.oneof(fc.integer(), fc.constant(-0), hostileStringArb, fc.boolean()),
    }),
    fc.record({ kind: fc.constant('url' as const), path: hostileStringArb }),
    fc.record({
      kind: fc.constant('date' as const),
      time: fc.integer({ min: -8.64e15, max: 8.64e15 }),
    }),
    fc.record({
      kind: fc.constant('sparse' as const),
      items: fc.array(fc.option(tie('node'), { nil: null, freq: 2 }), { maxLength: 4 }),
    }),
    fc.record({
      kind: fc.constant('named-array' as const),
      items: fc.array(tie('node'), { maxLength: 2 }),
      named: fc.array(fc.tuple(fc.constantFrom(...NON_INDEX_KEYS), tie('node')), {
        maxLength: 2,
      }),
    }),
    // Transparent proxies of objects without internal slots (a proxy of a URL, a Date or a boxed
    // primitive makes their methods throw: JSON.stringify throws, the records say "[Unreadable]").
    fc.record({
      kind: fc.constant('proxy' as const),
      of: tie('node').filter((of) => !['url', 'date', 'boxed'].includes(of.kind)),
    }),
  ),
})).node;

/** A class of the generated instances: a prototype method, own fields as generated. */
export class Holder {
  describe(): string {
    return 'a holder';
  }
}

function fill(target: object, own: Entries): object {
  for (const [key, spec] of own) defineOwn(target, key, buildHostile(spec));
  return target;
}

/** Builds a fresh value from its description (proxies of primitives are their primitives). */
export function buildHostile(spec: HostileSpec): unknown {
  switch (spec.kind) {
    case 'leaf':
      return spec.value;
    case 'plain':
      return fill({}, spec.own);
    case 'null-prototype':
      return fill(Object.create(null) as object, spec.own);
    case 'instance':
      return fill(new Holder(), spec.own);
    case 'to-json': {
      const returned = buildHostile(spec.returns);
      return spec.withKey
        ? { toJSON: (key: string) => ({ key, value: returned }) }
        : { toJSON: () => returned };
    }
    case 'boxed':
      return Object(spec.value) as object;
    case 'url':
      return new URL(`https://example.com/?q=${spec.path}`);
    case 'date':
      return new Date(spec.time);
    case 'sparse': {
      const list = new Array<unknown>(spec.items.length);
      spec.items.forEach((item, index) => {
        if (item !== null) list[index] = buildHostile(item);
      });
      return list;
    }
    case 'named-array':
      return fill(spec.items.map(buildHostile), spec.named);
    case 'proxy': {
      const target = buildHostile(spec.of);
      return typeof target === 'object' && target !== null ? new Proxy(target, {}) : target;
    }
  }
}

/**
 * What `JSON.stringify` records for `value` held under `key` of a record (toJSON receives the
 * key): the oracle of every stored or printed value. Undefined when JSON leaves it out.
 */
export function jsonOracle(key: string, value: unknown): unknown {
  return (JSON.parse(JSON.stringify({ [key]: value })) as Record<string, unknown>)[key];
}
