// One duration format for limit windows (docs/api.md, "Limits"): denials and `warrant limits`.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatWindow } from '../../src/limits/window-text.js';

describe('formatWindow(windowMs)', () => {
  it('writes a window in the largest unit that divides it', () => {
    assert.equal(formatWindow(86_400_000), '1d');
    assert.equal(formatWindow(7_200_000), '2h');
    assert.equal(formatWindow(90_000), '90s');
    assert.equal(formatWindow(60_000), '1m');
    assert.equal(formatWindow(1_500), '1500ms');
  });
});
