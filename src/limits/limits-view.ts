/**
 * What `runtime.listLimits`, `GET /api/limits` and `warrant limits` show (docs/api.md,
 * "runtime.listLimits"): the limits configured and the store's counters, decoded.
 */
import type { ExecutionCaller } from '../callers/execution-caller.js';
import type { LimitCounter } from '../jobs/job-store.js';
import type { CheckedLimit, LimitScope } from './limit-options.js';
import { tenantOf } from '../callers/tenant-rules.js';
import { currentActor } from '../callers/actor-chain.js';

/** A configured limit, as shown. */
export interface LimitShown {
  readonly name: string;
  readonly per: LimitScope;
  readonly match: { readonly capability?: string; readonly risk?: string };
  readonly max: number;
  readonly windowMs: number;
  readonly cost: boolean;
}

/** A counter: what was taken under a limit, for a caller, a tenant or all, in its window now. */
export interface LimitCounterShown {
  readonly limit: string;
  readonly per: LimitScope;
  /** Absent for a global counter, and for callers without a tenant. */
  readonly tenant?: string;
  /** A per-caller counter's caller id (absent for steps without a caller id). */
  readonly caller?: string;
  /** A per-actor counter's id: the actor's, or a caller's that acted without one. */
  readonly actor?: string;
  readonly used: number;
  /** The limit's `max` when it is configured in this runtime. */
  readonly max?: number;
  readonly windowMs: number;
}

export interface LimitsView {
  readonly limits: LimitShown[];
  readonly counters: LimitCounterShown[];
}

interface DecodedKey {
  per: LimitScope;
  tenant?: string;
  caller?: string;
  actor?: string;
}

/** Decodes a counter key (limit-check.ts, `counterKey`); undefined for a key it cannot read. */
function decodeKey(key: string): DecodedKey | undefined {
  let parts: unknown;
  try {
    parts = JSON.parse(key);
  } catch {
    return undefined;
  }
  if (!Array.isArray(parts) || parts.length > 3) return undefined;
  if (!parts.every((part) => part === null || typeof part === 'string')) return undefined;
  const [tenant, id, marker] = parts as (string | null)[];
  if (parts.length === 3 && marker !== 'actor') return undefined;
  const per: LimitScope = (['global', 'tenant', 'caller', 'actor'] as const)[
    parts.length
  ] as LimitScope;
  return {
    per,
    ...(typeof tenant === 'string' && { tenant }),
    ...(typeof id === 'string' && (per === 'actor' ? { actor: id } : { caller: id })),
  };
}

/** Whether a caller that is not an auditor sees a per-caller or per-actor counter: its own. */
function ownCounter(decoded: DecodedKey, caller: ExecutionCaller): boolean {
  const id = typeof caller.id === 'string' ? caller.id : undefined;
  if (decoded.per === 'caller') return id !== undefined && decoded.caller === id;
  if (decoded.per !== 'actor') return true;
  return (
    decoded.actor !== undefined &&
    (decoded.actor === id || decoded.actor === currentActor(caller)?.id)
  );
}

/**
 * The view: every configured limit, and the counters with something in their window. With a
 * `caller`, only the counters it may see: the global ones, those of its tenant (a caller without
 * one: of callers without one) that are per tenant or, for `audit`, per caller and per actor
 * too, and its own (per actor: its id's, or its current actor's).
 */
export function limitsView(
  limits: readonly CheckedLimit[],
  counters: readonly LimitCounter[],
  caller: ExecutionCaller | undefined,
  audit = false,
): LimitsView {
  const byName = new Map(limits.map((limit) => [limit.name, limit]));
  const tenant = tenantOf(caller);
  const shown: LimitCounterShown[] = [];
  for (const counter of counters) {
    const decoded = decodeKey(counter.key);
    if (decoded === undefined) continue;
    if (caller !== undefined && decoded.per !== 'global') {
      if (decoded.tenant !== tenant) continue;
      if (!audit && !ownCounter(decoded, caller)) continue;
    }
    const max = byName.get(counter.name)?.max;
    shown.push({
      limit: counter.name,
      ...decoded,
      used: Math.round(counter.used * 1e6) / 1e6,
      ...(max !== undefined && { max }),
      windowMs: counter.windowMs,
    });
  }
  return {
    limits: limits.map((limit) => ({
      name: limit.name,
      per: limit.per,
      match: {
        ...(limit.capability !== undefined && { capability: limit.capability }),
        ...(limit.risk !== undefined && { risk: limit.risk }),
      },
      max: limit.max,
      windowMs: limit.windowMs,
      cost: limit.cost,
    })),
    counters: shown,
  };
}
