import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { describeThrown, describeValue } from '../../src/errors/describe-value.js';

describe('describeValue() and describeThrown()', () => {
  it('quotes strings, names kinds and cuts long text to 80 characters', () => {
    assert.equal(describeValue('hi'), '"hi"');
    assert.equal(describeValue(10n), '10n');
    assert.equal(describeValue(undefined), 'undefined');
    assert.equal(describeValue([1]), 'an array');
    assert.equal(
      describeValue(() => 1),
      'a function',
    );
    assert.equal(describeValue(Symbol('s')), 'a symbol');
    const long = describeValue('x'.repeat(200));
    assert.equal(long.length, 80);
    assert.ok(long.endsWith('...'));
  });

  it('never throws, whatever was thrown', () => {
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    const hostile = new Error('x');
    Object.defineProperty(hostile, 'message', {
      get() {
        throw new Error('getter');
      },
    });
    assert.equal(describeThrown(new Error('plain')), 'plain');
    assert.equal(describeThrown('text'), 'text');
    assert.equal(describeThrown(hostile), 'An unreadable error was thrown');
    assert.match(describeThrown(proxy), /unreadable|non-error/);
    assert.equal(describeThrown(null), 'A non-error value was thrown: null');
    assert.equal(describeThrown(new Error('')), 'Error');
  });
});
