/**
 * Structural capture (docs/api.md, "runtime.executePlan"): a runtime-owned copy of the submission that
 * reads every structural field exactly once. Input ROOTS are kept by identity; their contents
 * are not copied (docs/decisions.md). Everything after capture uses this copy only, so later edits
 * to the caller's plan, or getters that change it, cannot redirect what is admitted and run.
 */

import { boundText, describeThrown } from '../errors/describe-value.js';

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
  readonly reason: CapturedField;
  readonly idempotencyKey: CapturedField;
}

export interface CapturedSubmission {
  readonly isObject: boolean;
  /** Set when the plan could not even be told apart from an array (a revoked proxy). */
  readonly readFailure: FailedRead | undefined;
  readonly version: CapturedField;
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

function captureStep(entry: CapturedField, index: number): CapturedStep {
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
      reason: MISSING,
      idempotencyKey: MISSING,
    };
  }
  return {
    index,
    isObject: true,
    readFailure: undefined,
    id: read(step, 'id'),
    capability: read(step, 'capability'),
    capabilityVersion: read(step, 'capabilityVersion'),
    input: read(step, 'input'),
    reason: read(step, 'reason'),
    idempotencyKey: read(step, 'idempotencyKey'),
  };
}

/** Reads the submission once. Never throws: failed reads are kept for admission to report. */
export function captureSubmission(plan: unknown, maxSteps: number): CapturedSubmission {
  const isArray = isObjectLike(plan) ? arrayCheck(plan) : undefined;
  if (!isObjectLike(plan) || isArray === undefined || !isArray.ok || isArray.value) {
    return {
      isObject: false,
      readFailure: isArray !== undefined && !isArray.ok ? isArray : undefined,
      version: MISSING,
      id: MISSING,
      goal: MISSING,
      metadata: MISSING,
      idempotencyKey: MISSING,
      stepsField: MISSING,
      stepsIsArray: false,
      stepsProblem: undefined,
      steps: [],
    };
  }
  const version = read(plan, 'version');
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
        steps.push(captureStep(read(list, index), index));
      }
    }
  }
  return {
    isObject: true,
    readFailure: undefined,
    version,
    id,
    goal,
    metadata,
    idempotencyKey,
    stepsField,
    stepsIsArray,
    stepsProblem,
    steps,
  };
}
