/**
 * Callers that come from outside the runtime (a callers file, a resolver module, `--caller`) are
 * checked and copied once, by the same checker as the runtime's snapshot, so a caller an edge
 * admits is one the runtime admits: JSON data only, at most MAX_CALLER_DEPTH levels and
 * MAX_CALLER_VALUES values, no `"__proto__"` key, a non-empty string `id`, `scopes` an array of
 * strings, `metadata` an object, `tenant` a string, and an `actor` chain the chain rules admit
 * (actor-chain.ts: `CALLER_INVALID` in the runtime, docs/api.md "Callers: acting for someone").
 * The copy is deeply frozen, so nothing the source does later
 * changes it (docs/decisions.md, "Callers"). This file only gives the edges their
 * `{ ok, reason }` shape and wording.
 */
import { boundText } from '../errors/describe-value.js';
import { chainProblem } from './actor-chain.js';
import {
  copyCallerData,
  malformedField,
  MAX_CALLER_DEPTH,
  MAX_PATH_CHARS,
  NotJsonData,
  type CallerDataProblem,
} from './caller-snapshot.js';
import type { ExecutionCaller } from './execution-caller.js';

export type CallerCheck =
  | { readonly ok: true; readonly caller: ExecutionCaller }
  | { readonly ok: false; readonly reason: string };

/** How the edges word a problem, where it differs from the runtime's wording. */
const EDGE_WORDING: Partial<Record<CallerDataProblem, string>> = {
  'not-finite': 'is not a finite number',
  'not-data': 'is not JSON data',
  hole: 'is not JSON data',
  'too-deep': `is nested deeper than ${MAX_CALLER_DEPTH} levels (or cyclic)`,
  cycle: `is nested deeper than ${MAX_CALLER_DEPTH} levels (or cyclic)`,
  'array-subclass': 'is not a plain array',
  'not-plain': 'is not a plain object',
};

const FIELD_REASON = {
  id: 'id must be a non-empty string',
  scopes: 'scopes must be an array of strings',
  metadata: 'metadata must be an object',
  tenant: 'tenant must be a string',
} as const;

/**
 * A deeply frozen copy of `value` when it is a caller made of JSON data, else the first reason
 * it is not (naming the field from `path`). Never throws: getters or proxy traps that throw make
 * it `ok: false`.
 */
export function frozenCallerCopy(value: unknown, path = 'caller'): CallerCheck {
  let copy: unknown;
  try {
    // Inside the try: Array.isArray throws on a revoked proxy.
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      return { ok: false, reason: `${path} must be an object` };
    copy = copyCallerData(value, path, true).copy;
  } catch (error) {
    if (!(error instanceof NotJsonData) || error.kind === 'unreadable')
      return { ok: false, reason: `${path} could not be read` };
    const where = boundText(error.path, MAX_PATH_CHARS);
    return { ok: false, reason: `${where} ${EDGE_WORDING[error.kind] ?? error.problem}` };
  }
  const field = malformedField(copy as Record<string, unknown>, true);
  if (field !== undefined) return { ok: false, reason: `${path}.${FIELD_REASON[field]}` };
  const chain = chainProblem(copy as Record<string, unknown>);
  if (chain !== undefined) return { ok: false, reason: `${path}.${chain}` };
  return { ok: true, caller: copy as ExecutionCaller };
}
