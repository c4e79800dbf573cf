/**
 * "Did you mean ...?" for a capability name that is not registered (docs/guide/cli.md, "Progress of
 * `warrant run`", docs/decisions.md "Suggesting a registered name"): the registered name closest by
 * edit distance, only when it is close. The work is bounded whatever the plan or the inventory:
 * names longer than MAX_SUGGESTED_NAME_CHARS are never compared, at most MAX_COMPARED_NAMES
 * registered names are looked at, and each comparison stops as soon as it cannot be close.
 */

/** Names longer than this (the unknown one or a registered one) get no suggestion. */
export const MAX_SUGGESTED_NAME_CHARS = 128;

/** Registered names compared per suggestion, in registration order. */
export const MAX_COMPARED_NAMES = 1_000;

/** The largest edit distance that still counts as close for a name of `length` characters. */
export function closeEnough(length: number): number {
  return Math.min(3, Math.max(1, Math.ceil(length / 4)));
}

/**
 * Edit distance (insertions, deletions, substitutions and swaps of two neighbours, each 1)
 * between `a` and `b`, or `limit + 1` as soon as it is known to exceed `limit`.
 */
export function editDistance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  // Three rows of the dynamic programme: two back (for swaps), one back, and the current one.
  let before = new Array<number>(b.length + 1).fill(0);
  let previous = Array.from({ length: b.length + 1 }, (_, column) => column);
  let current = new Array<number>(b.length + 1).fill(0);
  for (let row = 1; row <= a.length; row += 1) {
    current[0] = row;
    let rowMinimum = row;
    for (let column = 1; column <= b.length; column += 1) {
      const cost = a[row - 1] === b[column - 1] ? 0 : 1;
      let best = Math.min(
        (previous[column] as number) + 1,
        (current[column - 1] as number) + 1,
        (previous[column - 1] as number) + cost,
      );
      if (row > 1 && column > 1 && a[row - 1] === b[column - 2] && a[row - 2] === b[column - 1]) {
        best = Math.min(best, (before[column - 2] as number) + 1);
      }
      current[column] = best;
      if (best < rowMinimum) rowMinimum = best;
    }
    if (rowMinimum > limit) return limit + 1;
    [before, previous, current] = [previous, current, before];
  }
  const distance = previous[b.length] as number;
  return distance > limit ? limit + 1 : distance;
}

/**
 * The registered name closest to `name`, when one is close enough (closeEnough); the first in
 * the given order wins a tie. `undefined` when none is close, or `name` is too long.
 */
export function suggestName(name: string, registered: Iterable<string>): string | undefined {
  if (name.length === 0 || name.length > MAX_SUGGESTED_NAME_CHARS) return undefined;
  let limit = closeEnough(name.length);
  let best: string | undefined;
  let compared = 0;
  for (const candidate of registered) {
    if (compared >= MAX_COMPARED_NAMES) break;
    compared += 1;
    if (candidate === name || candidate.length > MAX_SUGGESTED_NAME_CHARS) continue;
    const distance = editDistance(name, candidate, limit);
    if (distance > limit) continue;
    best = candidate;
    // Only a strictly closer name may replace this one; nothing other than `name` is closer than 1.
    if (distance <= 1) break;
    limit = distance - 1;
  }
  return best;
}

/** Suggests a close registered name for an unknown one (or `undefined`). */
export type Suggester = (name: string) => string | undefined;

/** Most distinct unknown names one admission looks for a suggestion for. */
export const MAX_SUGGESTIONS = 20;

/**
 * A suggester for one admission: reads the registered names once, on the first unknown name,
 * answers each distinct unknown name once, and stops suggesting after MAX_SUGGESTIONS of them
 * (a plan of 100,000 unknown steps costs at most MAX_SUGGESTIONS searches).
 */
export function nameSuggester(registered: () => readonly string[]): Suggester {
  let names: readonly string[] | undefined;
  const answers = new Map<string, string | undefined>();
  return (name) => {
    if (answers.has(name)) return answers.get(name);
    if (answers.size >= MAX_SUGGESTIONS) return undefined;
    names ??= registered();
    const answer = suggestName(name, names);
    answers.set(name, answer);
    return answer;
  };
}
