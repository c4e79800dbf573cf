// docs/api.md, "Bounds": a pattern is admitted only when safe-regex2 finds it safe.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isSafePattern } from '../../src/plan/safe-regex.cjs';

describe('isSafePattern()', () => {
  it('accepts patterns without nested repetition', () => {
    for (const pattern of ['^[a-z]+@example\\.com$', '\\d{3}-\\d{4}', '^A-\\d$', ''])
      assert.equal(isSafePattern(pattern), true, pattern);
  });

  it('refuses nested repetition, and what it cannot parse', () => {
    for (const pattern of ['(a+)+$', '(x+x+)+y', '([a-z]*)*', '['])
      assert.equal(isSafePattern(pattern), false, pattern);
  });
});
