/**
 * The record of an approval with edits (docs/api.md, "Approve with edits"), as `verifyJob` checks
 * it: a step holds a proposed and an approved input exactly when one `approval.granted` of it is
 * `edited`; the grant's `proposedDigest` is the digest of the request it decided and of the
 * proposed input, its `inputDigest` the digest of the approved input and of every decision made
 * on the step since (the step was authorized with the approved input, never with another).
 */
import type { JobEvent, JobStep } from '../jobs/job.js';
import { digestRecorded } from '../jobs/recorded-value.js';

/** Why a step's edit does not match its events. */
export interface EditFailure {
  readonly reason: string;
  readonly eventIndex?: number;
}

/** Events that record a decision on the step: their `inputDigest` is what was authorized. */
function decidesStep(event: JobEvent): boolean {
  if (event.type === 'capability.started' || event.type === 'capability.denied') return true;
  // A step failure carries a decision only when it was one (`outcome`).
  return event.type === 'capability.failed' && event.data?.outcome !== undefined;
}

/** Checks the edit of one step against the job's events; undefined when it matches. */
export function checkApprovalEdit(
  step: JobStep,
  events: readonly JobEvent[],
): EditFailure | undefined {
  let granted = -1;
  let requested: JobEvent | undefined;
  let requestedBefore: JobEvent | undefined;
  for (let index = 0; index < events.length; index++) {
    const event = events[index] as JobEvent;
    if (event.data?.stepId !== step.id) continue;
    if (event.type === 'approval.requested') requested = event;
    if (event.type !== 'approval.granted' || event.data.edited !== true) continue;
    if (granted >= 0)
      return { reason: `step ${step.id} was approved with edits twice`, eventIndex: index };
    granted = index;
    requestedBefore = requested;
  }
  const holds = Object.hasOwn(step, 'proposedInput') || Object.hasOwn(step, 'approvedInput');
  if (granted < 0) {
    return holds
      ? { reason: `step ${step.id} holds an edited input but no grant of it was edited` }
      : undefined;
  }
  const data = (events[granted] as JobEvent).data ?? {};
  const mismatch = (what: string, eventIndex = granted): EditFailure => ({
    reason: `the ${what} of step ${step.id} does not match its edited grant`,
    eventIndex,
  });
  if (!Object.hasOwn(step, 'proposedInput') || !Object.hasOwn(step, 'approvedInput')) {
    return {
      reason: `step ${step.id} holds no proposed or approved input but its grant was edited`,
      eventIndex: granted,
    };
  }
  if (requestedBefore?.data?.inputDigest !== data.proposedDigest)
    return mismatch('approval request');
  if (digestRecorded(step.proposedInput) !== data.proposedDigest) return mismatch('proposed input');
  if (digestRecorded(step.approvedInput) !== data.inputDigest) return mismatch('approved input');
  for (let index = granted + 1; index < events.length; index++) {
    const event = events[index] as JobEvent;
    if (event.data?.stepId !== step.id || !decidesStep(event)) continue;
    if (event.data.inputDigest !== data.inputDigest) return mismatch('decision', index);
  }
  return undefined;
}
