import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadCedar } from '../../src/policy/cedar-wasm.cjs';
import { lineAt, parsePolicySet } from '../../src/policy/policy-set.js';

describe('parsePolicySet', () => {
  it('keeps each policy at its position with its id, effect and approval mark', () => {
    const text = [
      'forbid(principal, action, resource) when { context.input.n == 0 };',
      ...Array.from({ length: 10 }, () => 'permit(principal, action, resource);'),
      '@id("last") @warrant("require_approval") permit(principal, action, resource);',
    ].join('\n');
    const set = parsePolicySet(loadCedar(), text);
    assert.deepEqual(
      set.policies.map((policy) => [
        policy.id,
        policy.position,
        policy.effect,
        policy.requiresApproval,
      ]),
      [
        ['policy0', 0, 'forbid', false],
        ...Array.from({ length: 10 }, (_, index) => [
          `policy${index + 1}`,
          index + 1,
          'permit',
          false,
        ]),
        ['last', 11, 'permit', true],
      ],
    );
    assert.match(set.texts['policy0'] ?? '', /forbid/);
    assert.match(set.texts['last'] ?? '', /require_approval/);
  });
});

describe('lineAt', () => {
  it('counts lines by UTF-8 byte offset, as Cedar reports them', () => {
    const text = '// é\n\npermit';
    assert.equal(lineAt(text, 0), 1);
    assert.equal(lineAt(text, Buffer.byteLength('// é\n\n')), 3);
  });
});
