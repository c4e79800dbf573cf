/**
 * Approve with edits (docs/api.md, "Approve with edits"): the input an approver gives a step
 * request instead of the proposed one. It is captured once, as a 2.0 plan's input is: a detached,
 * deep-frozen copy of plain JSON data within the same bounds, read without running any code of
 * the value (whatever the plan's version: docs/decisions.md, "Approve with edits"). Then it is
 * held to the capability's input contract as a step's input is at its turn (the field record or
 * the Standard Schema, whose output is the input from then on), and in a 2.0 plan to the fields a
 * field record declares. Every refusal is APPROVAL_INPUT_INVALID and consumes nothing.
 */
import type { RegisteredCapability } from '../capabilities/inventory.js';
import { checkStepInput } from '../capabilities/step-input.js';
import { boundText } from '../errors/describe-value.js';
import { ErrorCode } from '../errors/error-codes.js';
import { createError } from '../errors/warrant-error.js';
import { recordValue } from '../jobs/recorded-value.js';
import type { ApprovedEdit } from '../jobs/transitions.js';
import { copyGoverned, governedField, type GovernedProblem } from '../plan/governed-value.js';

/** The longest key named in a message. */
const MAX_KEY_SHOWN = 100;

function invalid(message: string): Error {
  return createError(Error, ErrorCode.APPROVAL_INPUT_INVALID, message);
}

function outsideDomain(problem: GovernedProblem, what: string): Error {
  return invalid(
    `The approved input${what} is not plain JSON data within the bounds of a plan's inputs: ${governedField(problem.path)} is ${problem.what} (${problem.code}); nothing was decided`,
  );
}

/**
 * The approver's input, captured: a deep-frozen copy of plain JSON data. Throws
 * APPROVAL_INPUT_INVALID naming the first field outside the domain.
 */
export function captureEditedInput(value: unknown): unknown {
  const copied = copyGoverned(value);
  if (!copied.ok) throw outsideDomain(copied.problem, '');
  return copied.value;
}

/** A 2.0 input under a field record has the declared fields only, as admission says. */
function undeclaredField(capability: RegisteredCapability, input: unknown): string | undefined {
  const { schema } = capability;
  if (capability.standard !== undefined || schema.length === 0) return undefined;
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return undefined;
  return Object.keys(input).find((key) => !schema.some((field) => field.key === key));
}

/**
 * Holds a captured input to the capability's input contract; resolves with the input the step is
 * authorized with (the contract's output, copied and frozen again in a 2.0 plan) and its record.
 * Rejects with APPROVAL_INPUT_INVALID.
 */
export async function checkEditedInput(
  capability: RegisteredCapability,
  input: unknown,
  governed: boolean,
): Promise<ApprovedEdit> {
  const undeclared = governed ? undeclaredField(capability, input) : undefined;
  if (undeclared !== undefined) {
    throw invalid(
      `The approved input is refused: input.${boundText(undeclared, MAX_KEY_SHOWN)} is not a field of ${capability.name}; nothing was decided`,
    );
  }
  let valid = checkStepInput(capability, input);
  if (valid instanceof Promise) valid = await valid;
  if (!valid.ok)
    throw invalid(
      `The approved input is refused by the input contract of ${capability.name}: ${valid.error}; nothing was decided`,
    );
  let approved = valid.value;
  if (governed && approved !== input) {
    // The step would fail on it at its turn: refused now, while the request is still pending.
    const copied = copyGoverned(approved);
    if (!copied.ok) throw outsideDomain(copied.problem, ' (as its input contract gave it back)');
    approved = copied.value;
  }
  return { input: approved, recorded: recordValue(approved, 'input') };
}
