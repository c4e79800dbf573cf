/**
 * `--caller <json>` of `warrant run` and `warrant mcp` (docs/guide/cli.md, "Options of the commands
 * that run plans"): the caller the authorizer sees. JSON data (objects, arrays, strings, finite
 * numbers, booleans, null) with a non-empty string `id`, `scopes` an array of strings, `metadata`
 * an object, an `actor` chain the chain rules admit (docs/api.md, "Callers: acting for
 * someone"); the same check as a callers file entry (docs/decisions.md "Authentication modes").
 * Anything else is a UsageError (exit 2), one line.
 */
import { userInfo } from 'node:os';
import type { ExecutionCaller } from '../index.js';
import { frozenCallerCopy } from '../callers/caller-check.js';
import { parseJson } from '../json/parse-json.js';
import { firstLine, UsageError } from './usage-error.js';

/** Longest `--caller` text accepted (a caller is an identity, not a payload). */
export const CALLER_OPTION_MAX_CHARS = 64 * 1024;

export const callerOptionHelp = `  --caller <json>       the caller the authorizer sees, as JSON with a string "id", e.g.
                        '{"id":"ci-bot","scopes":["plans:write"]}'`;

/** The caller of `--caller <json>`, deeply frozen. */
export function parseCallerOption(text: string): ExecutionCaller {
  if (text.length > CALLER_OPTION_MAX_CHARS)
    throw new UsageError(`--caller is longer than ${CALLER_OPTION_MAX_CHARS} characters`);
  let value: unknown;
  try {
    value = parseJson(text);
  } catch (error) {
    throw new UsageError(`--caller is not valid JSON: ${firstLine(error)}`);
  }
  const checked = frozenCallerCopy(value, '--caller');
  if (!checked.ok) throw new UsageError(checked.reason);
  return checked.caller;
}

/**
 * The operating-system user name for `cli:<name>`: `os.userInfo()`, else the numeric uid, else
 * `unknown` (a uid without a passwd entry, as in some containers, makes `userInfo` throw).
 */
export function osUserName(info: () => { username: string; uid: number } = userInfo): string {
  try {
    const { username, uid } = info();
    if (typeof username === 'string' && username !== '') return username;
    if (Number.isInteger(uid) && uid >= 0) return `uid:${uid}`;
  } catch {
    // No passwd entry: fall back to the uid of the process.
  }
  const uid = typeof process.getuid === 'function' ? process.getuid() : undefined;
  return uid === undefined ? 'unknown' : `uid:${uid}`;
}

/** `--caller` when given, else `fallback`. */
export function callerOf(
  text: string | undefined,
  fallback: () => ExecutionCaller,
): ExecutionCaller {
  return text === undefined ? fallback() : parseCallerOption(text);
}
