/**
 * Structural capture (spec §3 step 1, API.md §4): a runtime-owned copy of the submission that
 * reads every structural field exactly once. Input ROOTS are kept by identity; their contents
 * are not copied (spec §8 rule 2). Everything after capture uses this copy only, so later edits
 * to the caller's plan, or getters that change it, cannot redirect what is admitted and run.
 */

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
  readonly version: CapturedField;
  readonly id: CapturedField;
  readonly goal: CapturedField;
  readonly metadata: CapturedField;
  readonly idempotencyKey: CapturedField;
  /** The `steps` field itself (read once); `steps` below holds the captured entries. */
  readonly stepsField: CapturedField;
  /** Set when `steps` is an array but could not be walked (length unreadable or too long). */
  readonly stepsProblem: string | undefined;
  readonly steps: readonly CapturedStep[];
}

const MISSING: CapturedField = Object.freeze({ ok: true, value: undefined });

function read(target: object, key: string): CapturedField {
  try {
    return { ok: true, value: (target as Record<string, unknown>)[key] };
  } catch (error) {
    return { ok: false, error };
  }
}

function isObjectLike(value: unknown): value is object {
  return (typeof value === 'object' && value !== null) || typeof value === 'function';
}

function captureStep(entry: CapturedField, index: number): CapturedStep {
  const step = entry.ok ? entry.value : undefined;
  if (!isObjectLike(step) || Array.isArray(step)) {
    return {
      index,
      isObject: false,
      readFailure: entry.ok ? undefined : entry,
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
  if (!isObjectLike(plan) || Array.isArray(plan)) {
    return {
      isObject: false,
      version: MISSING,
      id: MISSING,
      goal: MISSING,
      metadata: MISSING,
      idempotencyKey: MISSING,
      stepsField: MISSING,
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
  if (stepsField.ok && Array.isArray(stepsField.value)) {
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
        steps.push(captureStep(read(list, String(index)), index));
      }
    }
  }
  return {
    isObject: true,
    version,
    id,
    goal,
    metadata,
    idempotencyKey,
    stepsField,
    stepsProblem,
    steps,
  };
}
