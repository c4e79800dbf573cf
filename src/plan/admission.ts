/**
 * Admission (docs/api.md, "runtime.executePlan"): validates the CAPTURED structure. Every issue of every
 * step is collected, in step order; any issue rejects the plan with a PlanAdmissionError before
 * a job, an event, an authorizer call or a capability call exists.
 */
import { ErrorCode } from '../errors/error-codes.js';
import { checkInput } from '../capabilities/input-schema.js';
import { capabilityInventory, type RegisteredCapability } from '../capabilities/inventory.js';
import { runValidate, type StandardInput } from '../capabilities/standard-input.js';
import {
  MAX_QUOTED_CHARS,
  boundText,
  describeThrown,
  describeValue,
  quoteText,
} from '../errors/describe-value.js';
import {
  NOT_WALKED,
  type CapturedField,
  type CapturedStep,
  type CapturedSubmission,
} from './capture.js';
import type { PlanVersion } from './execution-plan.js';
import { versionsText } from './plan-versions.js';
import { governedField, type GovernedProblem } from './governed-value.js';
import {
  MAX_ISSUE_CHARS,
  PlanAdmissionError,
  type PlanAdmissionIssue,
} from './plan-admission-error.js';
import {
  collectReferences,
  parseReference,
  referenceText,
  type LocatedReference,
  type StepIndex,
} from './references.js';
import { nameSuggester, type Suggester } from './suggest-name.js';

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
  /** `'2.0'`: every input is the runtime's frozen plain-data copy (docs/api.md, "Plan version 2.0"). */
  readonly version: PlanVersion;
  readonly id: string | undefined;
  readonly goal: string;
  readonly metadata: unknown;
  readonly idempotencyKey: string | undefined;
  readonly steps: readonly AdmittedStep[];
}

export const DEFAULT_GOAL = 'External execution plan';

type Lookup = (name: string) => RegisteredCapability | undefined;
type Issue = PlanAdmissionIssue;

/** Why a value could not be read: the thrown message, cut like any quoted text. */
function thrownText(error: unknown): string {
  return boundText(describeThrown(error), MAX_QUOTED_CHARS);
}

/**
 * How messages name a step: `steps[2] "fetch"`. Made only for a message: the id is quoted cut to
 * 80 characters, so 600 steps sharing a 1 MiB id cost 600 short texts.
 */
function stepLabel(index: number, id: string | undefined): string {
  return id === undefined ? `steps[${index}]` : `steps[${index}] ${quoteText(id)}`;
}

function unreadable(field: string, read: CapturedField, label: string): string {
  const error = read.ok ? undefined : read.error;
  return `${label}: ${field} could not be read (${thrownText(error)})`;
}

/** Records one issue; objects are built only when something is wrong (admission hot path). */
function report(
  issues: Issue[],
  code: Issue['code'],
  message: string,
  field: string | undefined,
  stepIndex?: number,
  stepId?: string,
): void {
  // Texts are bounded (MAX_ISSUE_CHARS); stepId is the id itself, so it names the step exactly.
  const issue: { -readonly [K in keyof Issue]: Issue[K] } = {
    code,
    message: boundText(message, MAX_ISSUE_CHARS),
  };
  if (stepIndex !== undefined) issue.stepIndex = stepIndex;
  if (stepId !== undefined) issue.stepId = stepId;
  if (field !== undefined) issue.field = boundText(field, MAX_ISSUE_CHARS);
  issues.push(issue);
}

/** A field that is absent or a string: what an optional string field accepts as it is. */
function isOptionalString(
  read: CapturedField,
): read is { readonly ok: true; readonly value: string | undefined } {
  return read.ok && (read.value === undefined || typeof read.value === 'string');
}

function optionalString(
  read: CapturedField,
  field: string,
  issues: Issue[],
  label: string,
  stepIndex?: number,
  stepId?: string,
): string | undefined {
  if (!read.ok) {
    report(
      issues,
      ErrorCode.INVALID_PLAN,
      unreadable(field, read, label),
      field,
      stepIndex,
      stepId,
    );
    return undefined;
  }
  if (isOptionalString(read)) return read.value;
  report(
    issues,
    ErrorCode.INVALID_PLAN,
    `${label}: ${field} must be a string when present, got ${describeValue(read.value)}`,
    field,
    stepIndex,
    stepId,
  );
  return undefined;
}

/** An optional string field of a step: its label is made only when there is something to report. */
function optionalStepString(
  read: CapturedField,
  field: string,
  issues: Issue[],
  index: number,
  id: string | undefined,
): string | undefined {
  if (isOptionalString(read)) return read.value;
  return optionalString(read, field, issues, stepLabel(index, id), index, id);
}

const ignore = (): void => {};

/**
 * Validates a literal input with a Standard Schema, reporting each issue. Admission stays
 * synchronous: a schema that answers with a promise is checked at step time instead (its
 * promise is dropped, marked handled; docs/decisions.md, "Standard Schema inputs").
 */
function checkStandardInput(
  standard: StandardInput,
  input: unknown,
  issue: (path: string, message: string) => void,
): void {
  const outcome = runValidate(standard, input);
  if ('pending' in outcome) {
    outcome.pending.then(ignore, ignore);
    return;
  }
  if (!outcome.ok) for (const { path, message } of outcome.issues) issue(path, message);
}

function isReference(value: unknown): boolean {
  return referenceText(value) !== undefined;
}

/** A usable step id: a non-empty string. */
function usableId(step: CapturedStep): string | undefined {
  const { id } = step;
  return id.ok && typeof id.value === 'string' && id.value !== '' ? id.value : undefined;
}

/** Plans of at most this many steps find ids by a scan: a Map cost more than the scan. */
const SCANNED_STEPS = 8;

/** The steps of a short plan, searched in order (the first occurrence wins, as in the Map). */
class ScannedStepIds implements StepIndex {
  readonly steps: readonly CapturedStep[];
  constructor(steps: readonly CapturedStep[]) {
    this.steps = steps;
  }
  get(id: string): number | undefined {
    for (const step of this.steps) if (usableId(step) === id) return step.index;
    return undefined;
  }
}

function indexStepIds(steps: readonly CapturedStep[]): StepIndex {
  if (steps.length <= SCANNED_STEPS) return new ScannedStepIds(steps);
  const index = new Map<string, number>();
  for (const step of steps) {
    const id = usableId(step);
    if (id !== undefined && !index.has(id)) index.set(id, step.index);
  }
  return index;
}

/** A step that is not an object: one issue, nothing else of it is judged. */
function reportNonObjectStep(step: CapturedStep, issues: Issue[]): void {
  const { index } = step;
  const message = step.readFailure
    ? `steps[${index}] could not be read (${thrownText(step.readFailure.error)})`
    : `steps[${index}] must be an object`;
  report(issues, ErrorCode.INVALID_PLAN, message, undefined, index);
}

/** Step id: a non-empty string, unique within the plan by exact equality. */
function checkStepId(step: CapturedStep, idIndex: StepIndex, issues: Issue[]): string | undefined {
  const { index } = step;
  let id: string | undefined;
  if (!step.id.ok) {
    report(
      issues,
      ErrorCode.INVALID_PLAN,
      unreadable('id', step.id, `steps[${index}]`),
      'id',
      index,
    );
  } else if (typeof step.id.value !== 'string' || step.id.value === '') {
    report(
      issues,
      ErrorCode.INVALID_PLAN,
      `steps[${index}]: id must be a non-empty string, got ${describeValue(step.id.value)}`,
      'id',
      index,
    );
  } else {
    id = step.id.value;
  }
  if (id !== undefined) {
    const first = idIndex.get(id);
    if (first !== undefined && first !== index) {
      report(
        issues,
        ErrorCode.DUPLICATE_STEP_ID,
        `${stepLabel(index, id)}: id is already used by steps[${first}]; step ids must be unique within a plan`,
        'id',
        index,
        id,
      );
    }
  }
  return id;
}

/** Capability binding: the registered capability the step names, if any. */
function bindCapability(
  step: CapturedStep,
  id: string | undefined,
  lookup: Lookup,
  issues: Issue[],
  suggest: Suggester,
): RegisteredCapability | undefined {
  const { index } = step;
  const capability = step.capability;
  if (!capability.ok) {
    report(
      issues,
      ErrorCode.INVALID_PLAN,
      unreadable('capability', capability, stepLabel(index, id)),
      'capability',
      index,
      id,
    );
    return undefined;
  }
  if (typeof capability.value !== 'string') {
    report(
      issues,
      ErrorCode.INVALID_PLAN,
      `${stepLabel(index, id)}: capability must be a string, got ${describeValue(capability.value)}`,
      'capability',
      index,
      id,
    );
    return undefined;
  }
  const registered = lookup(capability.value);
  if (registered === undefined) {
    const close = suggest(capability.value);
    report(
      issues,
      ErrorCode.UNKNOWN_CAPABILITY,
      `${stepLabel(index, id)}: capability ${describeValue(capability.value)} is not registered${
        close === undefined ? '' : `; did you mean ${quoteText(close)}?`
      }`,
      'capability',
      index,
      id,
    );
  }
  return registered;
}

/** Version pinning: the optional exact `capabilityVersion`, checked against the registered one. */
function checkVersionPin(
  step: CapturedStep,
  id: string | undefined,
  registered: RegisteredCapability | undefined,
  issues: Issue[],
): string | undefined {
  const { index } = step;
  const version = step.capabilityVersion;
  if (!version.ok) {
    report(
      issues,
      ErrorCode.INVALID_PLAN,
      unreadable('capabilityVersion', version, stepLabel(index, id)),
      'capabilityVersion',
      index,
      id,
    );
    return undefined;
  }
  if (version.value === undefined) return undefined;
  // docs/api.md, "Plans and result references": any supplied string, including '', must equal the registered version.
  if (typeof version.value !== 'string') {
    report(
      issues,
      ErrorCode.INVALID_PLAN,
      `${stepLabel(index, id)}: capabilityVersion must be a string when present, got ${describeValue(version.value)}`,
      'capabilityVersion',
      index,
      id,
    );
    return undefined;
  }
  const capabilityVersion = version.value;
  if (registered !== undefined && capabilityVersion !== registered.version) {
    report(
      issues,
      ErrorCode.CAPABILITY_VERSION_MISMATCH,
      `${stepLabel(index, id)}: capabilityVersion ${quoteText(capabilityVersion)} does not match registered version ${quoteText(registered.version)} of ${quoteText(registered.name)}`,
      'capabilityVersion',
      index,
      id,
    );
  }
  return capabilityVersion;
}

/**
 * References: every `$ref` in the input parsed against the earlier steps; the located ones are
 * returned (undefined when there are none), the malformed ones reported.
 */
function collectStepReferences(
  input: unknown,
  index: number,
  id: string | undefined,
  idIndex: StepIndex,
  issues: Issue[],
): LocatedReference[] | undefined {
  let references: LocatedReference[] | undefined;
  collectReferences(
    input,
    (text, path) => {
      const parsed = parseReference(text, index, idIndex);
      if ('code' in parsed) {
        const field = path.length === 0 ? 'input' : `input.${path.join('.')}`;
        report(
          issues,
          parsed.code,
          `${stepLabel(index, id)}: ${field}: ${parsed.message}`,
          field,
          index,
          id,
        );
      } else {
        const { stepIndex, stepId, segments } = parsed;
        (references ??= []).push({ stepIndex, stepId, segments, text, path });
      }
    },
    // A reference where it would never be resolved (docs/decisions.md "Result references").
    (path, why) => {
      const field = `input.${path.join('.')}`;
      report(
        issues,
        ErrorCode.INVALID_RESULT_REFERENCE,
        `${stepLabel(index, id)}: ${field}: ${why}`,
        field,
        index,
        id,
      );
    },
  );
  return references;
}

/** Input fields: a literal input against the capability's Standard Schema or field record. */
function checkInputFields(
  input: unknown,
  hasReferences: boolean,
  registered: RegisteredCapability,
  index: number,
  id: string | undefined,
  issues: Issue[],
): void {
  // A Standard Schema checks a literal input here; one holding a reference, at step time.
  if (registered.standard !== undefined && !hasReferences && !isReference(input)) {
    checkStandardInput(registered.standard, input, (path, message) => {
      report(
        issues,
        ErrorCode.INPUT_INVALID,
        `${stepLabel(index, id)}: ${path}: ${message}`,
        path,
        index,
        id,
      );
    });
  }
  // A reference as the whole input is checked once resolved, at step time.
  if (registered.schema.length > 0 && !isReference(input)) {
    for (const problem of checkInput(input, registered.schema, isReference)) {
      report(
        issues,
        problem.code,
        `${stepLabel(index, id)}: ${problem.message}`,
        problem.field,
        index,
        id,
      );
    }
  }
}

/**
 * Input: references first (they are exempt from the field check until resolved), then fields.
 * Returns the located references; a value that cannot be read while walking is INVALID_PLAN.
 */
function admitInput(
  step: CapturedStep,
  id: string | undefined,
  registered: RegisteredCapability | undefined,
  idIndex: StepIndex,
  issues: Issue[],
): LocatedReference[] | undefined {
  const { index } = step;
  if (step.inputProblem !== undefined) {
    reportGovernedProblem(step.inputProblem, index, id, issues);
    return undefined;
  }
  if (!step.input.ok) {
    report(
      issues,
      ErrorCode.INVALID_PLAN,
      unreadable('input', step.input, stepLabel(index, id)),
      'input',
      index,
      id,
    );
    return undefined;
  }
  const input = step.input.value;
  let references: LocatedReference[] | undefined;
  try {
    references = collectStepReferences(input, index, id, idIndex, issues);
    if (registered !== undefined) {
      checkInputFields(input, references !== undefined, registered, index, id, issues);
    }
  } catch (error) {
    report(
      issues,
      ErrorCode.INVALID_PLAN,
      `${stepLabel(index, id)}: input could not be read (${thrownText(error)})`,
      'input',
      index,
      id,
    );
  }
  return references;
}

/** A 2.0 input outside the value domain: one issue naming where, with the breach's own code. */
function reportGovernedProblem(
  problem: GovernedProblem,
  index: number,
  id: string | undefined,
  issues: Issue[],
): void {
  // Only the step that spent the plan's budget reports it.
  if (problem === NOT_WALKED) return;
  const field = governedField(problem.path);
  const message =
    problem.code === ErrorCode.VALUE_NOT_PLAIN_DATA
      ? `${stepLabel(index, id)}: ${field} is ${problem.what}; a 2.0 plan's input must be plain JSON data`
      : `${stepLabel(index, id)}: ${field}: ${problem.what} (bounds of a 2.0 plan's inputs)`;
  report(issues, problem.code, message, field, index, id);
}

/** Admits one step: each check in turn, every issue reported, the step admitted only if none. */
function admitStep(
  step: CapturedStep,
  idIndex: StepIndex,
  lookup: Lookup,
  issues: Issue[],
  suggest: Suggester,
): AdmittedStep | undefined {
  if (!step.isObject) {
    reportNonObjectStep(step, issues);
    return undefined;
  }
  const { index } = step;
  const before = issues.length;
  const id = checkStepId(step, idIndex, issues);
  const registered = bindCapability(step, id, lookup, issues, suggest);
  const capabilityVersion = checkVersionPin(step, id, registered, issues);
  const reason = optionalStepString(step.reason, 'reason', issues, index, id);
  const idempotencyKey = optionalStepString(
    step.idempotencyKey,
    'idempotencyKey',
    issues,
    index,
    id,
  );
  const references = admitInput(step, id, registered, idIndex, issues);
  if (issues.length !== before || id === undefined || registered === undefined) return undefined;
  return {
    index,
    id,
    capability: registered,
    capabilityVersion,
    input: step.input.ok ? step.input.value : undefined,
    reason,
    idempotencyKey,
    references: references ?? NO_REFERENCES,
  };
}

const NO_REFERENCES: readonly LocatedReference[] = Object.freeze([]);

/** The registered names, for "did you mean" (read only when a capability is unknown). */
function registeredNames(): string[] {
  return capabilityInventory()
    .list()
    .map((record) => record.name);
}

/**
 * Validates a captured submission; returns the admitted plan or throws PlanAdmissionError.
 * `names` lists the registered names an unknown capability may be close to.
 */
export function admitPlan(
  submission: CapturedSubmission,
  lookup: Lookup,
  names: () => readonly string[] = registeredNames,
): AdmittedPlan {
  const issues: Issue[] = [];
  if (!submission.isObject) {
    const failure = submission.readFailure;
    const message = failure
      ? `plan could not be read (${thrownText(failure.error)})`
      : 'plan must be an object';
    throw new PlanAdmissionError([{ code: ErrorCode.INVALID_PLAN, message }]);
  }
  if (!submission.version.ok) {
    report(
      issues,
      ErrorCode.INVALID_PLAN,
      unreadable('version', submission.version, 'plan'),
      'version',
    );
  } else if (!submission.acceptedVersions.includes(submission.version.value as PlanVersion)) {
    const got = describeValue(submission.version.value);
    report(
      issues,
      ErrorCode.UNSUPPORTED_PLAN_VERSION,
      `plan: version must be ${versionsText(submission.acceptedVersions)}, got ${got}`,
      'version',
    );
  }
  const planId = optionalString(submission.id, 'id', issues, 'plan');
  const goalText = optionalString(submission.goal, 'goal', issues, 'plan');
  const idempotencyKey = optionalString(
    submission.idempotencyKey,
    'idempotencyKey',
    issues,
    'plan',
  );
  if (!submission.metadata.ok) {
    report(
      issues,
      ErrorCode.INVALID_PLAN,
      unreadable('metadata', submission.metadata, 'plan'),
      'metadata',
    );
  }
  const { stepsField } = submission;
  if (!stepsField.ok) {
    report(issues, ErrorCode.INVALID_PLAN, unreadable('steps', stepsField, 'plan'), 'steps');
  } else if (submission.stepsProblem !== undefined) {
    report(issues, ErrorCode.INVALID_PLAN, submission.stepsProblem, 'steps');
  } else if (!submission.stepsIsArray) {
    const got = describeValue(stepsField.value);
    report(issues, ErrorCode.INVALID_PLAN, `plan: steps must be an array, got ${got}`, 'steps');
  } else if (submission.steps.length === 0) {
    report(issues, ErrorCode.EMPTY_PLAN, 'plan: steps must contain at least one step', 'steps');
  }
  // First occurrence of each usable id: references and duplicates are judged against it.
  const idIndex = indexStepIds(submission.steps);
  const steps: AdmittedStep[] = [];
  const suggest = nameSuggester(names);
  for (const step of submission.steps) {
    const admitted = admitStep(step, idIndex, lookup, issues, suggest);
    if (admitted !== undefined) steps.push(admitted);
  }
  if (issues.length > 0) throw new PlanAdmissionError(issues);
  const goal = goalText?.trim();
  return {
    version: submission.version.ok ? (submission.version.value as PlanVersion) : '1.0',
    id: planId,
    goal: goal === undefined || goal === '' ? DEFAULT_GOAL : goal,
    metadata: submission.metadata.ok ? submission.metadata.value : undefined,
    idempotencyKey,
    steps,
  };
}
