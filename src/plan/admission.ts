/**
 * Admission (spec §3 step 2, API.md §4): validates the CAPTURED structure. Every issue of every
 * step is collected, in step order; any issue rejects the plan with a PlanAdmissionError before
 * a job, an event, an authorizer call or a capability call exists.
 */
import { checkInput } from '../capabilities/input-schema.js';
import type { RegisteredCapability } from '../capabilities/inventory.js';
import { describeThrown, describeValue } from '../errors/describe-value.js';
import type { CapturedField, CapturedStep, CapturedSubmission } from './capture.js';
import { PlanAdmissionError, type PlanAdmissionIssue } from './plan-admission-error.js';
import {
  collectReferences,
  parseReference,
  referenceText,
  type LocatedReference,
} from './references.js';

export interface AdmittedStep {
  readonly index: number;
  readonly id: string;
  readonly capability: RegisteredCapability;
  readonly capabilityVersion: string | undefined;
  /** The caller's input root, by identity. */
  readonly input: unknown;
  readonly reason: string | undefined;
  readonly idempotencyKey: string | undefined;
  readonly references: readonly LocatedReference[];
}

export interface AdmittedPlan {
  readonly id: string | undefined;
  readonly goal: string;
  readonly metadata: unknown;
  readonly idempotencyKey: string | undefined;
  readonly steps: readonly AdmittedStep[];
}

export const DEFAULT_GOAL = 'External execution plan';

type Lookup = (name: string) => RegisteredCapability | undefined;
type Issue = PlanAdmissionIssue;

function unreadable(field: string, read: CapturedField, stepLabel?: string): string {
  const error = read.ok ? undefined : read.error;
  return `${stepLabel === undefined ? 'plan' : stepLabel}: ${field} could not be read (${describeThrown(error)})`;
}

function optionalString(
  read: CapturedField,
  field: string,
  issues: Issue[],
  step?: { label: string; index: number; id?: string },
): string | undefined {
  if (!read.ok) {
    issues.push({
      code: 'INVALID_PLAN',
      message: unreadable(field, read, step?.label),
      field,
      ...(step && { stepIndex: step.index }),
    });
    return undefined;
  }
  if (read.value === undefined || typeof read.value === 'string') return read.value;
  issues.push({
    code: 'INVALID_PLAN',
    message: `${step?.label ?? 'plan'}: ${field} must be a string when present, got ${describeValue(read.value)}`,
    field,
    ...(step && { stepIndex: step.index, ...(step.id !== undefined && { stepId: step.id }) }),
  });
  return undefined;
}

function admitStep(
  step: CapturedStep,
  idIndex: Map<string, number>,
  lookup: Lookup,
  issues: Issue[],
): AdmittedStep | undefined {
  const { index } = step;
  if (!step.isObject) {
    const message = step.readFailure
      ? `steps[${index}] could not be read (${describeThrown(step.readFailure.error)})`
      : `steps[${index}] must be an object`;
    issues.push({ code: 'INVALID_PLAN', message, stepIndex: index });
    return undefined;
  }
  const before = issues.length;
  const base = { stepIndex: index };
  // Step id: a non-empty string, unique within the plan by exact equality.
  let id: string | undefined;
  if (!step.id.ok) {
    issues.push({
      code: 'INVALID_PLAN',
      message: unreadable('id', step.id, `steps[${index}]`),
      field: 'id',
      ...base,
    });
  } else if (typeof step.id.value !== 'string' || step.id.value === '') {
    issues.push({
      code: 'INVALID_PLAN',
      message: `steps[${index}]: id must be a non-empty string, got ${describeValue(step.id.value)}`,
      field: 'id',
      ...base,
    });
  } else {
    id = step.id.value;
  }
  const label = id === undefined ? `steps[${index}]` : `steps[${index}] ${JSON.stringify(id)}`;
  const at = id === undefined ? base : { ...base, stepId: id };
  if (id !== undefined) {
    const first = idIndex.get(id);
    if (first !== undefined && first !== index) {
      issues.push({
        code: 'DUPLICATE_STEP_ID',
        message: `${label}: id is already used by steps[${first}]; step ids must be unique within a plan`,
        field: 'id',
        ...at,
      });
    }
  }
  // Capability binding and the optional exact version.
  let registered: RegisteredCapability | undefined;
  if (!step.capability.ok) {
    issues.push({
      code: 'INVALID_PLAN',
      message: unreadable('capability', step.capability, label),
      field: 'capability',
      ...at,
    });
  } else if (typeof step.capability.value !== 'string') {
    issues.push({
      code: 'INVALID_PLAN',
      message: `${label}: capability must be a string, got ${describeValue(step.capability.value)}`,
      field: 'capability',
      ...at,
    });
  } else {
    registered = lookup(step.capability.value);
    if (registered === undefined) {
      issues.push({
        code: 'UNKNOWN_CAPABILITY',
        message: `${label}: capability ${describeValue(step.capability.value)} is not registered`,
        field: 'capability',
        ...at,
      });
    }
  }
  let capabilityVersion: string | undefined;
  if (!step.capabilityVersion.ok) {
    issues.push({
      code: 'INVALID_PLAN',
      message: unreadable('capabilityVersion', step.capabilityVersion, label),
      field: 'capabilityVersion',
      ...at,
    });
  } else if (step.capabilityVersion.value !== undefined) {
    // API.md §3: any supplied string, including '', must equal the registered version.
    if (typeof step.capabilityVersion.value !== 'string') {
      issues.push({
        code: 'INVALID_PLAN',
        message: `${label}: capabilityVersion must be a string when present, got ${describeValue(step.capabilityVersion.value)}`,
        field: 'capabilityVersion',
        ...at,
      });
    } else {
      capabilityVersion = step.capabilityVersion.value;
      if (registered !== undefined && capabilityVersion !== registered.version) {
        issues.push({
          code: 'CAPABILITY_VERSION_MISMATCH',
          message: `${label}: capabilityVersion ${JSON.stringify(capabilityVersion)} does not match registered version ${JSON.stringify(registered.version)} of ${JSON.stringify(registered.name)}`,
          field: 'capabilityVersion',
          ...at,
        });
      }
    }
  }
  const stepInfo = { label, index, ...(id !== undefined && { id }) };
  const reason = optionalString(step.reason, 'reason', issues, stepInfo);
  const idempotencyKey = optionalString(step.idempotencyKey, 'idempotencyKey', issues, stepInfo);
  // Input: references first (they are exempt from the field check until resolved), then fields.
  let input: unknown;
  const references: LocatedReference[] = [];
  if (!step.input.ok) {
    issues.push({
      code: 'INVALID_PLAN',
      message: unreadable('input', step.input, label),
      field: 'input',
      ...at,
    });
  } else {
    input = step.input.value;
    try {
      collectReferences(input, (text, path) => {
        const field = ['input', ...path].join('.');
        const parsed = parseReference(text, index, idIndex);
        if ('code' in parsed)
          issues.push({
            code: parsed.code,
            message: `${label}: ${field}: ${parsed.message}`,
            field,
            ...at,
          });
        else references.push({ ...parsed, path });
      });
      const rootIsReference = references.length === 1 && references[0]?.path.length === 0;
      if (registered !== undefined && !rootIsReference && referenceText(input) === undefined) {
        for (const problem of checkInput(
          input,
          registered.schema,
          (value) => referenceText(value) !== undefined,
        )) {
          issues.push({
            code: problem.code,
            message: `${label}: ${problem.message}`,
            field: problem.field,
            ...at,
          });
        }
      }
    } catch (error) {
      issues.push({
        code: 'INVALID_PLAN',
        message: `${label}: input could not be read (${describeThrown(error)})`,
        field: 'input',
        ...at,
      });
    }
  }
  if (issues.length !== before || id === undefined || registered === undefined) return undefined;
  return {
    index,
    id,
    capability: registered,
    capabilityVersion,
    input,
    reason,
    idempotencyKey,
    references,
  };
}

/** Validates a captured submission; returns the admitted plan or throws PlanAdmissionError. */
export function admitPlan(submission: CapturedSubmission, lookup: Lookup): AdmittedPlan {
  const issues: Issue[] = [];
  if (!submission.isObject) {
    throw new PlanAdmissionError([{ code: 'INVALID_PLAN', message: 'plan must be an object' }]);
  }
  if (!submission.version.ok) {
    issues.push({
      code: 'INVALID_PLAN',
      message: unreadable('version', submission.version),
      field: 'version',
    });
  } else if (submission.version.value !== '1.0') {
    issues.push({
      code: 'UNSUPPORTED_PLAN_VERSION',
      message: `plan: version must be "1.0", got ${describeValue(submission.version.value)}`,
      field: 'version',
    });
  }
  const planId = optionalString(submission.id, 'id', issues);
  const goalText = optionalString(submission.goal, 'goal', issues);
  const idempotencyKey = optionalString(submission.idempotencyKey, 'idempotencyKey', issues);
  if (!submission.metadata.ok) {
    issues.push({
      code: 'INVALID_PLAN',
      message: unreadable('metadata', submission.metadata),
      field: 'metadata',
    });
  }
  const { stepsField } = submission;
  if (!stepsField.ok) {
    issues.push({ code: 'INVALID_PLAN', message: unreadable('steps', stepsField), field: 'steps' });
  } else if (!Array.isArray(stepsField.value)) {
    issues.push({
      code: 'INVALID_PLAN',
      message: `plan: steps must be an array, got ${describeValue(stepsField.value)}`,
      field: 'steps',
    });
  } else if (submission.stepsProblem !== undefined) {
    issues.push({ code: 'INVALID_PLAN', message: submission.stepsProblem, field: 'steps' });
  } else if (submission.steps.length === 0) {
    issues.push({
      code: 'EMPTY_PLAN',
      message: 'plan: steps must contain at least one step',
      field: 'steps',
    });
  }
  // First occurrence of each usable id: references and duplicates are judged against it.
  const idIndex = new Map<string, number>();
  for (const step of submission.steps) {
    if (
      step.id.ok &&
      typeof step.id.value === 'string' &&
      step.id.value !== '' &&
      !idIndex.has(step.id.value)
    ) {
      idIndex.set(step.id.value, step.index);
    }
  }
  const steps: AdmittedStep[] = [];
  for (const step of submission.steps) {
    const admitted = admitStep(step, idIndex, lookup, issues);
    if (admitted !== undefined) steps.push(admitted);
  }
  if (issues.length > 0) throw new PlanAdmissionError(issues);
  const goal = goalText?.trim();
  return {
    id: planId,
    goal: goal === undefined || goal === '' ? DEFAULT_GOAL : goal,
    metadata: submission.metadata.ok ? submission.metadata.value : undefined,
    idempotencyKey,
    steps,
  };
}
