/**
 * Idempotency keys (docs/api.md, "Idempotency"): a key is unique per caller id and tenant for
 * `idempotencyTtlMs`; a repeat with the same plan digest is the first job, a repeat with another
 * plan is IDEMPOTENCY_CONFLICT. The store claims keys atomically, so this holds across
 * processes on one store. Only for a caller with an id (submissions without one are never
 * deduplicated).
 */
import type { ExecutionCaller } from '../callers/execution-caller.js';
import { ErrorCode } from '../errors/error-codes.js';
import { createError } from '../errors/warrant-error.js';
import { newJobId } from '../jobs/job-id.js';
import type { JobStore } from '../jobs/job-store.js';
import { hasIdempotency } from '../jobs/store-parts.js';
import { recordValue } from '../jobs/recorded-value.js';
import type { AdmittedPlan } from '../plan/admission.js';
import { tenantOf } from '../callers/tenant-rules.js';

/** The digest of a plan as admitted: what a repeat must match (its idempotency key aside). */
export function planDigest(plan: AdmittedPlan): string {
  return recordValue(
    {
      id: plan.id,
      goal: plan.goal,
      metadata: plan.metadata,
      steps: plan.steps.map((step) => ({
        id: step.id,
        capability: step.capability.name,
        capabilityVersion: step.capabilityVersion,
        input: step.input,
        bounds: step.bounds,
        reason: step.reason,
        idempotencyKey: step.idempotencyKey,
      })),
    },
    'plan',
  ).digest;
}

/** Where a key is unique: the caller's id and its tenant (its own string `tenant` field). */
function scopeOf(caller: ExecutionCaller & { id: string }): string {
  const tenant = tenantOf(caller) ?? null;
  return JSON.stringify([caller.id, tenant]);
}

/** The outcome of claiming a key: the new job's id, or the first job's (a replay). */
export interface KeyClaim {
  readonly jobId: string;
  readonly replayed: boolean;
}

/**
 * What a repeat must match: the plan's digest, and under a plan warrant the mode too (a plan
 * approved once is another submission than the same plan approved step by step, docs/api.md
 * "Plan warrants"). A plan submitted step by step keeps the digest it always had.
 */
function submissionDigest(plan: AdmittedPlan, approval: 'steps' | 'plan'): string {
  const digest = planDigest(plan);
  return approval === 'plan' ? recordValue({ plan: digest, approval }, 'plan').digest : digest;
}

/**
 * Claims `key` for a new job of `plan` (submitted with `approval`). Resolves the new job's id,
 * or the first job's for a repeat of the same plan in the same mode; rejects
 * IDEMPOTENCY_CONFLICT for a repeat with another plan or another approval mode.
 */
export async function claimKey(
  store: JobStore,
  caller: ExecutionCaller & { id: string },
  key: string,
  plan: AdmittedPlan,
  ttlMs: number,
  approval: 'steps' | 'plan' = 'steps',
): Promise<KeyClaim> {
  const jobId = newJobId();
  const digest = submissionDigest(plan, approval);
  const at = Date.now();
  const holder = hasIdempotency(store)
    ? await store.claimIdempotency({
        scope: scopeOf(caller),
        key,
        jobId,
        digest,
        at,
        expiresAt: at + ttlMs,
      })
    : undefined;
  if (holder === undefined) return { jobId, replayed: false };
  if (holder.digest !== digest) {
    throw createError(
      Error,
      ErrorCode.IDEMPOTENCY_CONFLICT,
      `Idempotency key ${JSON.stringify(key)} was used by job ${JSON.stringify(holder.jobId)} for another plan (or another approval mode)`,
    );
  }
  return { jobId: holder.jobId, replayed: true };
}
