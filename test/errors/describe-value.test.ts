import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runInNewContext } from 'node:vm';
import {
  MAX_QUOTED_CHARS,
  boundText,
  describeThrown,
  describeValue,
  quoteText,
} from '../../src/errors/describe-value.js';

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

  it('keeps the message of an error from another realm (node:vm), without instanceof', () => {
    const foreign = runInNewContext('new Error("x from elsewhere")') as unknown;
    assert.equal(foreign instanceof Error, false);
    assert.equal(describeThrown(foreign), 'x from elsewhere');
    const foreignType = runInNewContext('new TypeError("")') as unknown;
    assert.equal(describeThrown(foreignType), 'TypeError');
    // A plain object with a message is still not an error.
    assert.equal(
      describeThrown({ message: 'lookalike' }),
      'A non-error value was thrown: an object',
    );
  });

  it('bounds text and quoted text, never splitting a surrogate pair', () => {
    assert.equal(boundText('short', 10), 'short');
    assert.equal(boundText('abcdefghijk', 10), 'abcdefg...');
    const emoji = 'abcdef\u{1F600}xyz';
    assert.equal(boundText(emoji, 10), 'abcdef...');
    const huge = 'i'.repeat(1 << 20);
    const quoted = quoteText(huge);
    assert.equal(quoted.length, MAX_QUOTED_CHARS + 2);
    assert.ok(quoted.endsWith('..."'));
    assert.equal(quoteText('a"b'), '"a\\"b"');
    assert.equal(describeValue(huge).length, MAX_QUOTED_CHARS);
  });
});
