// Shared settings and arbitraries for the property-based tests in test/properties/.
//
// Run settings (every property):
// - WARRANT_PROPERTY_RUNS: generated cases per property. Default 10,000 when CI is set (and not
//   "false"/"0"), 500 otherwise.
// - WARRANT_PROPERTY_SEED: the fast-check seed (an integer). Default DEFAULT_SEED, so every run
//   generates the same cases and a failure reproduces. fast-check prints the seed and the
//   counterexample path when a property fails.
// - WARRANT_PROPERTY_PATH: the `path` fast-check printed with a failure; replays that
//   counterexample directly (use it together with the printed seed).
import fc from 'fast-check';
import { OperatorRuntime, type OperatorRuntimeOptions } from '../../src/index.js';

export const DEFAULT_SEED = 0x5eed_2026;

function integerFromEnvironment(name: string, fallback: number, minimum: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < minimum) {
    throw new Error(`${name} must be an integer >= ${minimum}, got ${JSON.stringify(raw)}`);
  }
  return value;
}

function runningInCi(): boolean {
  const ci = process.env.CI;
  return ci !== undefined && ci !== '' && ci !== 'false' && ci !== '0';
}

export interface PropertySettings {
  readonly seed: number;
  readonly numRuns: number;
  readonly path?: string;
}

/** Seed, number of runs and (optionally) a replay path, from the environment. */
export function propertySettings(): PropertySettings {
  const numRuns = integerFromEnvironment('WARRANT_PROPERTY_RUNS', runningInCi() ? 10_000 : 500, 1);
  const seed = integerFromEnvironment('WARRANT_PROPERTY_SEED', DEFAULT_SEED, -(2 ** 31));
  const path = process.env.WARRANT_PROPERTY_PATH;
  return path === undefined || path === '' ? { seed, numRuns } : { seed, numRuns, path };
}

export const settings = propertySettings();

/** Text for test titles, so the report shows what was run. */
export const runLabel = `seed ${settings.seed}, ${settings.numRuns} runs`;

/** Checks an async property with the shared settings (fixed seed; failures print seed + path). */
export async function checkProperty<Ts extends [unknown, ...unknown[]]>(
  property: fc.IAsyncPropertyWithHooks<Ts>,
): Promise<void> {
  await fc.assert(property, {
    seed: settings.seed,
    numRuns: settings.numRuns,
    ...(settings.path === undefined ? {} : { path: settings.path }),
    endOnFailure: false,
  });
}

/** A runtime on the memory store; `close()` it when the case is done. */
export function memoryRuntime(options: OperatorRuntimeOptions = {}): OperatorRuntime {
  return new OperatorRuntime({ store: 'memory', ...options });
}

/** Waits one macrotask turn (an authorizer or capability that answers later). */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Defines an own, enumerable, writable data property (works for `__proto__` too). */
export function defineOwn(target: object, key: string, value: unknown): void {
  Object.defineProperty(target, key, {
    value,
    enumerable: true,
    writable: true,
    configurable: true,
  });
}

/** Names of members every plain object inherits (`Object.prototype`). */
export const OBJECT_PROTOTYPE_MEMBERS: readonly string[] = Object.getOwnPropertyNames(
  Object.prototype,
).sort();

/**
 * Step ids: short ids, ids with dots, spaces, upper case and non-ASCII, plus arbitrary short
 * strings. None contains `.result` (an id like `a.result` next to an id `a` makes references
 * ambiguous on purpose; the admission property covers that).
 */
export const stepIdArb: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('a', 'b', 'c', 'A', 'fetch.data', 'x y', 'ü', 'step-1', '0', 'results'),
  fc.string({ minLength: 1, maxLength: 6 }).filter((id) => !id.includes('.result')),
);

/** Small JSON-like values (no references inside: plain data for inputs and results). */
export const plainDataArb: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.integer(),
    fc.string({ maxLength: 5 }),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(
      fc.string({ minLength: 1, maxLength: 4 }).filter((key) => key !== '$ref'),
      tie('value'),
      { maxKeys: 3 },
    ),
  ),
})).value;

/** A structural deep copy of plain data (arrays and plain objects), used to detect writes. */
export function plainCopy(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(plainCopy);
  if (typeof value === 'object' && value !== null) {
    const copy: Record<string, unknown> = {};
    for (const key of Object.keys(value)) {
      defineOwn(copy, key, plainCopy((value as Record<string, unknown>)[key]));
    }
    return copy;
  }
  return value;
}
