import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  MAX_INPUT_DEPTH,
  capabilityEntities,
  cedarContext,
  cedarInput,
  cedarRequest,
  principalOf,
  requestKeyText,
} from '../../src/policy/cedar-request.js';

describe('cedarInput', () => {
  it('copies what Cedar holds and leaves out the rest', () => {
    const input = {
      a: 'x',
      b: true,
      c: [1, { d: -3 }],
      e: Object.assign(Object.create(null), { f: 'g' }),
    };
    assert.deepEqual(cedarInput(input), { a: 'x', b: true, c: [1, { d: -3 }], e: { f: 'g' } });
    assert.notEqual(cedarInput(input), input);
    for (const bad of [1.5, null, undefined, NaN, 2 ** 53, new Date(0), { m: new Map() }, () => 1])
      assert.equal(cedarInput({ v: bad }), undefined, String(bad));
    for (const key of ['__entity', '__extn', '__expr'])
      assert.equal(cedarInput({ deep: [{ [key]: 'x' }] }), undefined, key);
  });

  it(`leaves out input nested more than ${MAX_INPUT_DEPTH} levels`, () => {
    const nest = (levels: number): unknown => (levels === 0 ? 'leaf' : [nest(levels - 1)]);
    assert.notEqual(cedarInput(nest(MAX_INPUT_DEPTH - 1)), undefined);
    assert.equal(cedarInput(nest(MAX_INPUT_DEPTH + 1)), undefined);
  });

  it('leaves out input whose reading throws', () => {
    const hostile = {
      get x(): never {
        throw new Error('no');
      },
    };
    assert.equal(cedarInput(hostile), undefined);
  });
});

describe('cedarRequest', () => {
  it('builds the fixed request shape', () => {
    const capability = { name: 'c', version: '1', risk: 'read' } as const;
    const caller = { id: 'u', scopes: ['a'] };
    const request = cedarRequest(
      principalOf(caller),
      capabilityEntities(capability),
      cedarContext({ jobId: 'j', stepId: 's', capability, input: { n: 1 }, caller }, 'sha256:1'),
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

describe('requestKeyText', () => {
  it('is one text per request: the same for reordered input keys, another for any other change', () => {
    const capability = { name: 'c', version: '1', risk: 'read' } as const;
    const text = (input: unknown, caller = { id: 'u', scopes: ['a'] }, jobId = 'j') =>
      requestKeyText(
        principalOf(caller),
        'c@1',
        cedarContext({ jobId, stepId: 's', capability, input, caller }, 'sha256:1'),
      );
    assert.equal(text({ a: 1, b: { c: 'x', d: true } }), text({ b: { d: true, c: 'x' }, a: 1 }));
    assert.notEqual(text({ a: 1 }), text({ a: 2 }));
    assert.notEqual(text({ a: 1 }), text({ a: 1 }, { id: 'u', scopes: ['b'] }));
    assert.notEqual(text({ a: 1 }), text({ a: 1 }, undefined, 'k'));
    assert.notEqual(text({ a: 1.5 }), text({}), 'input left out is not the same as an empty input');
  });
});
