/**
 * The limit check of a step (docs/api.md, "Limits"): after the authorizer allowed it and before
 * it is invoked (each retry too), every limit the step matches takes its count in the store, all
 * or none, atomically. Over a limit, or with a store that cannot count, the step is denied.
 */
import type { ExecutionCaller } from '../callers/execution-caller.js';
import { describeThrown } from '../errors/describe-value.js';
import type { JobStore, LimitTake, LimitVerdict } from '../jobs/job-store.js';
import { hasLimits } from '../jobs/store-parts.js';
import type { CheckedLimit } from './limit-options.js';
import { tenantOf } from '../callers/tenant-rules.js';
import { currentActor } from '../callers/actor-chain.js';

/** What the check needs of the step's capability. */
export interface LimitedCapability {
  readonly name: string;
  readonly risk: string;
  readonly cost?: number | undefined;
}

/** A step denied by a limit: the reason recorded, and the limit's name (`decision.limit`). */
export interface LimitDenial {
  readonly reason: string;
  readonly limit: string;
}

function text(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

/**
 * The counter a limit counts a caller under (JSON, exact for any id or tenant): `[]` for a
 * global limit, `[tenant]` per tenant, `[tenant, id]` per caller, `[tenant, id, "actor"]` per
 * actor (the current actor's id, else the caller's own); null where there is none, so callers
 * without a tenant count together per tenant, and steps without a caller id together per caller.
 */
export function counterKey(limit: CheckedLimit, caller: ExecutionCaller | undefined): string {
  if (limit.per === 'global') return '[]';
  const tenant = tenantOf(caller) ?? null;
  if (limit.per === 'tenant') return JSON.stringify([tenant]);
  if (limit.per === 'actor')
    return JSON.stringify([tenant, text(currentActor(caller)?.id ?? caller?.id), 'actor']);
  return JSON.stringify([tenant, text(caller?.id)]);
}

/** Whether a limit counts steps of this capability. */
export function matches(limit: CheckedLimit, capability: LimitedCapability): boolean {
  return (
    (limit.capability === undefined || limit.capability === capability.name) &&
    (limit.risk === undefined || limit.risk === capability.risk)
  );
}

/** A count as the reason writes it: at most six decimals, no binary noise. */
function formatCount(count: number): string {
  return String(Math.round(count * 1e6) / 1e6);
}

/** The reason of a denial over `limit`: `limit <name>: <n>/<max> in <window>`. */
export function limitReason(limit: CheckedLimit, count: number): string {
  return `limit ${limit.name}: ${formatCount(count)}/${formatCount(limit.max)} in ${limit.window}`;
}

function notCounted(limit: CheckedLimit, why: string): LimitDenial {
  return { reason: `limit ${limit.name}: not counted (${why})`, limit: limit.name };
}

/**
 * Takes the step's count of every limit it matches; undefined when all were taken (or none
 * matched), else the denial. `at` is now, in ms since the epoch.
 */
export function checkLimits(
  limits: readonly CheckedLimit[],
  store: JobStore,
  capability: LimitedCapability,
  caller: ExecutionCaller | undefined,
  at: number,
): LimitDenial | undefined | Promise<LimitDenial | undefined> {
  let matched: CheckedLimit[] | undefined;
  for (const limit of limits) if (matches(limit, capability)) (matched ??= []).push(limit);
  if (matched === undefined) return undefined;
  const first = matched[0] as CheckedLimit;
  if (!hasLimits(store)) return notCounted(first, 'the store cannot count');
  const takes: LimitTake[] = matched.map((limit) => ({
    name: limit.name,
    key: counterKey(limit, caller),
    max: limit.max,
    windowMs: limit.windowMs,
    amount: limit.cost ? (capability.cost ?? 1) : 1,
  }));
  const chosen = matched;
  const judge = (verdict: LimitVerdict | undefined): LimitDenial | undefined => {
    if (verdict?.taken === true) return undefined;
    const limit = verdict === undefined ? undefined : chosen[verdict.index];
    // A verdict that names no limit taken is no proof of one: fail closed.
    if (limit === undefined) return notCounted(first, 'the store answered no verdict');
    return { reason: limitReason(limit, (verdict as { count: number }).count), limit: limit.name };
  };
  const counted = store;
  let verdict: LimitVerdict | Promise<LimitVerdict>;
  try {
    verdict = counted.takeLimits(takes, at);
  } catch (error) {
    return notCounted(first, describeThrown(error));
  }
  if (verdict instanceof Promise)
    return verdict.then(judge, (error: unknown) => notCounted(first, describeThrown(error)));
  return judge(verdict);
}
