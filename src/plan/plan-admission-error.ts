import { isIssuedError, issueError } from '../errors/warrant-error.js';

/** One reason a plan was refused admission (API.md §4). Frozen. */
export interface PlanAdmissionIssue {
  readonly code:
    | 'INVALID_PLAN'
    | 'UNSUPPORTED_PLAN_VERSION'
    | 'EMPTY_PLAN'
    | 'DUPLICATE_STEP_ID'
    | 'UNKNOWN_CAPABILITY'
    | 'CAPABILITY_VERSION_MISMATCH'
    | 'REQUIRED_INPUT_MISSING'
    | 'INPUT_TYPE_MISMATCH'
    | 'INVALID_RESULT_REFERENCE'
    | 'RESULT_REFERENCE_NOT_EARLIER'
    | 'AMBIGUOUS_RESULT_REFERENCE';
  readonly message: string;
  readonly stepIndex?: number;
  readonly stepId?: string;
  readonly field?: string;
}

const CODE = 'PLAN_ADMISSION_REJECTED';

/** The one function that turns issues into the error message (STYLE.md rule 11). */
export function formatAdmissionMessage(issues: readonly PlanAdmissionIssue[]): string {
  return `Execution plan failed validation: ${issues.map((issue) => issue.message).join('; ')}`;
}

/** Rejection of a plan before any job exists. Recognise it with `isPlanAdmissionError`. */
export class PlanAdmissionError extends Error {
  override readonly name = 'PlanAdmissionError';
  declare readonly code: 'PLAN_ADMISSION_REJECTED';
  readonly issues: readonly PlanAdmissionIssue[];

  constructor(issues: readonly PlanAdmissionIssue[]) {
    super(formatAdmissionMessage(issues));
    this.issues = Object.freeze(issues.map((issue) => Object.freeze({ ...issue })));
    issueError(this, CODE);
  }
}

/**
 * True only for a PlanAdmissionError that Warrant issued (from either build). A lookalike
 * object, a clone, a proxy or an error from elsewhere is not one. Never throws.
 */
export function isPlanAdmissionError(value: unknown): value is PlanAdmissionError {
  return isIssuedError(value, CODE);
}
