/**
 * Admission (docs/api.md, "runtime.executePlan"): validates the CAPTURED structure. Every issue of every
 * step is collected, in step order; any issue rejects the plan with a PlanAdmissionError before
 * a job, an event, an authorizer call or a capability call exists.
 */
import { ErrorCode } from '../errors/error-codes.js';
import { checkInput, type CompiledSchema } from '../capabilities/input-schema.js';
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
  MAX_UNKNOWN_KEYS_KEPT,
  NOT_WALKED,
  STEP_KEYS,
  type CapturedField,
  type CapturedStep,
  type CapturedSubmission,
} from './capture.js';
import { compileBounds, type StepBounds } from './bounds.js';
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
import { nameSuggester, suggestName, type Suggester } from './suggest-name.js';

export interface AdmittedStep {
  readonly index: number;
  readonly id: string;
  readonly capability: RegisteredCapability;
  readonly capabilityVersion: string | undefined;
  /** The caller's input root, by identity. */
  readonly input: unknown;
  /** A 2.0 step's bounds: the runtime's deep-frozen copy, compiled (docs/api.md, "Bounds"). */
  readonly bounds: StepBounds | undefined;
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

/**
 * Where an issue sits below its step (or below the plan, for a plan field): the keys down to it,
 * when the field text cannot say it exactly (an input key holding a dot); and the suggestion.
 */
interface Where {
  readonly segments?: readonly (string | number)[];
  readonly hint?: string;
}

/** Keys as a JSON pointer (RFC 6901): `~` is `~0`, `/` is `~1`. */
function pointer(segments: readonly (string | number)[]): string {
  let text = '';
  for (const segment of segments) {
    text += `/${String(segment).replaceAll('~', '~0').replaceAll('/', '~1')}`;
    // Cut below anyway: a huge key need not be copied whole.
    if (text.length > MAX_ISSUE_CHARS) break;
  }
  return text;
}

/** The keys a field text names: `input.a` is the input's key `a`. */
function segmentsOf(field: string | undefined): readonly string[] {
  if (field === undefined) return [];
  if (field.startsWith('input.')) return ['input', ...field.slice('input.'.length).split('.')];
  return [field];
}

/** `did you mean "<name>"?`, the one wording of a suggestion. */
function didYouMean(name: string): string {
  return `did you mean ${quoteText(name)}?`;
}

/** Records one issue; objects are built only when something is wrong (admission hot path). */
function report(
  issues: Issue[],
  code: Issue['code'],
  message: string,
  field: string | undefined,
  stepIndex?: number,
  stepId?: string,
  where?: Where,
): void {
  // Texts are bounded (MAX_ISSUE_CHARS); stepId is the id itself, so it names the step exactly.
  const at = pointer(where?.segments ?? segmentsOf(field));
  const issue: { -readonly [K in keyof Issue]: Issue[K] } = {
    code,
    message: boundText(message, MAX_ISSUE_CHARS),
    path: boundText(stepIndex === undefined ? at : `/steps/${stepIndex}${at}`, MAX_ISSUE_CHARS),
  };
  if (stepIndex !== undefined) issue.stepIndex = stepIndex;
  if (stepId !== undefined) issue.stepId = stepId;
  if (field !== undefined) issue.field = boundText(field, MAX_ISSUE_CHARS);
  if (where?.hint !== undefined) issue.hint = boundText(where.hint, MAX_ISSUE_CHARS);
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
  issue: (path: string, message: string, segments: readonly string[] | undefined) => void,
): void {
  const outcome = runValidate(standard, input);
  if ('pending' in outcome) {
    outcome.pending.then(ignore, ignore);
    return;
  }
  if (!outcome.ok)
    for (const { path, message, segments } of outcome.issues) issue(path, message, segments);
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
    const hint = close === undefined ? undefined : didYouMean(close);
    report(
      issues,
      ErrorCode.UNKNOWN_CAPABILITY,
      `${stepLabel(index, id)}: capability ${describeValue(capability.value)} is not registered${
        hint === undefined ? '' : `; ${hint}`
      }`,
      'capability',
      index,
      id,
      hint === undefined ? undefined : { hint },
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
          { segments: ['input', ...path] },
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
        { segments: ['input', ...path] },
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
  strict: boolean,
): void {
  // A Standard Schema checks a literal input here; one holding a reference, at step time.
  if (registered.standard !== undefined && !hasReferences && !isReference(input)) {
    checkStandardInput(registered.standard, input, (path, message, segments) => {
      report(
        issues,
        ErrorCode.INPUT_INVALID,
        `${stepLabel(index, id)}: ${path}: ${message}`,
        path,
        index,
        id,
        segments === undefined ? undefined : { segments: ['input', ...segments] },
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
        // The field is `input` or `input.<key>`, the key as it is (dots included).
        { segments: problem.field === 'input' ? ['input'] : ['input', problem.field.slice(6)] },
      );
    }
    if (strict && registered.standard === undefined)
      checkDeclaredFields(input, registered.schema, index, id, issues);
  }
}

/** The declared fields, for a hint when no declared name is close. */
function declaredText(schema: CompiledSchema): string {
  return `declared fields: ${schema.map((field) => quoteText(field.key)).join(', ')}`;
}

/**
 * A 2.0 input under a field record has the declared fields only (docs/api.md, "Plan version
 * 2.0"): each other key is UNDECLARED_INPUT_FIELD, at most MAX_UNKNOWN_KEYS_KEPT per step. The
 * input is the runtime's frozen plain copy, so reading its keys runs no code of the caller.
 */
function checkDeclaredFields(
  input: unknown,
  schema: CompiledSchema,
  index: number,
  id: string | undefined,
  issues: Issue[],
): void {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return;
  let reported = 0;
  for (const key of Object.keys(input)) {
    if (schema.some((field) => field.key === key)) continue;
    const close = suggestName(
      key,
      schema.map((field) => field.key),
    );
    const hint = close === undefined ? declaredText(schema) : didYouMean(close);
    report(
      issues,
      ErrorCode.UNDECLARED_INPUT_FIELD,
      `${stepLabel(index, id)}: input.${boundText(key, MAX_QUOTED_CHARS)} is not a field of this capability; ${hint}`,
      `input.${key}`,
      index,
      id,
      { segments: ['input', key], hint },
    );
    reported += 1;
    if (reported >= MAX_UNKNOWN_KEYS_KEPT) return;
  }
}

/** What a key meant as a step field, when no spelling is close (`version` → `capabilityVersion`). */
const STEP_KEY_MEANINGS: ReadonlyMap<string, string> = new Map([
  ['version', 'capabilityVersion'],
  ['args', 'input'],
  ['arguments', 'input'],
  ['params', 'input'],
  ['parameters', 'input'],
  ['tool', 'capability'],
  ['name', 'capability'],
]);

const STEP_KEY_LIST: readonly string[] = [...STEP_KEYS];

/** The key a step key was meant to be, if one is close or known to mean it. */
function stepKeySuggestion(key: string): string | undefined {
  return STEP_KEY_MEANINGS.get(key) ?? suggestName(key, STEP_KEY_LIST);
}

/** A 2.0 step has the step fields only: each other key is UNKNOWN_STEP_FIELD. */
function checkStepKeys(step: CapturedStep, id: string | undefined, issues: Issue[]): void {
  const { unknownKeys, index } = step;
  if (unknownKeys === undefined) return;
  if ('ok' in unknownKeys) {
    report(
      issues,
      ErrorCode.INVALID_PLAN,
      `${stepLabel(index, id)}: its keys could not be read (${thrownText(unknownKeys.error)})`,
      undefined,
      index,
      id,
    );
    return;
  }
  for (const key of unknownKeys) {
    const close = stepKeySuggestion(key);
    const hint = close === undefined ? undefined : didYouMean(close);
    report(
      issues,
      ErrorCode.UNKNOWN_STEP_FIELD,
      `${stepLabel(index, id)}: ${quoteText(key)} is not a step field${
        hint === undefined ? ` (a 2.0 step has ${STEP_KEY_LIST.join(', ')})` : `; ${hint}`
      }`,
      key,
      index,
      id,
      { segments: [key], ...(hint !== undefined && { hint }) },
    );
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
  strict: boolean,
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
      checkInputFields(input, references !== undefined, registered, index, id, issues, strict);
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
  report(issues, problem.code, message, field, index, id, { segments: ['input', ...problem.path] });
}

/**
 * How a plan's step bounds are judged (docs/api.md, "Bounds"): `judge` in a 2.0 plan the runtime
 * admits; `refuse` in a plan of another version (1.0); `ignore` in a 2.0 plan the runtime does not
 * admit (UNSUPPORTED_PLAN_VERSION says what is wrong).
 */
type BoundsMode = 'judge' | 'refuse' | 'ignore';

/** A step's bounds: judged and compiled, or each problem a BOUNDS_INVALID issue. */
function admitBounds(
  step: CapturedStep,
  id: string | undefined,
  registered: RegisteredCapability | undefined,
  issues: Issue[],
  mode: BoundsMode,
): StepBounds | undefined {
  const { index, bounds } = step;
  if (!bounds.ok) {
    report(
      issues,
      ErrorCode.INVALID_PLAN,
      unreadable('bounds', bounds, stepLabel(index, id)),
      'bounds',
      index,
      id,
    );
    return undefined;
  }
  if (step.boundsProblem !== undefined) {
    const problem = step.boundsProblem;
    if (problem === NOT_WALKED) return undefined;
    const field = problem.path.length === 0 ? 'bounds' : `bounds.${problem.path.join('.')}`;
    report(
      issues,
      ErrorCode.BOUNDS_INVALID,
      `${stepLabel(index, id)}: ${field} is ${problem.what}; bounds must be plain JSON data`,
      field,
      index,
      id,
      { segments: ['bounds', ...problem.path] },
    );
    return undefined;
  }
  if (bounds.value === undefined || mode === 'ignore') return undefined;
  if (mode === 'refuse') {
    const hint = 'use plan version "2.0", or drop bounds';
    report(
      issues,
      ErrorCode.BOUNDS_INVALID,
      `${stepLabel(index, id)}: bounds need plan version "2.0"`,
      'bounds',
      index,
      id,
      { hint },
    );
    return undefined;
  }
  // A capability's field record names its fields; a Standard Schema decides for itself.
  const declared =
    registered !== undefined && registered.standard === undefined && registered.schema.length > 0
      ? registered.schema.map((field) => field.key)
      : undefined;
  const compiled = compileBounds(bounds.value, declared);
  if (compiled.ok) return bounds.value as StepBounds;
  for (const problem of compiled.problems) {
    const field = ['bounds', ...problem.path].join('.');
    report(
      issues,
      ErrorCode.BOUNDS_INVALID,
      `${stepLabel(index, id)}: ${field}: ${problem.message}${problem.hint === undefined ? '' : `; ${problem.hint}`}`,
      field,
      index,
      id,
      {
        segments: ['bounds', ...problem.path],
        ...(problem.hint !== undefined && { hint: problem.hint }),
      },
    );
  }
  return undefined;
}

/** Admits one step: each check in turn, every issue reported, the step admitted only if none. */
function admitStep(
  step: CapturedStep,
  idIndex: StepIndex,
  lookup: Lookup,
  issues: Issue[],
  suggest: Suggester,
  strict: boolean,
  boundsMode: BoundsMode,
): AdmittedStep | undefined {
  if (!step.isObject) {
    reportNonObjectStep(step, issues);
    return undefined;
  }
  const { index } = step;
  const before = issues.length;
  const id = checkStepId(step, idIndex, issues);
  // Captured for a 2.0 plan only (docs/api.md, "Plan version 2.0").
  checkStepKeys(step, id, issues);
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
  const references = admitInput(step, id, registered, idIndex, issues, strict);
  const bounds = admitBounds(step, id, registered, issues, boundsMode);
  if (issues.length !== before || id === undefined || registered === undefined) return undefined;
  return {
    index,
    id,
    capability: registered,
    capabilityVersion,
    input: step.input.ok ? step.input.value : undefined,
    bounds,
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
 * A plan field that is absent while the plan has a key close to it (`step` for `steps`): the
 * suggestion, in every plan version (docs/api.md, "runtime.executePlan").
 */
function misspelled(field: string, otherKeys: readonly string[] | undefined): string | undefined {
  if (otherKeys === undefined) return undefined;
  const close = suggestName(field, otherKeys);
  return close === undefined
    ? undefined
    : `did you mean ${quoteText(field)} instead of ${quoteText(close)}?`;
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
    throw new PlanAdmissionError([{ code: ErrorCode.INVALID_PLAN, message, path: '' }]);
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
    const hint = misspelled('version', submission.otherKeys);
    report(
      issues,
      ErrorCode.UNSUPPORTED_PLAN_VERSION,
      `plan: version must be ${versionsText(submission.acceptedVersions)}, got ${got}${hint === undefined ? '' : `; ${hint}`}`,
      'version',
      undefined,
      undefined,
      hint === undefined ? undefined : { hint },
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
    const hint = misspelled('steps', submission.otherKeys);
    report(
      issues,
      ErrorCode.INVALID_PLAN,
      `plan: steps must be an array, got ${got}${hint === undefined ? '' : `; ${hint}`}`,
      'steps',
      undefined,
      undefined,
      hint === undefined ? undefined : { hint },
    );
  } else if (submission.steps.length === 0) {
    report(issues, ErrorCode.EMPTY_PLAN, 'plan: steps must contain at least one step', 'steps');
  }
  // First occurrence of each usable id: references and duplicates are judged against it.
  const idIndex = indexStepIds(submission.steps);
  const steps: AdmittedStep[] = [];
  const suggest = nameSuggester(names);
  const { version } = submission;
  const boundsMode: BoundsMode = submission.governed
    ? 'judge'
    : version.ok && version.value === '2.0'
      ? 'ignore'
      : 'refuse';
  for (const step of submission.steps) {
    const admitted = admitStep(
      step,
      idIndex,
      lookup,
      issues,
      suggest,
      submission.governed,
      boundsMode,
    );
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
