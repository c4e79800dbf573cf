/**
 * `--callers <file.json>`: `{ "callers": [{ "tokenSha256": "<64 hex>", "caller": { "id": ... } }] }`.
 * The file holds digests, never tokens. A request's bearer token is hashed and compared with
 * every digest in constant time, without stopping at a match (docs/decisions.md
 * "Authentication modes"). An entry's `mayActFor: [ids]` lets its token send
 * `Warrant-On-Behalf-Of: <id>`: the caller is then the entry with that id, acted for by the
 * token's (docs/api.md, "Callers: acting for someone").
 */
import { timingSafeEqual } from 'node:crypto';
import {
  INVALID_TOKEN,
  NO_CREDENTIALS,
  authOptionsError,
  bearerToken,
  onBehalfOf,
  type AuthResult,
  type AuthSuccess,
  type Authenticator,
} from './authenticator.js';
import type { ExecutionCaller } from '../../index.js';
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
  readonly accepted: AuthSuccess;
  /** The callers its token may act for (`mayActFor`), by id: the subject, this entry the actor. */
  readonly actingFor: ReadonlyMap<string, AuthSuccess>;
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

/** An entry as read, before `mayActFor` names are looked up. */
interface ReadEntry {
  readonly digest: Buffer;
  readonly caller: ExecutionCaller;
  readonly mayActFor: readonly string[];
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
  const read = list.map((entry: unknown, index): ReadEntry => {
    const name = `callers[${index}]`;
    if (!isObject(entry)) throw fail(`${name} must be an object { tokenSha256, caller }`);
    const extraKey = unknownKey(entry, ['tokenSha256', 'caller', 'mayActFor']);
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
    const mayActFor = entry.mayActFor ?? [];
    if (
      !Array.isArray(mayActFor) ||
      !mayActFor.every((id: unknown) => typeof id === 'string' && id !== '')
    )
      throw fail(`${name}.mayActFor must be an array of caller ids (non-empty strings)`);
    return {
      digest: Buffer.from(lower, 'hex'),
      caller: checked.caller,
      mayActFor: mayActFor as string[],
    };
  });
  return read.map((entry, index) => ({
    digest: entry.digest,
    accepted: Object.freeze({ ok: true, caller: entry.caller }),
    actingFor: actingFor(read, index, fail),
  }));
}

/**
 * The callers entry `index` may act for: for each id of its `mayActFor`, the caller of the one
 * entry with that id (the subject: its id, scopes, tenant and the rest) with this entry's caller
 * as its `actor`, checked by the caller checker. An id no entry has, or two have, an entry acting
 * for itself, a subject that has an actor of its own, or a chain the checker refuses (another
 * tenant) stops the server at start.
 */
function actingFor(
  read: readonly ReadEntry[],
  index: number,
  fail: (message: string) => Error,
): ReadonlyMap<string, AuthSuccess> {
  const { caller: actor, mayActFor } = read[index] as ReadEntry;
  const acting = new Map<string, AuthSuccess>();
  mayActFor.forEach((id, position) => {
    const name = `callers[${index}].mayActFor[${position}]`;
    const subjects = read.filter((entry) => entry.caller.id === id);
    if (subjects.length !== 1)
      throw fail(
        `${name} ${JSON.stringify(id)} must name the caller id of exactly one entry (${subjects.length} have it)`,
      );
    const subject = (subjects[0] as ReadEntry).caller;
    if (id === actor.id) throw fail(`${name} names the entry's own caller id`);
    if (subject.actor !== undefined)
      throw fail(`${name} ${JSON.stringify(id)} names a caller that has an actor of its own`);
    const checked = frozenCallerCopy({ ...subject, actor }, `${name} (${JSON.stringify(id)})`);
    if (!checked.ok) throw fail(checked.reason);
    acting.set(id, Object.freeze({ ok: true, caller: checked.caller, delegated: true }));
  });
  return acting;
}

function matchAll(entries: readonly Entry[], digest: Buffer): Entry | undefined {
  // Every digest is compared, whatever matched before: the time taken does not tell which
  // entry (or whether any) matched. Digests are unique, so at most one matches.
  let found: Entry | undefined;
  for (const entry of entries) {
    const equal = timingSafeEqual(entry.digest, digest);
    found = equal ? entry : found;
  }
  return found;
}

/**
 * The answer for a token's entry: its caller, or with `Warrant-On-Behalf-Of: <id>` the caller
 * it acts for when its `mayActFor` lists that id; anything else with the header is a 401.
 */
function answerFor(entry: Entry | undefined, acting: string | undefined): AuthResult {
  if (entry === undefined) return INVALID_TOKEN;
  if (acting === undefined) return entry.accepted;
  return entry.actingFor.get(acting) ?? INVALID_TOKEN;
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
      return answerFor(matchAll(entries, sha256(credentials.token)), onBehalfOf(request.headers));
    },
  };
  return { authenticator, count: entries.length, warnings };
}
