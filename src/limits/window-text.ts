/**
 * One duration format for limit windows (docs/api.md, "Limits"): the reason of a denial over a
 * limit and `warrant limits` write a window alike, in the largest unit that divides it.
 */

const UNITS: readonly [number, string][] = [
  [86_400_000, 'd'],
  [3_600_000, 'h'],
  [60_000, 'm'],
  [1_000, 's'],
];

/** A window in the largest unit that divides it: `1d`, `2h`, `1m`, `90s`, `1500ms`. */
export function formatWindow(windowMs: number): string {
  for (const [size, unit] of UNITS) if (windowMs % size === 0) return `${windowMs / size}${unit}`;
  return `${windowMs}ms`;
}
