/**
 * The `limits` option (docs/api.md, "Limits"): rate and cost limits, read once and checked;
 * anything malformed is RUNTIME_OPTIONS_INVALID naming the limit and the field (docs/errors.md).
 */
import { ErrorCode } from '../errors/error-codes.js';
import { describeValue } from '../errors/describe-value.js';
import { createError } from '../errors/warrant-error.js';
import {
  isArrayValue,
  isPlainObject,
  readArray,
  readField,
  readKeys,
  type ReadFailure,
} from '../values/hostile-reads.js';
import { formatWindow } from './window-text.js';

/**
 * Whose steps a limit counts together: the caller's (its id), the current actor's (docs/api.md,
 * "Limits"; a caller without an actor under its own id), the tenant's or everyone's.
 */
export type LimitScope = 'caller' | 'actor' | 'tenant' | 'global';

/** One limit, as given to the `limits` option or in a `--limits` file. */
export interface LimitDefinition {
  /** Unique among the limits; named in the denial's reason and in `decision.limit`. */
  readonly name: string;
  /** Which steps it counts: absent or `{}` matches every step. */
  readonly match?: { readonly capability?: string; readonly risk?: string };
  readonly per: LimitScope;
  /** At most this much in any window of `windowMs` (a count, or a sum of costs). */
  readonly max: number;
  readonly windowMs: number;
  /** Counts the capability's declared `cost` instead of 1 (1 when it declares none). */
  readonly cost?: true;
}

/** A checked limit, frozen. */
export interface CheckedLimit {
  readonly name: string;
  readonly capability: string | undefined;
  readonly risk: string | undefined;
  readonly per: LimitScope;
  readonly max: number;
  readonly windowMs: number;
  readonly cost: boolean;
  /** `windowMs` as the reason writes it: `1h`, `30s`, `1500ms`. */
  readonly window: string;
}

/** At most this many limits: each is checked on every step it matches. */
export const MAX_LIMITS = 100;
const MAX_NAME = 200;
const MAX_WINDOW_MS = 366 * 86_400_000;
const KEYS = new Set(['name', 'match', 'per', 'max', 'windowMs', 'cost']);
const MATCH_KEYS = new Set(['capability', 'risk']);
const SCOPES = new Set(['caller', 'actor', 'tenant', 'global']);
const RISKS = new Set(['read', 'write', 'destructive']);

/** True when `text` holds a C0 control character or DEL (a name is printed in one line). */
function hasControl(text: string): boolean {
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}

function invalid(message: string): TypeError {
  return createError(TypeError, ErrorCode.RUNTIME_OPTIONS_INVALID, message);
}

/**
 * Checks `limits`: an array of at most MAX_LIMITS limits with distinct names. Undefined or an
 * empty array is no limits (undefined: the executor checks nothing).
 */
export function checkLimitsOption(value: unknown): readonly CheckedLimit[] | undefined {
  if (value === undefined) return undefined;
  const fail: ReadFailure = (problem) => invalid(`options.limits ${problem}`);
  if (!isArrayValue(value, fail))
    throw invalid(`options.limits must be an array of limits, got ${describeValue(value)}`);
  const entries = readArray(value as unknown[], MAX_LIMITS, fail);
  const names = new Set<string>();
  const limits = entries.map((entry, index) => {
    const limit = checkLimit(entry, `options.limits[${index}]`);
    if (names.has(limit.name))
      throw invalid(`options.limits[${index}].name ${JSON.stringify(limit.name)} is taken`);
    names.add(limit.name);
    return limit;
  });
  return limits.length === 0 ? undefined : Object.freeze(limits);
}

function checkLimit(entry: unknown, at: string): CheckedLimit {
  const fail: ReadFailure = (problem) => invalid(`${at} ${problem}`);
  if (!isPlainObject(entry, fail))
    throw invalid(`${at} must be an object { name, match?, per, max, windowMs, cost? }`);
  for (const key of readKeys(entry, fail))
    if (!KEYS.has(key)) throw invalid(`${at} has an unknown field ${JSON.stringify(key)}`);
  const field = (key: string) =>
    readField(entry, key, (problem) => invalid(`${at}.${key} ${problem}`));
  const name = field('name');
  if (typeof name !== 'string' || name.length === 0 || name.length > MAX_NAME || hasControl(name))
    throw invalid(
      `${at}.name must be a non-empty string of at most ${MAX_NAME} characters without control characters, got ${describeValue(name)}`,
    );
  const per = field('per');
  if (typeof per !== 'string' || !SCOPES.has(per))
    throw invalid(
      `${at}.per must be "caller", "actor", "tenant" or "global", got ${describeValue(per)}`,
    );
  const max = field('max');
  if (typeof max !== 'number' || !Number.isFinite(max) || max < 0)
    throw invalid(`${at}.max must be a finite non-negative number, got ${describeValue(max)}`);
  const windowMs = field('windowMs');
  if (
    typeof windowMs !== 'number' ||
    !Number.isSafeInteger(windowMs) ||
    windowMs < 1 ||
    windowMs > MAX_WINDOW_MS
  )
    throw invalid(
      `${at}.windowMs must be an integer from 1 to ${MAX_WINDOW_MS} (366 days), got ${describeValue(windowMs)}`,
    );
  const cost = field('cost');
  if (cost !== undefined && cost !== true)
    throw invalid(`${at}.cost must be true when given, got ${describeValue(cost)}`);
  const { capability, risk } = checkMatch(field('match'), `${at}.match`);
  return Object.freeze({
    name,
    capability,
    risk,
    per: per as LimitScope,
    max,
    windowMs,
    cost: cost === true,
    window: formatWindow(windowMs),
  });
}

function checkMatch(
  match: unknown,
  at: string,
): { capability: string | undefined; risk: string | undefined } {
  if (match === undefined) return { capability: undefined, risk: undefined };
  const fail: ReadFailure = (problem) => invalid(`${at} ${problem}`);
  if (!isPlainObject(match, fail))
    throw invalid(`${at} must be an object { capability?, risk? }, got ${describeValue(match)}`);
  for (const key of readKeys(match, fail))
    if (!MATCH_KEYS.has(key)) throw invalid(`${at} has an unknown field ${JSON.stringify(key)}`);
  const capability = readField(match, 'capability', (problem) =>
    invalid(`${at}.capability ${problem}`),
  );
  if (capability !== undefined && (typeof capability !== 'string' || capability.length === 0))
    throw invalid(`${at}.capability must be a non-empty string, got ${describeValue(capability)}`);
  const risk = readField(match, 'risk', (problem) => invalid(`${at}.risk ${problem}`));
  if (risk !== undefined && (typeof risk !== 'string' || !RISKS.has(risk)))
    throw invalid(
      `${at}.risk must be "read", "write" or "destructive", got ${describeValue(risk)}`,
    );
  return { capability: capability as string | undefined, risk: risk as string | undefined };
}
