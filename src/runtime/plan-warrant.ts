/**
 * Plan warrants (docs/api.md, "Plan warrants"): a plan submitted with `approval: 'plan'` is
 * previewed at submission, every step asked of the authorizer once (`preview: true`), before any
 * step runs. A step previewed `deny` fails the job with PLAN_DENIED; a plan with no step previewed
 * `require_approval` or `unknown` runs as usual; any other waits for one plan request, bound to
 * its `planDigest`. Once granted, every step is still authorized at its turn: a `require_approval`
 * is covered by the grant only when the grant has not expired, the version is the approved one,
 * and the input is the approved one (a step without references) or every field holding a
 * reference is bounded and its resolved value within the bounds; anything else escalates to a
 * step request, its reason saying why.
 */
import type { ExecutionAuthorizer, ExecutionCaller } from '../authorization/authorizer.js';
import { authorizerName } from '../authorization/authorizer-name.js';
import { ErrorCode } from '../errors/error-codes.js';
import { isoNow } from '../jobs/clock.js';
import type { DecisionApproval, Job, JobStep } from '../jobs/job.js';
import type { JobChange } from '../jobs/job-store.js';
import { planGrantOf, planWarrantDigest, type PlanRequestStep } from '../jobs/plan-grant.js';
import {
  awaitPlanApproval,
  endStep,
  failJob,
  joinChanges,
  type Decided,
  type RunningJob,
} from '../jobs/transitions.js';
import type { AdmittedPlan, AdmittedStep } from '../plan/admission.js';
import { checkBounds, type StepBounds } from '../plan/bounds.js';
import { previewPlanSteps, type PreviewedStep } from '../policy/preview.js';

/** What a plan warrant needs of the executor's dependencies (executor.ts calls into this file). */
export interface WarrantDependencies {
  readonly authorizer: ExecutionAuthorizer;
  /** How long a request waits (ms): present on a runtime with approvals. */
  readonly approvals?: { readonly ttlMs: number };
}

/** How a job submitted with `approval: 'plan'` starts, as its preview decided. */
export type PlanWarrantStart =
  /** Nothing to approve: its steps run as usual. */
  | { readonly kind: 'run' }
  /** The step at `index` was previewed `deny`: the job fails with PLAN_DENIED. */
  | { readonly kind: 'denied'; readonly index: number; readonly previewed: PreviewedStep }
  /** One plan request for these steps. */
  | { readonly kind: 'request'; readonly steps: readonly PlanRequestStep[] };

/** The outcomes that need a person: the plan waits for a plan request. */
const NEEDS_APPROVAL: ReadonlySet<string> = new Set(['require_approval', 'unknown']);

/**
 * Previews the admitted plan for a plan warrant: one authorizer call per step whose input holds
 * no reference, nothing invoked, nothing recorded.
 */
export async function previewWarrant(
  plan: AdmittedPlan,
  caller: ExecutionCaller | undefined,
  deps: WarrantDependencies,
): Promise<PlanWarrantStart> {
  const previewed = await previewPlanSteps(plan, caller, deps.authorizer, true);
  const denied = previewed.findIndex((step) => step.preview.outcome === 'deny');
  if (denied >= 0)
    return { kind: 'denied', index: denied, previewed: previewed[denied] as PreviewedStep };
  if (!previewed.some((step) => NEEDS_APPROVAL.has(step.preview.outcome))) return { kind: 'run' };
  const steps = previewed.map((step, index) => {
    const admitted = plan.steps[index] as AdmittedStep;
    const { preview } = step;
    const requested: Record<string, unknown> = {
      id: admitted.id,
      capability: admitted.capability.name,
      capabilityVersion: admitted.capability.version,
      outcome: preview.outcome,
    };
    if (preview.reason !== undefined) requested.reason = preview.reason;
    if (step.recorded !== undefined) requested.inputDigest = step.recorded.digest;
    return requested as unknown as PlanRequestStep;
  });
  return { kind: 'request', steps };
}

/** The PLAN_DENIED error of a job whose plan was refused at submission. */
export function planDeniedError(
  step: { readonly id: string; readonly capability: string },
  reason: string,
): string {
  return `${ErrorCode.PLAN_DENIED}: step ${JSON.stringify(step.id)} (${step.capability}) is denied: ${reason}`;
}

/**
 * What the preview records on the job just created, before any step runs: the denied step's
 * decision and the job's failure, or the plan request; undefined for a plan that runs as usual.
 */
export function warrantChange(
  running: RunningJob,
  start: PlanWarrantStart,
  plan: AdmittedPlan,
  deps: WarrantDependencies,
): JobChange | undefined {
  if (start.kind === 'run') return undefined;
  const at = isoNow();
  if (start.kind === 'denied') {
    const step = plan.steps[start.index] as AdmittedStep;
    const { preview, input, recorded } = start.previewed;
    const reason = preview.reason as string;
    const decided: Decided = {
      outcome: 'deny',
      reason,
      authorizer: authorizerName(deps.authorizer),
      policies: preview.policies,
      capabilityVersion: step.capability.version,
      at,
      input,
      recorded: recorded as NonNullable<typeof recorded>,
      resolved: false,
    };
    const ended = endStep(running, start.index, at, {
      status: 'denied',
      reason,
      risk: step.capability.risk,
      decided,
    });
    const error = planDeniedError({ id: step.id, capability: step.capability.name }, reason);
    return joinChanges(ended, failJob(running, at, error));
  }
  // The request's steps carry each step's bounds as recorded: what the approver approves.
  const steps = start.steps.map((requested, index) => {
    const bounds = (running.record.steps[index] as JobStep).bounds;
    return bounds === undefined ? requested : { ...requested, bounds: structuredClone(bounds) };
  });
  const planDigest = planWarrantDigest(running.record, steps);
  const ttlMs = (deps.approvals as { readonly ttlMs: number }).ttlMs;
  const expiresAt = new Date(Date.parse(at) + ttlMs).toISOString();
  return awaitPlanApproval(running, at, planDigest, steps, expiresAt);
}

/** How a plan grant meets a step's `require_approval`. */
export type PlanCover =
  | { readonly covered: true; readonly approval: DecisionApproval }
  | { readonly covered: false; readonly reason: string };

function outside(why: string): PlanCover {
  return { covered: false, reason: `outside the approved plan: ${why}` };
}

/** The top-level input fields of a step that hold a result reference, by name; '' for the input. */
function referencedFields(step: AdmittedStep): string[] {
  const fields = new Set<string>();
  for (const reference of step.references) fields.add(String(reference.path[0] ?? ''));
  return [...fields].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * Whether the job's plan grant covers a step the authorizer answered `require_approval` for,
 * asked now (`nowMs`) with `input` (as authorized) and its digest; undefined when the job holds no
 * plan grant. Never widens a decision: it is asked only about a `require_approval`.
 */
export function coverByPlanGrant(
  record: Job,
  step: AdmittedStep,
  input: unknown,
  inputDigest: string,
  nowMs: number,
): PlanCover | undefined {
  const grant = planGrantOf(record);
  if (grant === undefined) return undefined;
  if (!(nowMs < Date.parse(grant.expiresAt)))
    return outside(`the plan grant expired at ${grant.expiresAt}`);
  // Bound to the plan's bytes: the record read now must still be the plan approved.
  if (planWarrantDigest(record, grant.request.steps) !== grant.planDigest)
    return outside('the recorded plan does not match the approved planDigest');
  const approved = grant.request.steps[step.index];
  if (approved?.id !== step.id) return outside(`step ${JSON.stringify(step.id)} is not in it`);
  const { capability } = step;
  if (approved.capability !== capability.name || approved.capabilityVersion !== capability.version)
    return outside(
      `capabilityVersion ${capability.version} is not the approved ${approved.capabilityVersion}`,
    );
  if (step.references.length === 0) {
    if (approved.inputDigest !== inputDigest)
      return outside(
        approved.inputDigest === undefined
          ? 'input was not previewed'
          : `input ${inputDigest} is not the approved ${approved.inputDigest}`,
      );
  } else {
    const bounds = approved.bounds;
    for (const field of referencedFields(step)) {
      if (field === '') return outside('input is a reference and bounds name fields only');
      if (bounds === undefined || !Object.hasOwn(bounds, field))
        return outside(`${field} holds a reference and has no bounds`);
    }
    const checked = checkBounds(bounds as StepBounds, input);
    if (!checked.ok) return outside(checked.why);
  }
  return {
    covered: true,
    approval: Object.freeze({
      kind: 'plan',
      planDigest: grant.planDigest,
      approver: grant.approver,
    }),
  };
}
