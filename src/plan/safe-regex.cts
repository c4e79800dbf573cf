/**
 * The pattern judge of plan bounds (docs/api.md, "Bounds"): `safe-regex2`, which refuses a regular
 * expression with nested repetition or too many repetitions. Required on first use, never at
 * import (docs/decisions.md, "Light import"), and a CommonJS module in both builds (`.cts`) so
 * that admission, which is synchronous, can ask it at once.
 */
import type SafeRegex from 'safe-regex2';

type Judge = typeof SafeRegex;

let loaded: Judge | undefined;

/** True when `safe-regex2` finds the pattern safe (it answers false for one it cannot parse). */
export function isSafePattern(pattern: string): boolean {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  loaded ??= require('safe-regex2') as Judge;
  return loaded(pattern);
}
