import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isoNow } from '../../src/jobs/clock.js';

describe('isoNow()', () => {
  it('returns the current time as ISO 8601 with millisecond precision', () => {
    const before = Date.now();
    const text = isoNow();
    const after = Date.now();
    assert.match(text, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    const parsed = Date.parse(text);
    assert.ok(parsed >= before && parsed <= after, `${text} outside [${before}, ${after}]`);
  });

  it('reuses the text within one millisecond and moves on with the clock', async (t) => {
    t.mock.timers.enable({ apis: ['Date'], now: 1_700_000_000_000 });
    const first = isoNow();
    assert.equal(isoNow(), first);
    t.mock.timers.tick(1);
    const next = isoNow();
    assert.equal(next, '2023-11-14T22:13:20.001Z');
    assert.notEqual(next, first);
  });
});
