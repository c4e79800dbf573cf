// Prepared effects (docs/api.md, "Prepared effects"): an effect is at most 64 KiB of canonical
// JSON. The text is written out only for an effect that might be over (src/runtime/
// prepare-effect.ts, effectBytesAtMost): that bound must never be below the text's real size,
// whatever the strings (control characters, quotes, lone surrogates, astral characters), keys
// and numbers (the longest forms) are.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { canonicalJson } from '../../src/json/canonical-json.js';
import { copyGoverned, GovernedBudget } from '../../src/plan/governed-value.js';
import { effectBytesAtMost } from '../../src/runtime/prepare-effect.js';
import { runLabel, settings } from './support.js';

// Characters of every width in canonical JSON: escapes (6 bytes), two-character escapes, 1 to 3
// bytes of UTF-8, a lone surrogate and an astral character (a pair).
const character = fc.oneof(
  fc.constantFrom('\u0000', '\u001f', '"', '\\', '\n', 'a', 'é', '€', '\ud800', '😀'),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
);
const text = fc.array(character, { maxLength: 40 }).map((parts) => parts.join(''));
// An own `__proto__` key is outside the value domain (admission refuses it).
const key = text.filter((name) => name !== '__proto__');
const number = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(-1.2345678901234568e-300, -Number.MAX_VALUE, Number.MIN_VALUE, -0),
  fc.integer(),
);
const leaf = fc.oneof(text, number, fc.boolean(), fc.constant(null));
const { value } = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leaf,
    fc.array(tie('value'), { maxLength: 6 }),
    fc.dictionary(key, tie('value'), { maxKeys: 6 }),
  ),
}));

/** The bytes of `effect`'s canonical JSON and the bound the walk gave. */
function measured(effect: unknown): { bytes: number; most: number } {
  const budget = new GovernedBudget();
  const copied = copyGoverned(effect, budget);
  assert.ok(copied.ok);
  return { bytes: Buffer.byteLength(canonicalJson(copied.value)), most: effectBytesAtMost(budget) };
}

describe('the size bound of an effect', () => {
  it('holds for the widest forms: escaped characters, the longest numbers, empty keys', () => {
    const widest = [
      '\u0000'.repeat(4000),
      { [`${'\u0001'.repeat(100)}`]: '\u001f'.repeat(100) },
      Array.from({ length: 2000 }, () => -1.2345678901234568e-300),
      Array.from({ length: 2000 }, () => [[]]),
      Object.fromEntries(Array.from({ length: 500 }, (_, index) => [String(index), null])),
      -1.2345678901234568e-300,
    ];
    for (const effect of widest) {
      const { bytes, most } = measured(effect);
      assert.ok(bytes <= most, `${bytes} > ${most}`);
    }
  });

  it(`is never below the bytes of its canonical JSON (${runLabel})`, () => {
    fc.assert(
      fc.property(value, (effect) => {
        const { bytes, most } = measured(effect);
        assert.ok(bytes <= most, `${bytes} > ${most}`);
      }),
      {
        seed: settings.seed,
        numRuns: settings.numRuns,
        ...(settings.path === undefined ? {} : { path: settings.path }),
      },
    );
  });
});
