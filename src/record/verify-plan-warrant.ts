/**
 * The plan warrant of a stored job, verified (docs/api.md, "runtime.verifyJob", "Plan
 * warrants"): each plan request's digest computed again from the record as read (the plan, the
 * caller, the request's steps), each plan decision naming its request's digest, and each step
 * decision covered by a plan grant naming the grant the record holds.
 */
import type { Job, JobEvent, JobStep } from '../jobs/job.js';
import {
  isPlanEvent,
  lastPlanRequest,
  planGrantOf,
  planRequestAt,
  planWarrantDigest,
} from '../jobs/plan-grant.js';

/** Why a record's plan warrant does not hold. */
export interface PlanWarrantFailure {
  readonly reason: string;
  readonly eventIndex?: number;
  readonly stepId?: string;
}

function failure(reason: string, eventIndex?: number, stepId?: string): PlanWarrantFailure {
  const found: { -readonly [K in keyof PlanWarrantFailure]: PlanWarrantFailure[K] } = { reason };
  if (eventIndex !== undefined) found.eventIndex = eventIndex;
  if (stepId !== undefined) found.stepId = stepId;
  return found;
}

/** The first problem of the job's plan warrant; undefined when it holds (or there is none). */
export function checkPlanWarrant(job: Job): PlanWarrantFailure | undefined {
  for (let index = 0; index < job.events.length; index++) {
    const event = job.events[index] as JobEvent;
    if (!isPlanEvent(event)) continue;
    if (event.type === 'approval.requested') {
      const request = planRequestAt(job, index);
      if (request === undefined)
        return failure(`the plan request (event ${index}) is malformed`, index);
      if (planWarrantDigest(job, request.steps) !== request.planDigest) {
        return failure(
          `the plan request (event ${index}) does not match its planDigest: the plan, its caller or the request's steps were changed`,
          index,
          request.stepId,
        );
      }
    } else if (event.type === 'approval.granted' || event.type === 'approval.rejected') {
      const request = lastPlanRequest(job, index);
      if (request === undefined || event.data?.planDigest !== request.planDigest) {
        return failure(
          `the plan decision (event ${index}) does not name the planDigest of its request`,
          index,
        );
      }
    }
  }
  const grant = planGrantOf(job);
  for (const step of job.steps as JobStep[]) {
    const approval = step.decision?.approval;
    if (approval === undefined) continue;
    if (
      grant === undefined ||
      approval.kind !== 'plan' ||
      approval.planDigest !== grant.planDigest ||
      approval.approver !== grant.approver
    ) {
      return failure(
        `the decision of step ${step.id} names a plan grant the record does not hold`,
        undefined,
        step.id,
      );
    }
  }
  return undefined;
}
