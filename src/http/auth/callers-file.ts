/**
 * `--callers <file.json>`: `{ "callers": [{ "tokenSha256": "<64 hex>", "caller": { "id": ... } }] }`.
 * The file holds digests, never tokens. A request's bearer token is hashed and compared with
 * every digest in constant time, without stopping at a match (docs/decisions.md
 * "Authentication modes").
 */
import { timingSafeEqual } from 'node:crypto';
import {
  INVALID_TOKEN,
  NO_CREDENTIALS,
  authOptionsError,
  bearerToken,
  type AuthResult,
  type Authenticator,
} from './authenticator.js';
import { frozenCallerCopy } from '../../callers/caller-check.js';
import { parseJson } from '../../json/parse-json.js';
import { readOptionFile } from './read-option-file.js';
import { sha256 } from './token.js';

/** Largest callers file read at start. */
export const CALLERS_FILE_MAX_BYTES = 1024 * 1024;

export interface CallersFileAuthenticator {
  readonly authenticator: Authenticator;
  /** How many callers the file lists. */
  readonly count: number;
  /** Lines for stderr at start, e.g. when the file is readable by group or others. */
  readonly warnings: readonly string[];
}

interface Entry {
  readonly digest: Buffer;
  readonly accepted: AuthResult;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function unknownKey(
  value: Record<string, unknown>,
  allowed: readonly string[],
): string | undefined {
  return Object.keys(value).find((key) => !allowed.includes(key));
}

/** The entries of the parsed file, or a coded error naming the first bad entry. */
export function parseCallers(data: unknown, label: string): Entry[] {
  const fail = (message: string) => authOptionsError(`${label}: ${message}`);
  if (!isObject(data)) throw fail('must be a JSON object { "callers": [...] }');
  const extra = unknownKey(data, ['callers']);
  if (extra !== undefined) throw fail(`unknown key ${JSON.stringify(extra)} (only "callers")`);
  const list = data.callers;
  if (!Array.isArray(list) || list.length === 0) throw fail('"callers" must be a non-empty array');
  const seen = new Map<string, number>();
  return list.map((entry: unknown, index): Entry => {
    const name = `callers[${index}]`;
    if (!isObject(entry)) throw fail(`${name} must be an object { tokenSha256, caller }`);
    const extraKey = unknownKey(entry, ['tokenSha256', 'caller']);
    if (extraKey !== undefined)
      throw fail(`${name} has an unknown key ${JSON.stringify(extraKey)}`);
    const hex = entry.tokenSha256;
    if (typeof hex !== 'string' || !/^[0-9a-fA-F]{64}$/.test(hex))
      throw fail(`${name}.tokenSha256 must be 64 hexadecimal digits (the SHA-256 of the token)`);
    const lower = hex.toLowerCase();
    const first = seen.get(lower);
    if (first !== undefined) throw fail(`${name}.tokenSha256 repeats callers[${first}]`);
    seen.set(lower, index);
    const checked = frozenCallerCopy(entry.caller, `${name}.caller`);
    if (!checked.ok) throw fail(checked.reason);
    return {
      digest: Buffer.from(lower, 'hex'),
      accepted: Object.freeze({ ok: true, caller: checked.caller }),
    };
  });
}

function matchAll(entries: readonly Entry[], digest: Buffer): AuthResult {
  // Every digest is compared, whatever matched before: the time taken does not tell which
  // entry (or whether any) matched. Digests are unique, so at most one matches.
  let found: AuthResult = INVALID_TOKEN;
  for (const entry of entries) {
    const equal = timingSafeEqual(entry.digest, digest);
    found = equal ? entry.accepted : found;
  }
  return found;
}

/** Reads and checks the file once; the authenticator never reads it again. */
export async function loadCallersFile(path: string): Promise<CallersFileAuthenticator> {
  const label = `--callers ${path}`;
  const file = await readOptionFile(path, label, CALLERS_FILE_MAX_BYTES);
  let data: unknown;
  try {
    data = parseJson(file.text);
  } catch {
    throw authOptionsError(`${label}: not valid JSON`);
  }
  const entries = parseCallers(data, label);
  const warnings =
    (file.mode & 0o077) === 0
      ? []
      : [
          `warning: ${label} is accessible by group or others (mode ${file.mode.toString(8).padStart(4, '0')}); run chmod 600 on it`,
        ];
  const authenticator: Authenticator = {
    async authenticate(request) {
      const credentials = bearerToken(request.headers);
      if (credentials.kind === 'missing') return NO_CREDENTIALS;
      if (credentials.kind === 'malformed') return INVALID_TOKEN;
      return matchAll(entries, sha256(credentials.token));
    },
  };
  return { authenticator, count: entries.length, warnings };
}
