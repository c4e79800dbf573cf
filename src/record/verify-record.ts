/**
 * Verification of a stored job (docs/api.md, "runtime.verifyJob"): the event chain recomputed
 * (durable stores), the events in their places, and every recorded input, input as authorized
 * and result checked against the digests its events carry. The first problem found is reported;
 * nothing here throws.
 */
import { describeThrown } from '../errors/describe-value.js';
import { chainHash, KEYED_PREFIX } from './event-chain.js';
import { KEYED_WITHOUT_KEY } from './missing-key.js';
import { checkFields, provesFields } from '../jobs/record-fields.js';
import { checkApprovalEdit } from './approval-edits.js';
import type { Job, JobEvent, JobStep } from '../jobs/job.js';
import type { ConsumedApproval } from '../jobs/job-store.js';
import { digestRecorded, sameRecordedValue } from '../jobs/recorded-value.js';
import { isPlanEvent } from '../jobs/plan-grant.js';
import { checkPlanWarrant } from './verify-plan-warrant.js';

export type JobVerification =
  | {
      readonly ok: true;
      readonly events: number;
      /**
       * Fields this record cannot prove: it was written before its events carried them (its
       * `job.created` has no `record` digest). Absent when every field is proven.
       */
      readonly unproven?: readonly string[];
    }
  | {
      readonly ok: false;
      readonly reason: string;
      readonly eventIndex?: number;
      readonly stepId?: string;
    };

/** Written by a version before the chain: readable, but nothing to verify it with. */
export const NO_CHAIN = 'no chain: recorded before tamper evidence (schema version 3)';

type Failure = Extract<JobVerification, { ok: false }>;

function broken(reason: string, eventIndex?: number, stepId?: string): Failure {
  const failure: { -readonly [K in keyof Failure]: Failure[K] } = { ok: false, reason };
  if (eventIndex !== undefined) failure.eventIndex = eventIndex;
  if (stepId !== undefined) failure.stepId = stepId;
  return failure;
}

function stepIdOf(event: JobEvent | undefined): string | undefined {
  const stepId = event?.data?.stepId;
  return typeof stepId === 'string' ? stepId : undefined;
}

function checkChain(
  events: readonly JobEvent[],
  hashes: readonly (string | null)[],
  auditKey: string | undefined,
): Failure | undefined {
  if (hashes.every((hash) => hash === null)) return broken(NO_CHAIN);
  if (hashes.length !== events.length)
    return broken(`the chain has ${hashes.length} hashes for ${events.length} events`);
  let previous = '';
  for (let index = 0; index < events.length; index++) {
    const event = events[index] as JobEvent;
    const stored = hashes[index];
    if (stored === null || stored === undefined)
      return broken(`event ${index} has no hash`, index, stepIdOf(event));
    const keyed = stored.startsWith(KEYED_PREFIX);
    if (keyed && auditKey === undefined) {
      return broken(`the chain is ${KEYED_WITHOUT_KEY}`, index);
    }
    if (!keyed && auditKey !== undefined) {
      return broken(
        `event ${index} is not keyed: the chain was written without the audit key, or rewritten`,
        index,
        stepIdOf(event),
      );
    }
    if (chainHash(previous, event, auditKey) !== stored) {
      return broken(
        `event ${index} (${String(event.type)}) does not match its hash: it or an earlier event was changed, removed or reordered`,
        index,
        stepIdOf(event),
      );
    }
    previous = stored;
  }
  return undefined;
}

/** The events that end a job, and the status each leaves it in. */
const ENDS: ReadonlyMap<string, string> = new Map([
  ['job.completed', 'completed'],
  ['job.failed', 'failed'],
  ['job.cancelled', 'cancelled'],
]);

function checkPlaces(job: Job): Failure | undefined {
  const { events } = job;
  for (let index = 0; index < events.length; index++) {
    const event = events[index] as JobEvent;
    if (event.jobId !== job.id || event.id !== `${job.id}:${index + 1}`)
      return broken(`event ${index} is out of place (${String(event.id)})`, index);
  }
  const last = events.at(-1)?.type;
  const ends = ENDS.get(last as string) ?? 'open';
  const status = ENDS.has(`job.${job.status}`) ? job.status : 'open';
  if (ends !== status)
    return broken(`the job is ${String(job.status)} but its last event is ${String(last)}`);
  return undefined;
}

/**
 * The events of one step, by type, with their positions. A plan request (docs/api.md, "Plan
 * warrants") is not a decision on the step that holds it: checkPlanWarrant verifies it.
 */
function eventsOfStep(
  events: readonly JobEvent[],
  stepId: string,
): Map<string, { event: JobEvent; index: number }> {
  const found = new Map<string, { event: JobEvent; index: number }>();
  events.forEach((event, index) => {
    if (event.type === 'approval.requested' && isPlanEvent(event)) return;
    if (event.data?.stepId === stepId && !found.has(event.type))
      found.set(event.type, { event, index });
  });
  return found;
}

/**
 * The effect as authorized (docs/api.md, "Prepared effects"): the decision's `effectDigest` is
 * the one its event carries, and the recorded effect is what that digest was taken of; a step
 * whose event carries none records none.
 */
function checkEffect(
  step: JobStep,
  decisionEvent: { event: JobEvent; index: number } | undefined,
): Failure | undefined {
  const eventDigest = decisionEvent?.event.data?.effectDigest;
  if (step.decision?.effectDigest !== eventDigest)
    return broken(
      `the decision of step ${step.id} does not match its events`,
      decisionEvent?.index,
      step.id,
    );
  const recorded = Object.hasOwn(step, 'effect');
  if (eventDigest === undefined ? recorded : digestRecorded(step.effect) !== eventDigest)
    return broken(
      `the effect of step ${step.id} does not match its digest`,
      decisionEvent?.index,
      step.id,
    );
  return undefined;
}

function checkStep(step: JobStep, events: readonly JobEvent[]): Failure | undefined {
  const found = eventsOfStep(events, step.id);
  // A step awaiting approval: its decision's digest is the one `approval.requested` carries.
  const decisionEvent =
    found.get('capability.started') ??
    found.get('capability.denied') ??
    found.get('capability.failed') ??
    found.get('approval.requested');
  const eventDigest = decisionEvent?.event.data?.inputDigest;
  const failedDigest = found.get('capability.failed')?.event.data?.inputDigest;
  if (failedDigest !== undefined && failedDigest !== eventDigest) {
    return broken(
      `the input digests of step ${step.id} disagree`,
      found.get('capability.failed')?.index,
      step.id,
    );
  }
  const { decision } = step;
  if (decision !== undefined || eventDigest !== undefined) {
    if (decision?.inputDigest !== eventDigest) {
      return broken(
        `the decision of step ${step.id} does not match its events`,
        decisionEvent?.index,
        step.id,
      );
    }
    const resolved = Object.hasOwn(step, 'resolvedInput');
    const authorized = resolved ? step.resolvedInput : step.input;
    if (digestRecorded(authorized) !== eventDigest) {
      return broken(
        `the ${resolved ? 'resolved input' : 'input'} of step ${step.id} does not match its digest`,
        decisionEvent?.index,
        step.id,
      );
    }
    const effectFailure = checkEffect(step, decisionEvent);
    if (effectFailure !== undefined) return effectFailure;
  }
  const completed = found.get('capability.completed');
  if (completed !== undefined || step.status === 'completed') {
    const resultDigest = completed?.event.data?.resultDigest;
    // A step cancelled while it ran keeps the result it still returned, with its event.
    const kept =
      step.status === 'completed' || (step.status === 'cancelled' && completed !== undefined);
    if (completed === undefined || !kept || resultDigest === undefined) {
      return broken(
        `step ${step.id} is ${step.status} but its events say otherwise`,
        completed?.index,
        step.id,
      );
    }
    if (digestRecorded(step.result) !== resultDigest)
      return broken(
        `the result of step ${step.id} does not match its digest`,
        completed.index,
        step.id,
      );
  }
  return undefined;
}

/** An approval with edits checked against its events (record/approval-edits.ts). */
function editOf(step: JobStep, events: readonly JobEvent[]): Failure | undefined {
  const found = checkApprovalEdit(step, events);
  return found === undefined ? undefined : broken(found.reason, found.eventIndex, step.id);
}

function checkJobResult(job: Job): Failure | undefined {
  if (job.status !== 'completed') return undefined;
  const { steps } = job;
  const expected =
    steps.length === 1
      ? steps[0]?.result
      : steps.map((step) => (step.result === undefined ? null : step.result));
  return sameRecordedValue(job.result, expected)
    ? undefined
    : broken("the job's result does not match its steps' results");
}

/**
 * What a record written before its events carried every field cannot prove (its `job.created`
 * has no `record` digest): the chain and the digests still hold for the rest.
 */
export const UNPROVEN_FIELDS: readonly string[] = Object.freeze([
  'caller',
  'metadata',
  'idempotencyKey',
  'planId',
  'job status and error',
  'step ids, order, capabilities and versions',
  'step statuses and errors',
  'decision outcome, reason, authorizer and decidedAt',
]);

/** The fields check (jobs/record-fields.ts) as a verification failure. */
function fieldsOf(job: Job, proves: boolean): Failure | undefined {
  const found = proves ? checkFields(job) : undefined;
  return found === undefined ? undefined : broken(found.reason, found.eventIndex, found.stepId);
}

/** The plan warrant check (verify-plan-warrant.ts) as a verification failure. */
function planWarrantOf(job: Job): Failure | undefined {
  const found = checkPlanWarrant(job);
  return found === undefined ? undefined : broken(found.reason, found.eventIndex, found.stepId);
}

/**
 * Every request the ledger holds as decided is decided in the record too: a record that shows
 * one still waiting was restored from an older copy (docs/api.md, "Approvals").
 */
function checkConsumed(job: Job, consumed: readonly ConsumedApproval[]): Failure | undefined {
  for (const { position, stepId, decision } of consumed) {
    const request = job.events[position];
    const decided = job.events.some(
      (event, index) =>
        index > position &&
        event.data?.stepId === stepId &&
        (event.type === 'approval.granted' ||
          event.type === 'approval.rejected' ||
          event.type === 'capability.failed'),
    );
    if (request?.type !== 'approval.requested' || request.data?.stepId !== stepId || !decided) {
      return broken(
        `the approval request of step ${stepId} was ${decision} (the store's ledger of consumed approvals) but the record does not show it: the job was restored from an older copy`,
        position,
        stepId,
      );
    }
  }
  return undefined;
}

/**
 * Verifies a job as a store returned it. `hashes` are the stored chain (undefined for a store
 * that keeps none: then the digests only); `auditKey` the key the chain must be keyed with;
 * `consumed` the requests the store's ledger holds as decided.
 */
export function verifyRecord(
  job: Job,
  hashes: readonly (string | null)[] | undefined,
  auditKey: string | undefined,
  consumed: readonly ConsumedApproval[] = [],
): JobVerification {
  try {
    const proves = provesFields(job);
    const failure =
      (hashes === undefined ? undefined : checkChain(job.events, hashes, auditKey)) ??
      checkPlaces(job) ??
      job.steps.reduce<Failure | undefined>(
        (first, step) => first ?? checkStep(step, job.events) ?? editOf(step, job.events),
        undefined,
      ) ??
      checkJobResult(job) ??
      fieldsOf(job, proves) ??
      planWarrantOf(job) ??
      checkConsumed(job, consumed);
    if (failure !== undefined) return failure;
    return proves
      ? { ok: true, events: job.events.length }
      : { ok: true, events: job.events.length, unproven: UNPROVEN_FIELDS };
  } catch (error) {
    return broken(`the record cannot be read: ${describeThrown(error)}`);
  }
}
