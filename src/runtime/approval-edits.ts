/**
 * Approve with edits (docs/api.md, "Approve with edits") on the runtime's side: the approver's
 * input checked against the waiting step before anything is consumed, and the grant the step
 * then runs under, whether in the deciding process, on a worker (a grant put back on the queue)
 * or after a crash (recovery): bound to the approved input's digest, the approved input as
 * recorded given to the step instead of its own.
 */
import type { ApprovalGrant, ExecutionCaller } from '../authorization/authorizer.js';
import { checkEditedInput } from '../approvals/edited-input.js';
import type { RegisteredCapability } from '../capabilities/inventory.js';
import { snapshotCaller } from '../callers/caller-snapshot.js';
import { ErrorCode } from '../errors/error-codes.js';
import { createError } from '../errors/warrant-error.js';
import type { Job, JobEvent, JobStep } from '../jobs/job.js';
import type { ApprovedEdit } from '../jobs/transitions.js';

/** The approval a step runs under (the executor's `StepApproval`). */
export interface RecordedApproval {
  readonly grant: ApprovalGrant;
  readonly capabilityVersion: string;
  /** With an edited grant: the approved input, a copy of it as recorded. */
  readonly input?: unknown;
}

/**
 * The approver's input for the waiting step at `index`, checked (approvals/edited-input.ts);
 * undefined when it is the proposed input itself (nothing was edited). Rejects with
 * APPROVAL_INPUT_INVALID: nothing is consumed.
 */
export async function editOfDecision(
  job: Job,
  index: number,
  input: unknown,
  lookup: (name: string) => RegisteredCapability | undefined,
): Promise<ApprovedEdit | undefined> {
  const step = job.steps[index] as JobStep;
  // A step that started may have run as it was (docs/api.md, "Recovery"): approve or reject that.
  if (
    job.events.some(
      (event) => event.type === 'capability.started' && event.data?.stepId === step.id,
    )
  ) {
    throw createError(
      Error,
      ErrorCode.APPROVAL_INPUT_INVALID,
      `Step ${JSON.stringify(step.id)} started before and may have run with its input: its request cannot be approved with another; nothing was decided`,
    );
  }
  const capability = lookup(step.capability);
  if (capability === undefined)
    throw createError(Error, ErrorCode.APPROVAL_CANNOT_RUN, `${step.capability} is not registered`);
  const edit = await checkEditedInput(capability, input, job.planVersion === '2.0');
  return edit.recorded.digest === step.decision?.inputDigest ? undefined : edit;
}

/** The grant of a decision, bound to the approved input when the approver edited it. */
export function decidedGrant(
  approver: ExecutionCaller,
  grantedAt: string,
  proposedDigest: string,
  edit: ApprovedEdit | undefined,
): ApprovalGrant {
  return Object.freeze(
    edit === undefined
      ? { approver, grantedAt, inputDigest: proposedDigest }
      : {
          approver,
          grantedAt,
          inputDigest: edit.recorded.digest,
          edited: true as const,
          proposedDigest,
        },
  );
}

/**
 * The approval of a step from its recorded grant (`granted`, an `approval.granted` event of it):
 * `context.approval` for the new decision, the approver known by id only; for an edited grant,
 * bound to the approved input, which the step runs with (a copy of it as recorded).
 */
export function recordedApproval(record: Job, index: number, granted: JobEvent): RecordedApproval {
  const step = record.steps[index] as JobStep;
  const decision = step.decision as NonNullable<JobStep['decision']>;
  const approver = snapshotCaller({ id: String(granted.data?.approver) }) as ExecutionCaller;
  const edited = granted.data?.edited === true && Object.hasOwn(step, 'approvedInput');
  if (!edited) {
    const grant: ApprovalGrant = Object.freeze({
      approver,
      grantedAt: granted.timestamp,
      inputDigest: decision.inputDigest,
    });
    return { grant, capabilityVersion: decision.capabilityVersion };
  }
  const grant: ApprovalGrant = Object.freeze({
    approver,
    grantedAt: granted.timestamp,
    inputDigest: String(granted.data?.inputDigest),
    edited: true,
    proposedDigest: decision.inputDigest,
  });
  return {
    grant,
    capabilityVersion: decision.capabilityVersion,
    input: structuredClone(step.approvedInput),
  };
}
