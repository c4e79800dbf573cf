import type { LimitCounter, LimitTake, LimitVerdict } from '../../jobs/job-store.js';

/** One counter: the times and amounts taken, oldest first, within its last window, and their sum. */
interface Counter {
  readonly times: number[];
  readonly amounts: number[];
  used: number;
  windowMs: number;
}

/**
 * The memory store's limit counters (docs/api.md, "Limits"), in process: a sliding window over
 * the recorded times of what was taken. A counter keeps only what its window still holds (for a
 * count limit, at most `max` entries) and their running sum; what expired is dropped when the
 * counter is next taken or read, so a take costs what expired since, not what the window holds.
 */
export class MemoryLimits {
  readonly #counters = new Map<string, Counter>();

  take(takes: readonly LimitTake[], at: number): LimitVerdict {
    const counters: Counter[] = [];
    for (const [index, take] of takes.entries()) {
      const id = `${take.name}\u0000${take.key}`;
      let counter = this.#counters.get(id);
      if (counter === undefined) {
        counter = { times: [], amounts: [], used: 0, windowMs: take.windowMs };
        this.#counters.set(id, counter);
      }
      expire(counter, at - take.windowMs);
      const count = counter.used + take.amount;
      if (count > take.max) return { taken: false, index, count };
      counters.push(counter);
    }
    for (const [index, take] of takes.entries()) {
      const counter = counters[index] as Counter;
      counter.windowMs = take.windowMs;
      if (take.amount === 0) continue;
      counter.times.push(at);
      counter.amounts.push(take.amount);
      counter.used += take.amount;
    }
    return { taken: true };
  }

  counters(at: number): LimitCounter[] {
    const found: LimitCounter[] = [];
    for (const [id, counter] of this.#counters) {
      expire(counter, at - counter.windowMs);
      if (counter.times.length === 0) {
        this.#counters.delete(id);
        continue;
      }
      const [name, key] = id.split('\u0000') as [string, string];
      found.push({ name, key, used: counter.used, windowMs: counter.windowMs });
    }
    return found;
  }
}

/** Drops what was taken at or before `after`, from the entries and from the sum. */
function expire(counter: Counter, after: number): void {
  let first = 0;
  while (first < counter.times.length && (counter.times[first] as number) <= after) {
    counter.used -= counter.amounts[first] as number;
    first++;
  }
  if (first === 0) return;
  counter.times.splice(0, first);
  counter.amounts.splice(0, first);
  // An empty window sums to exactly 0, whatever fractions were added and taken away.
  if (counter.times.length === 0) counter.used = 0;
}
