/**
 * A plan's preview (docs/api.md, "runtime.previewPlan"): each admitted step's decision, asked of
 * the runtime's authorizer with `preview: true` and `jobId` the empty string, for steps whose
 * input holds no result reference; a step with references is `unknown` and names the steps it
 * waits on. Nothing is invoked and nothing is recorded.
 */
import type {
  CapabilityAuthorizationContext,
  ExecutionAuthorizer,
  ExecutionCaller,
} from '../authorization/authorizer.js';
import { checkDecision } from '../authorization/check-decision.js';
import { decisionPolicies } from '../authorization/decision-policies.js';
import { checkStepInput } from '../capabilities/step-input.js';
import { describeThrown } from '../errors/describe-value.js';
import { recordValue, type RecordedValue } from '../jobs/recorded-value.js';
import type { AdmittedPlan, AdmittedStep } from '../plan/admission.js';

/**
 * How a step would be decided: the authorizer's answer (`invalid` a malformed one, `error` one
 * that threw), `input_rejected` when its input contract refuses the input, `unknown` when its
 * input waits on earlier results.
 */
export type PreviewOutcome =
  'allow' | 'deny' | 'require_approval' | 'invalid' | 'error' | 'input_rejected' | 'unknown';

export interface PreviewStep {
  readonly id: string;
  readonly capability: string;
  readonly outcome: PreviewOutcome;
  readonly reason?: string;
  /** A policy authorizer's determining policies (`cedarAuthorizer`). */
  readonly policies?: readonly string[];
  /** For `unknown`: the ids of the steps whose results the input waits on, in plan order. */
  readonly waitsFor?: readonly string[];
}

export interface PlanPreview {
  readonly steps: readonly PreviewStep[];
}

const NOT_PERMITTED = 'Capability not permitted: ';

/**
 * A step's preview with what it was asked about, for a plan warrant (docs/api.md, "Plan
 * warrants"): the input as checked and recorded, when the authorizer was asked.
 */
export interface PreviewedStep {
  readonly preview: PreviewStep;
  /** The input the authorizer was asked about (its contract's output). */
  readonly input?: unknown;
  readonly recorded?: RecordedValue;
}

async function previewStep(
  step: AdmittedStep,
  caller: ExecutionCaller | undefined,
  authorizer: ExecutionAuthorizer,
  approvals: boolean,
): Promise<PreviewedStep> {
  const previewed = await askedStep(step, caller, authorizer, approvals);
  return 'preview' in previewed ? previewed : { preview: previewed };
}

async function askedStep(
  step: AdmittedStep,
  caller: ExecutionCaller | undefined,
  authorizer: ExecutionAuthorizer,
  approvals: boolean,
): Promise<PreviewStep | PreviewedStep> {
  const { id, capability } = step;
  const base = { id, capability: capability.name };
  if (step.references.length > 0) {
    const indexes = [...new Set(step.references.map((reference) => reference.stepIndex))].sort(
      (a, b) => a - b,
    );
    const ids = new Map(
      step.references.map((reference) => [reference.stepIndex, reference.stepId]),
    );
    return {
      ...base,
      outcome: 'unknown',
      waitsFor: indexes.map((index) => ids.get(index) as string),
    };
  }
  let valid = checkStepInput(capability, step.input);
  if (valid instanceof Promise) valid = await valid;
  if (!valid.ok) return { ...base, outcome: 'input_rejected', reason: valid.error };
  const input = valid.value;
  const recorded = recordValue(input, 'input');
  const asked: CapabilityAuthorizationContext = Object.freeze({
    jobId: '',
    stepId: id,
    capability: capability.identity,
    input,
    caller,
    inputDigest: recorded.digest,
    preview: true,
  });
  let decision: unknown;
  try {
    decision = await authorizer.authorize(asked);
  } catch (error) {
    return { ...base, outcome: 'error', reason: describeThrown(error) };
  }
  return { preview: answered(decision, base, approvals, capability.name), input, recorded };
}

/** The preview of an authorizer's answer. */
function answered(
  decision: unknown,
  base: { readonly id: string; readonly capability: string },
  approvals: boolean,
  name: string,
): PreviewStep {
  const checked = checkDecision(decision, approvals);
  const policies = decisionPolicies(decision);
  const withPolicies = policies === undefined ? base : { ...base, policies };
  switch (checked.kind) {
    case 'allow':
      return { ...withPolicies, outcome: 'allow' };
    case 'deny':
      return {
        ...withPolicies,
        outcome: 'deny',
        reason: checked.reason ?? `${NOT_PERMITTED}${name}`,
      };
    case 'require_approval':
      return checked.reason === undefined
        ? { ...withPolicies, outcome: 'require_approval' }
        : { ...withPolicies, outcome: 'require_approval', reason: checked.reason };
    default:
      return { ...base, outcome: 'invalid', reason: 'Invalid authorization decision' };
  }
}

/** Every step's preview with what it was asked about, in plan order (one at a time). */
export async function previewPlanSteps(
  plan: AdmittedPlan,
  caller: ExecutionCaller | undefined,
  authorizer: ExecutionAuthorizer,
  approvals: boolean,
): Promise<PreviewedStep[]> {
  const steps: PreviewedStep[] = [];
  for (const step of plan.steps) steps.push(await previewStep(step, caller, authorizer, approvals));
  return steps;
}

/** Every step's preview, in plan order (one at a time, as the executor would ask). */
export async function previewAdmittedPlan(
  plan: AdmittedPlan,
  caller: ExecutionCaller | undefined,
  authorizer: ExecutionAuthorizer,
  approvals: boolean,
): Promise<PlanPreview> {
  const steps = await previewPlanSteps(plan, caller, authorizer, approvals);
  return { steps: steps.map((step) => step.preview) };
}
