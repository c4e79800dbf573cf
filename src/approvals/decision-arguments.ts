/**
 * The arguments of `runtime.decideApproval()` (docs/api.md, "Approvals"): read once, each checked,
 * the approver snapshotted as a caller. Separate from the desk that acts on them (runtime/), so
 * the request model and its checks never import runtime/ (docs/decisions.md, "House rules").
 */
import { ErrorCode } from '../errors/error-codes.js';
import type { ExecutionCaller } from '../callers/execution-caller.js';
import { snapshotCaller } from '../callers/caller-snapshot.js';
import { describeThrown, describeValue } from '../errors/describe-value.js';
import { readField } from '../values/hostile-reads.js';
import { createError } from '../errors/warrant-error.js';
import { captureEditedInput } from './edited-input.js';
import type { CheckedPlanDecision } from './plan-request.js';

/** Arguments of `runtime.decideApproval()` on a step request. */
export interface ApprovalDecision {
  /** `'step'` (the default); a plan request is decided with `PlanApprovalDecision`. */
  kind?: 'step';
  jobId: string;
  stepId: string;
  /** The digest of the request being decided, as `listApprovals` gave it. */
  inputDigest: string;
  /** Who decides: a caller (JSON data) with a string `id`. */
  approver: ExecutionCaller;
  decision: 'approve' | 'reject';
  comment?: string;
  /**
   * Approve with edits (docs/api.md, "Approve with edits"): the input the step runs with instead
   * of the proposed one; only with `decision: 'approve'`.
   */
  input?: unknown;
}

/** The arguments of `decideApproval()` on a step request, read once and checked. */
export interface CheckedDecision {
  readonly kind: 'step';
  readonly jobId: string;
  readonly stepId: string;
  readonly inputDigest: string;
  readonly approver: ExecutionCaller & { readonly id: string };
  readonly decision: 'approve' | 'reject';
  readonly comment: string | undefined;
  /** The approver's input, captured (approvals/edited-input.ts); undefined when none. */
  readonly input: unknown;
}

function invalid(message: string): TypeError {
  return createError(TypeError, ErrorCode.APPROVAL_DECISION_INVALID, message);
}

/** The fields every decision has, read once and checked; `digests` the kind's own strings. */
function readCommon<K extends string>(
  value: object,
  digests: readonly K[],
): {
  readonly strings: Record<'jobId' | K, string>;
  readonly approver: ExecutionCaller & { readonly id: string };
  readonly decision: 'approve' | 'reject';
  readonly comment: string | undefined;
  readonly input: unknown;
} {
  const field = (key: string): unknown =>
    readField(value, key, (problem) => invalid(`decideApproval() ${key} ${problem}`));
  const strings: Record<string, unknown> = { jobId: field('jobId') };
  for (const key of digests) strings[key] = field(key);
  const approver = field('approver');
  const decision = field('decision');
  const comment = field('comment');
  const input = field('input');
  for (const [name, text] of Object.entries(strings)) {
    if (typeof text !== 'string')
      throw invalid(`decideApproval() ${name} must be a string, got ${describeValue(text)}`);
  }
  if (decision !== 'approve' && decision !== 'reject') {
    throw invalid(
      `decideApproval() decision must be 'approve' or 'reject', got ${describeValue(decision)}`,
    );
  }
  if (comment !== undefined && typeof comment !== 'string')
    throw invalid(`decideApproval() comment must be a string, got ${describeValue(comment)}`);
  if (input !== undefined && decision !== 'approve')
    throw invalid("decideApproval() input is an approver's edit: only with decision 'approve'");
  let snapshot: ExecutionCaller | undefined;
  try {
    snapshot = snapshotCaller(approver);
  } catch (error) {
    throw invalid(`decideApproval() approver: ${describeThrown(error)}`);
  }
  if (snapshot === undefined || typeof snapshot.id !== 'string' || snapshot.id === '')
    throw invalid('decideApproval() approver must be a caller with a non-empty string id');
  return {
    strings: strings as Record<'jobId' | K, string>,
    approver: snapshot as ExecutionCaller & { readonly id: string },
    decision,
    comment: comment as string | undefined,
    input,
  };
}

/**
 * Reads the arguments once; a malformed one is APPROVAL_DECISION_INVALID. `kind: 'plan'` is a
 * decision on a plan request (docs/api.md, "Plan warrants"), which takes no `input`: an approver
 * edits a step's input, never a plan (docs/api.md, "Approve with edits").
 */
export function checkDecisionArguments(value: unknown): CheckedDecision | CheckedPlanDecision {
  if (typeof value !== 'object' || value === null) {
    throw invalid(`decideApproval() takes an object, got ${describeValue(value)}`);
  }
  const kind = readField(value, 'kind', (problem) => invalid(`decideApproval() kind ${problem}`));
  if (kind !== undefined && kind !== 'step' && kind !== 'plan')
    throw invalid(`decideApproval() kind must be 'step' or 'plan', got ${describeValue(kind)}`);
  if (kind === 'plan') {
    const { strings, input, ...rest } = readCommon(value, ['planDigest']);
    if (input !== undefined)
      throw invalid(
        "decideApproval() input is an approver's edit of a step request: not on a plan",
      );
    return { kind: 'plan', jobId: strings.jobId, planDigest: strings.planDigest, ...rest };
  }
  const { strings, input, ...rest } = readCommon(value, ['stepId', 'inputDigest']);
  return {
    kind: 'step',
    jobId: strings.jobId,
    stepId: strings.stepId,
    inputDigest: strings.inputDigest,
    ...rest,
    input: input === undefined ? undefined : captureEditedInput(input),
  };
}
