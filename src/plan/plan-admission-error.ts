import { ErrorCode, type AdmissionIssueCode } from '../errors/error-codes.js';
import { boundText } from '../errors/describe-value.js';
import { isIssuedError, issueError } from '../errors/warrant-error.js';

/** One reason a plan was refused admission (docs/api.md, "runtime.executePlan"). Frozen. */
export interface PlanAdmissionIssue {
  readonly code: AdmissionIssueCode;
  readonly message: string;
  readonly stepIndex?: number;
  readonly stepId?: string;
  readonly field?: string;
  /**
   * Where, as a JSON pointer into the plan (RFC 6901): `''` the plan itself, `/steps/1/input/to`
   * a field of a step's input. Cut to MAX_ISSUE_CHARS like the other texts.
   */
  readonly path: string;
  /** What to change, when admission has a suggestion: `did you mean "capabilityVersion"?`. */
  readonly hint?: string;
}

const CODE = ErrorCode.PLAN_ADMISSION_REJECTED;

/** Longest text of one issue (`message`, `field`, `path`, `hint`); longer texts are cut, ending in `...`. */
export const MAX_ISSUE_CHARS = 500;

/** Most issues whose texts the error message lists; every issue is in `issues`. */
export const MAX_LISTED_ISSUES = 20;

/**
 * The one function that turns issues into the error message: the texts of the first
 * MAX_LISTED_ISSUES issues joined with `; `, each cut to MAX_ISSUE_CHARS, then how many more
 * there are. So the message stays one bounded line (about 10 KB at most) however many issues
 * a plan has (docs/decisions.md, "Plans and admission").
 */
export function formatAdmissionMessage(issues: readonly PlanAdmissionIssue[]): string {
  const listed = issues
    .slice(0, MAX_LISTED_ISSUES)
    .map((issue) => boundText(issue.message, MAX_ISSUE_CHARS));
  const more = issues.length - listed.length;
  if (more > 0) listed.push(`and ${more} more issue${more === 1 ? '' : 's'} (see error.issues)`);
  return `Execution plan failed validation: ${listed.join('; ')}`;
}

/** Rejection of a plan before any job exists. Recognise it with `isPlanAdmissionError`. */
export class PlanAdmissionError extends Error {
  override readonly name = 'PlanAdmissionError';
  declare readonly code: typeof ErrorCode.PLAN_ADMISSION_REJECTED;
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
