// The one rule of terminal output (docs/guide/cli.md, "Terminal output"): control characters are
// shown escaped, never interpreted.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { shownText, terminalSafe } from '../../src/cli/terminal-text.js';

const C0 = Array.from({ length: 0x20 }, (_, code) => String.fromCharCode(code));
const C1 = Array.from({ length: 0x21 }, (_, code) => String.fromCharCode(0x7f + code));
const OTHERS = ['\u2028', '\u2029', '\u202a', '\u202e', '\u2066', '\u2069'];

describe('shownText', () => {
  it('escapes every C0 and C1 control, DEL, separators and bidi overrides, line breaks included', () => {
    for (const char of [...C0, ...C1, ...OTHERS]) {
      const shown = shownText(`a${char}b`);
      assert.equal(shown.length > 3, true, `U+${char.charCodeAt(0).toString(16)}`);
      assert.ok(!shown.includes(char), `U+${char.charCodeAt(0).toString(16)}`);
    }
    assert.equal(shownText('a\nb\r\tc'), 'a\\nb\\r\\tc');
    assert.equal(shownText('\x1b]0;title\x07\x9b2J'), '\\u001b]0;title\\u0007\\u009b2J');
  });

  it('keeps printable text as it is and cuts it to the given length', () => {
    assert.equal(shownText('héllo wörld ✓ \\ "q"'), 'héllo wörld ✓ \\ "q"');
    assert.equal(shownText('x'.repeat(200), 10), 'xxxxxxx...');
  });
});

describe('terminalSafe', () => {
  it('escapes everything shownText does but the newline', () => {
    assert.equal(terminalSafe('a\x1b[2J\nb\u009b\u2028'), 'a\\u001b[2J\nb\\u009b\\u2028');
  });

  it('keeps JSON valid and equal in value', () => {
    const value = { text: `x${[...C0, ...C1, ...OTHERS].join('')}y` };
    const safe = terminalSafe(JSON.stringify(value, null, 2));
    assert.deepEqual(JSON.parse(safe), value);
    // eslint-disable-next-line no-control-regex -- looking for control characters
    assert.doesNotMatch(safe, /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u202e]/);
  });
});
