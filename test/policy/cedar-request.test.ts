import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  MAX_INPUT_DEPTH,
  capabilityEntities,
  cedarContext,
  cedarInput,
  cedarKey,
  cedarRequest,
  principalOf,
  requestKeyText,
} from '../../src/policy/cedar-request.js';

const NULL = { __entity: { type: 'Warrant::Null', id: 'null' } };
const decimal = (text: string) => ({ __extn: { fn: 'decimal', arg: text } });
const number = (text: string) => ({ __entity: { type: 'Warrant::Number', id: text } });
const carried = (input: unknown): unknown => {
  const answer = cedarInput(input);
  assert.ok(answer.ok, JSON.stringify(answer));
  return answer.value;
};
const refused = (input: unknown): string => {
  const answer = cedarInput(input);
  assert.ok(!answer.ok, 'carried');
  return answer.reason;
};
const nest = (levels: number, leaf: unknown): unknown =>
  levels === 0 ? leaf : [nest(levels - 1, leaf)];

describe('cedarInput', () => {
  it('copies strings, booleans, safe integers, arrays and plain objects as they are', () => {
    const input = {
      a: 'x',
      b: true,
      c: [1, { d: -3 }],
      e: Object.assign(Object.create(null), { f: 'g' }),
    };
    assert.deepEqual(carried(input), { a: 'x', b: true, c: [1, { d: -3 }], e: { f: 'g' } });
    assert.notEqual(carried(input), input);
    assert.equal(carried(-0), 0);
  });

  it('carries an integer of magnitude under 2^63 as a Long, another number as a decimal when one holds it, else as a Warrant::Number', () => {
    assert.deepEqual(carried([2 ** 53, -(2 ** 60), 2 ** 63 - 1024]), [
      2 ** 53,
      -(2 ** 60),
      2 ** 63 - 1024,
    ]);
    assert.deepEqual(carried({ v: 0.5 }), { v: decimal('0.5') });
    assert.deepEqual(carried([-1.25, 0.0001, 123.4567]), [
      decimal('-1.25'),
      decimal('0.0001'),
      decimal('123.4567'),
    ]);
    // The decimal range's ends: 64-bit ten-thousandths.
    assert.deepEqual(carried(922337203685477.5), decimal('922337203685477.5'));
    assert.deepEqual(carried(922337203685478.5), number('922337203685478.5'));
    assert.deepEqual(carried(-922337203685477.5), decimal('-922337203685477.5'));
    // More than 4 fractional digits, an exponent, an integer beyond the Long range (its text
    // is String(n), the shortest that reads back as n).
    assert.deepEqual(carried([0.00001, 1.23456, 1e21, 2 ** 63, -(2 ** 63)]), [
      number('0.00001'),
      number('1.23456'),
      number('1e+21'),
      number('9223372036854776000'),
      number('-9223372036854776000'),
    ]);
  });

  it('carries null (and an absent input, or an undefined element) as Warrant::Null::"null"; an undefined property is absent', () => {
    assert.deepEqual(carried({ pad: null }), { pad: NULL });
    assert.deepEqual(carried(null), NULL);
    assert.deepEqual(carried(undefined), NULL);
    // eslint-disable-next-line no-sparse-arrays
    assert.deepEqual(carried([undefined, , 1]), [NULL, NULL, 1]);
    assert.deepEqual(carried({ a: undefined, b: 1 }), { b: 1 });
  });

  it('escapes reserved keys one to one: one more underscore in front, at any depth', () => {
    const input = {
      __entity: { type: 'X', id: 'y' },
      ___entity: 1,
      ____entity: 2,
      deep: [{ __extn: { fn: 'ip', arg: '10.0.0.1' } }, { __expr: 'true', ___expr: 3 }],
      _entity: 4,
      __entityx: 5,
    };
    assert.deepEqual(carried(input), {
      ___entity: { type: 'X', id: 'y' },
      ____entity: 1,
      _____entity: 2,
      deep: [{ ___extn: { fn: 'ip', arg: '10.0.0.1' } }, { ___expr: 'true', ____expr: 3 }],
      _entity: 4,
      __entityx: 5,
    });
    for (const key of ['__entity', '___entity', '__extn', '__expr', 'a'])
      assert.equal(cedarKey(cedarKey(key)) === cedarKey(key), key === 'a', key);
  });

  it('keeps a __proto__ key as a key', () => {
    const input = JSON.parse('{"__proto__": {"path": "/etc/shadow"}}') as unknown;
    const value = carried(input) as Record<string, unknown>;
    assert.equal(Object.getPrototypeOf(value), Object.prototype);
    assert.deepEqual(Object.keys(value), ['__proto__']);
    assert.equal(JSON.stringify(value), '{"__proto__":{"path":"/etc/shadow"}}');
  });

  it(`carries ${MAX_INPUT_DEPTH} levels, a marker at the deepest included, and refuses one more`, () => {
    assert.deepEqual(
      JSON.stringify(carried(nest(MAX_INPUT_DEPTH, 0.5))),
      JSON.stringify(nest(MAX_INPUT_DEPTH, decimal('0.5'))),
    );
    assert.match(
      refused({ pad: nest(MAX_INPUT_DEPTH, 'leaf') }),
      new RegExp(`^at input\\.pad\\[0\\]\\[0\\].*nested deeper than ${MAX_INPUT_DEPTH} levels`),
    );
    const cycle: Record<string, unknown> = {};
    cycle['self'] = cycle;
    assert.match(refused(cycle), /nested deeper than .* \(or is cyclic\)/);
  });

  it('refuses what is not JSON data, and strings Cedar cannot read, saying where', () => {
    const cases: [unknown, RegExp][] = [
      [NaN, /^NaN is not JSON data$/],
      [{ v: [Infinity] }, /^at input\.v\[0\], Infinity is not JSON data$/],
      [{ v: 1n }, /a bigint is not JSON data/],
      [{ v: () => 1 }, /a function is not JSON data/],
      [{ v: Symbol('s') }, /a symbol is not JSON data/],
      [{ v: new Date(0) }, /a Date is not JSON data/],
      [{ v: new Map() }, /a Map is not JSON data/],
      [{ v: new Proxy({}, {}) }, /a proxy is not JSON data/],
      [{ 'odd key': '\ud800' }, /^at input\["odd key"\], a string holds a lone surrogate/],
      [{ ['\udc00']: 1 }, /a key holds a lone surrogate/],
    ];
    for (const [input, reason] of cases) assert.match(refused(input), reason);
    const hostile = {
      get x(): never {
        throw new Error('no');
      },
    };
    assert.equal(refused(hostile), 'reading it threw');
  });
});

describe('cedarRequest', () => {
  it('builds the fixed request shape', () => {
    const capability = { name: 'c', version: '1', risk: 'read' } as const;
    const caller = { id: 'u', scopes: ['a'] };
    const request = cedarRequest(
      principalOf(caller),
      capabilityEntities(capability),
      cedarContext(
        { jobId: 'j', stepId: 's', capability, input: { n: 1 }, caller },
        'sha256:1',
        carried({ n: 1 }),
      ),
    );
    assert.deepEqual(request, {
      principal: { type: 'Warrant::Caller', id: 'u' },
      action: { type: 'Warrant::Action', id: 'c' },
      resource: { type: 'Warrant::Capability', id: 'c@1' },
      context: {
        input: { n: 1 },
        inputDigest: 'sha256:1',
        jobId: 'j',
        stepId: 's',
        approved: false,
        actors: [],
        effectiveScopes: ['a'],
      },
      entities: [
        { uid: { type: 'Warrant::Caller', id: 'u' }, attrs: { scopes: ['a'] }, parents: [] },
        {
          uid: { type: 'Warrant::Action', id: 'c' },
          attrs: {},
          parents: [{ type: 'Warrant::Action', id: 'risk:read' }],
        },
        { uid: { type: 'Warrant::Action', id: 'risk:read' }, attrs: {}, parents: [] },
        {
          uid: { type: 'Warrant::Capability', id: 'c@1' },
          attrs: { name: 'c', version: '1', risk: 'read' },
          parents: [],
        },
      ],
    });
  });
});

describe('cedarContext of a caller acting through agents (docs/api.md, "Callers: acting for someone")', () => {
  const capability = { name: 'c', version: '1', risk: 'write' } as const;
  const contextOf = (caller: Record<string, unknown>) =>
    cedarContext(
      { jobId: 'j', stepId: 's', capability, input: {}, caller },
      'sha256:1',
      carried({}),
    );

  it('keeps the subject as principal and gives the current actor, every actor and the effective scopes', () => {
    const caller = {
      id: 'ada',
      scopes: ['mail:send', 'files:read', 'calendar'],
      actor: {
        id: 'assistant',
        scopes: ['mail:send', 'calendar'],
        actor: { id: 'planner', scopes: ['mail:send', 'files:read'] },
      },
    };
    assert.deepEqual(principalOf(caller).uid, { type: 'Warrant::Caller', id: 'ada' });
    const context = contextOf(caller);
    assert.deepEqual(context.actor, { id: 'assistant', scopes: ['mail:send', 'calendar'] });
    assert.deepEqual(context.actors, ['assistant', 'planner']);
    assert.deepEqual(context.effectiveScopes, ['mail:send']);
  });

  it('gives an actor without scopes an empty set, and the chain none', () => {
    const context = contextOf({ id: 'ada', scopes: ['mail:send'], actor: { id: 'bot' } });
    assert.deepEqual(context.actor, { id: 'bot', scopes: [] });
    assert.deepEqual(context.effectiveScopes, []);
  });

  it("without an actor: no actor, no actors, the caller's own scopes", () => {
    const context = contextOf({ id: 'ada', scopes: ['x'] });
    assert.equal('actor' in context, false);
    assert.deepEqual(context.actors, []);
    assert.deepEqual(context.effectiveScopes, ['x']);
  });
});

describe('requestKeyText', () => {
  it('is one text per request: the same for reordered input keys, another for any other change', () => {
    const capability = { name: 'c', version: '1', risk: 'read' } as const;
    const text = (input: unknown, caller = { id: 'u', scopes: ['a'] }, jobId = 'j') =>
      requestKeyText(
        principalOf(caller),
        'c@1',
        cedarContext({ jobId, stepId: 's', capability, input, caller }, 'sha256:1', carried(input)),
      );
    assert.equal(text({ a: 1, b: { c: 'x', d: true } }), text({ b: { d: true, c: 'x' }, a: 1 }));
    assert.notEqual(text({ a: 1 }), text({ a: 2 }));
    assert.notEqual(text({ a: 1 }), text({ a: 1 }, { id: 'u', scopes: ['b'] }));
    assert.notEqual(text({ a: 1 }), text({ a: 1 }, undefined, 'k'));
    // Markers and escaped keys keep texts apart: the encoding is one to one.
    assert.notEqual(text({ a: 0.5 }), text({ a: '0.5' }));
    assert.notEqual(text({ a: null }), text({ a: 'null' }));
    assert.notEqual(
      text({ a: null }),
      text({ a: { __entity: { type: 'Warrant::Null', id: 'null' } } }),
    );
    assert.notEqual(text({ __entity: 1 }), text({ ___entity: 1 }));
  });
});
