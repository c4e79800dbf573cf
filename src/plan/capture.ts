/**
 * Structural capture (docs/api.md, "runtime.executePlan"): a runtime-owned copy of the submission that
 * reads every structural field exactly once. Input ROOTS are kept by identity; their contents
 * are not copied (docs/decisions.md), except in a 2.0 plan the runtime admits, whose inputs are
 * walked and copied here, once (docs/api.md, "Plan version 2.0"). Everything after capture uses this copy only, so later edits
 * to the caller's plan, or getters that change it, cannot redirect what is admitted and run.
 */

import { boundText, describeThrown } from '../errors/describe-value.js';
import { ErrorCode } from '../errors/error-codes.js';
import type { PlanVersion } from './execution-plan.js';
import { DEFAULT_PLAN_VERSIONS } from './plan-versions.js';
import { copyGoverned, GovernedBudget, type GovernedProblem } from './governed-value.js';

/** A value read from the caller's plan, or the fact that reading it threw. */
export type CapturedField = { readonly ok: true; readonly value: unknown } | FailedRead;
export interface FailedRead {
  readonly ok: false;
  readonly error: unknown;
}

export interface CapturedStep {
  readonly index: number;
  /** False when the step itself is not an object (nothing else was read). */
  readonly isObject: boolean;
  /** Set when reading `steps[index]` itself threw. */
  readonly readFailure: FailedRead | undefined;
  readonly id: CapturedField;
  readonly capability: CapturedField;
  readonly capabilityVersion: CapturedField;
  readonly input: CapturedField;
  /**
   * The step's `bounds` (docs/api.md, "Bounds"): read in every plan version (a 1.0 plan may not
   * have them); in a 2.0 plan the runtime admits, its deep-frozen copy, like `input`.
   */
  readonly bounds: CapturedField;
  /** A 2.0 plan only: why `bounds` is outside the value domain (then `bounds` is MISSING). */
  readonly boundsProblem: GovernedProblem | undefined;
  readonly reason: CapturedField;
  readonly idempotencyKey: CapturedField;
  /**
   * A 2.0 plan only: why the input is outside the value domain (then `input` is MISSING). For
   * a 2.0 plan `input` holds the runtime's deep-frozen copy, never the caller's object.
   */
  readonly inputProblem: GovernedProblem | undefined;
  /**
   * A 2.0 plan only: the step's own keys that are not step fields (at most
   * MAX_UNKNOWN_KEYS_KEPT), or the failed read of its keys; undefined otherwise.
   */
  readonly unknownKeys: readonly string[] | FailedRead | undefined;
}

/** The keys a 2.0 step may have (docs/api.md, "Plan version 2.0"). */
export const STEP_KEYS: ReadonlySet<string> = new Set([
  'id',
  'capability',
  'capabilityVersion',
  'input',
  'bounds',
  'reason',
  'idempotencyKey',
]);

/** The top-level keys of a plan. */
export const PLAN_KEYS: readonly string[] = Object.freeze([
  'version',
  'id',
  'goal',
  'steps',
  'metadata',
  'idempotencyKey',
]);

/** Unknown keys kept per step (each is one admission issue), and plan keys kept for suggestions. */
export const MAX_UNKNOWN_KEYS_KEPT = 20;
const MAX_PLAN_KEYS_KEPT = 1_000;

export interface CapturedSubmission {
  readonly isObject: boolean;
  /** Set when the plan could not even be told apart from an array (a revoked proxy). */
  readonly readFailure: FailedRead | undefined;
  readonly version: CapturedField;
  /** The versions the runtime admits (its `planVersions` option). */
  readonly acceptedVersions: readonly PlanVersion[];
  /** `'2.0'` when the plan is a 2.0 plan the runtime admits: its inputs were captured as copies. */
  readonly governed: boolean;
  readonly id: CapturedField;
  readonly goal: CapturedField;
  readonly metadata: CapturedField;
  readonly idempotencyKey: CapturedField;
  /** The `steps` field itself (read once); `steps` below holds the captured entries. */
  readonly stepsField: CapturedField;
  /** True when `steps` is an array (checked once, here). */
  readonly stepsIsArray: boolean;
  /**
   * Set when `steps` could not be walked: a revoked proxy, an unreadable length or too many
   * steps. Nothing else of `steps` was read then.
   */
  readonly stepsProblem: string | undefined;
  readonly steps: readonly CapturedStep[];
  /**
   * The plan's own keys that are not plan fields (at most 1,000), read only when `version` or
   * `steps` is absent: what "did you mean" looks among (`step` for `steps`).
   */
  readonly otherKeys: readonly string[] | undefined;
}

const MISSING: CapturedField = Object.freeze({ ok: true, value: undefined });

/**
 * A field read once. An absent field (most optional ones) shares MISSING: every captured field
 * lives until its plan is admitted, and a 10,000-step plan allocated 60,000 of them
 * (BENCHMARKS.md, "Scaling with plan size").
 */
function read(target: object, key: string | number): CapturedField {
  try {
    const value: unknown = (target as Record<string | number, unknown>)[key];
    return value === undefined ? MISSING : { ok: true, value };
  } catch (error) {
    return { ok: false, error };
  }
}

function isObjectLike(value: unknown): value is object {
  return (typeof value === 'object' && value !== null) || typeof value === 'function';
}

type ArrayCheck = { readonly ok: true; readonly value: boolean } | FailedRead;
const IS_ARRAY: ArrayCheck = Object.freeze({ ok: true, value: true });
const NOT_ARRAY: ArrayCheck = Object.freeze({ ok: true, value: false });

/**
 * `Array.isArray`, which throws for a revoked proxy: then the failed read is returned. The two
 * answers are shared, like MISSING: one object less per captured step.
 */
function arrayCheck(value: unknown): ArrayCheck {
  try {
    return Array.isArray(value) ? IS_ARRAY : NOT_ARRAY;
  } catch (error) {
    return { ok: false, error };
  }
}

/** The input of a 2.0 step after the plan's budget was spent: not walked, not reported again. */
export const NOT_WALKED: GovernedProblem = Object.freeze({
  code: ErrorCode.VALUE_TOO_MANY_CONTAINERS,
  path: Object.freeze([]),
  what: 'not walked: the plan is already over its bounds',
});

/**
 * A 2.0 step input (or its bounds), walked once here (docs/api.md, "Plan version 2.0"): its
 * deep-frozen copy, or the problem. An absent field stays absent. The budget is the plan's.
 */
function governedCopy(
  read: CapturedField,
  budget: GovernedBudget,
): { copy: CapturedField; problem: GovernedProblem | undefined } {
  if (!read.ok || read.value === undefined) return { copy: read, problem: undefined };
  // The plan's budget is spent: that was reported once, on the step that spent it.
  if (budget.spent()) return { copy: MISSING, problem: NOT_WALKED };
  const copied = copyGoverned(read.value, budget);
  return copied.ok
    ? { copy: { ok: true, value: copied.value }, problem: undefined }
    : { copy: MISSING, problem: copied.problem };
}

/**
 * The plan's budgets when it is a 2.0 plan the runtime admits: one for its inputs, one for its
 * bounds (docs/api.md, "Bounds"), so neither can spend what the other may hold.
 */
interface Budgets {
  readonly inputs: GovernedBudget;
  readonly bounds: GovernedBudget;
}

function captureStep(
  entry: CapturedField,
  index: number,
  budgets: Budgets | undefined,
): CapturedStep {
  const step = entry.ok ? entry.value : undefined;
  const isArray = isObjectLike(step) ? arrayCheck(step) : undefined;
  if (!isObjectLike(step) || isArray === undefined || !isArray.ok || isArray.value) {
    const failure = !entry.ok ? entry : isArray !== undefined && !isArray.ok ? isArray : undefined;
    return {
      index,
      isObject: false,
      readFailure: failure,
      id: MISSING,
      capability: MISSING,
      capabilityVersion: MISSING,
      input: MISSING,
      bounds: MISSING,
      boundsProblem: undefined,
      reason: MISSING,
      idempotencyKey: MISSING,
      inputProblem: undefined,
      unknownKeys: undefined,
    };
  }
  const id = read(step, 'id');
  const capability = read(step, 'capability');
  const capabilityVersion = read(step, 'capabilityVersion');
  let input = read(step, 'input');
  let bounds = read(step, 'bounds');
  let inputProblem: GovernedProblem | undefined;
  let boundsProblem: GovernedProblem | undefined;
  if (budgets !== undefined) {
    ({ copy: input, problem: inputProblem } = governedCopy(input, budgets.inputs));
    ({ copy: bounds, problem: boundsProblem } = governedCopy(bounds, budgets.bounds));
  }
  return {
    index,
    isObject: true,
    readFailure: undefined,
    id,
    capability,
    capabilityVersion,
    input,
    bounds,
    boundsProblem,
    reason: read(step, 'reason'),
    idempotencyKey: read(step, 'idempotencyKey'),
    inputProblem,
    unknownKeys:
      budgets === undefined ? undefined : unknownKeysOf(step, STEP_KEYS, MAX_UNKNOWN_KEYS_KEPT),
  };
}

/**
 * The own enumerable string keys of `target` outside `known`, at most `most` of them (undefined
 * when there are none); the failed read when listing them threw (a proxy's trap).
 */
function unknownKeysOf(
  target: object,
  known: ReadonlySet<string>,
  most: number,
): readonly string[] | FailedRead | undefined {
  let unknown: string[] | undefined;
  try {
    for (const key of Object.keys(target)) {
      if (known.has(key)) continue;
      (unknown ??= []).push(key);
      if (unknown.length >= most) break;
    }
  } catch (error) {
    return { ok: false, error };
  }
  return unknown;
}

const PLAN_KEY_SET: ReadonlySet<string> = new Set(PLAN_KEYS);

/** The plan's other keys, for suggestions only: a failed read means none. */
function otherPlanKeys(plan: object): readonly string[] | undefined {
  const keys = unknownKeysOf(plan, PLAN_KEY_SET, MAX_PLAN_KEYS_KEPT);
  return keys === undefined || 'ok' in keys ? undefined : keys;
}

/**
 * Reads the submission once. Never throws: failed reads are kept for admission to report.
 * `versions` are the plan versions the runtime admits: a 2.0 plan among them has each step input
 * walked and copied here, once (docs/api.md, "Plan version 2.0").
 */
export function captureSubmission(
  plan: unknown,
  maxSteps: number,
  versions: readonly PlanVersion[] = DEFAULT_PLAN_VERSIONS,
): CapturedSubmission {
  const isArray = isObjectLike(plan) ? arrayCheck(plan) : undefined;
  if (!isObjectLike(plan) || isArray === undefined || !isArray.ok || isArray.value) {
    return {
      isObject: false,
      readFailure: isArray !== undefined && !isArray.ok ? isArray : undefined,
      version: MISSING,
      acceptedVersions: versions,
      governed: false,
      id: MISSING,
      goal: MISSING,
      metadata: MISSING,
      idempotencyKey: MISSING,
      stepsField: MISSING,
      stepsIsArray: false,
      stepsProblem: undefined,
      steps: [],
      otherKeys: undefined,
    };
  }
  const version = read(plan, 'version');
  // Read once, here: whether the inputs are walked depends on this one read.
  const governed =
    version.ok && version.value === '2.0' && versions.includes(version.value as PlanVersion);
  const budgets = governed
    ? { inputs: new GovernedBudget(), bounds: new GovernedBudget() }
    : undefined;
  const id = read(plan, 'id');
  const goal = read(plan, 'goal');
  const stepsField = read(plan, 'steps');
  const metadata = read(plan, 'metadata');
  const idempotencyKey = read(plan, 'idempotencyKey');
  const steps: CapturedStep[] = [];
  let stepsProblem: string | undefined;
  const stepsArray = stepsField.ok ? arrayCheck(stepsField.value) : undefined;
  const stepsIsArray = stepsArray !== undefined && stepsArray.ok && stepsArray.value;
  if (stepsArray !== undefined && !stepsArray.ok) {
    stepsProblem = `plan.steps could not be read (${boundText(describeThrown(stepsArray.error), 80)})`;
  } else if (stepsIsArray && stepsField.ok) {
    const list = stepsField.value as unknown[];
    let length: unknown;
    try {
      length = list.length;
    } catch {
      length = undefined;
    }
    if (typeof length !== 'number' || !Number.isSafeInteger(length) || length < 0) {
      stepsProblem = 'plan.steps has an unreadable length';
    } else if (length > maxSteps) {
      stepsProblem = `plan.steps has ${length} steps; at most ${maxSteps} are accepted (maxPlanSteps)`;
    } else {
      for (let index = 0; index < length; index++) {
        steps.push(captureStep(read(list, index), index, budgets));
      }
    }
  }
  return {
    isObject: true,
    readFailure: undefined,
    version,
    acceptedVersions: versions,
    governed,
    id,
    goal,
    metadata,
    idempotencyKey,
    stepsField,
    stepsIsArray,
    stepsProblem,
    steps,
    // Only for a plan missing a field it needs (a refused plan): a known key misspelled.
    otherKeys:
      (version.ok && version.value === undefined) ||
      (stepsField.ok && stepsField.value === undefined)
        ? otherPlanKeys(plan)
        : undefined,
  };
}
