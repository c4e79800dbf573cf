/**
 * The input check at step time (docs/api.md, "Input schemas"): the field record, or the Standard
 * Schema whose OUTPUT becomes the input the authorizer sees and the capability receives (one
 * object, nothing in between). An asynchronous validation is bounded by the capability's
 * `timeoutMs` when it has one (docs/decisions.md, "Standard Schema inputs").
 */
import { describeThrown } from '../errors/describe-value.js';
import { checkInput } from './input-schema.js';
import type { RegisteredCapability } from './inventory.js';
import { runValidate, validationMessage, type StandardOutcome } from './standard-input.js';

/** The input to use, or why the step fails. */
export type StepInput =
  { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: string };

function fieldCheck(capability: RegisteredCapability, input: unknown): StepInput {
  if (capability.schema.length === 0) return { ok: true, value: input };
  let problems;
  try {
    problems = checkInput(input, capability.schema);
  } catch (error) {
    return { ok: false, error: `Input validation failed: ${describeThrown(error)}` };
  }
  if (problems.length === 0) return { ok: true, value: input };
  return {
    ok: false,
    error: `Input validation failed: ${problems.map((problem) => problem.message).join('; ')}`,
  };
}

function fromOutcome(outcome: StandardOutcome): StepInput {
  return outcome.ok
    ? { ok: true, value: outcome.value }
    : { ok: false, error: validationMessage(outcome.issues) };
}

/** `pending`, or a failure once `ms` have passed; the timer never outlives the race. */
function within(pending: Promise<StandardOutcome>, ms: number): Promise<StepInput> {
  return new Promise<StepInput>((resolve) => {
    const timer = setTimeout(() => {
      resolve({ ok: false, error: `Input validation timed out after ${ms}ms` });
    }, ms);
    void pending.then((outcome) => {
      clearTimeout(timer);
      resolve(fromOutcome(outcome));
    });
  });
}

/**
 * Checks a resolved input. Synchronous for field records and for schemas that answer at once;
 * a promise (that never rejects) when the schema answers with one. Never throws.
 */
export function checkStepInput(
  capability: RegisteredCapability,
  input: unknown,
): StepInput | Promise<StepInput> {
  const { standard } = capability;
  if (standard === undefined) return fieldCheck(capability, input);
  const outcome = runValidate(standard, input);
  if (!('pending' in outcome)) return fromOutcome(outcome);
  const { timeoutMs } = capability;
  return timeoutMs === undefined
    ? outcome.pending.then(fromOutcome)
    : within(outcome.pending, timeoutMs);
}
