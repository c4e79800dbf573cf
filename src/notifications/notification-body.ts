/**
 * What a notification says (docs/api.md, "Notifications"): `{ type, jobId, stepId?, at, data }`
 * with ids and digests only (never an input, a result, an error text or a caller beyond its
 * id), or for `format: 'slack'` a Slack-compatible `{ text }`.
 */
import { randomUUID } from 'node:crypto';
import { approveCommandLine, escapeOf, UNSAFE_CHARS } from '../approvals/approve-command.js';
import type { Job, JobEvent } from '../jobs/job.js';
import type { OutboxEntry, OutboxWriter } from '../jobs/job-store.js';
import type { CheckedDestination, NotificationsConfig } from './notification-options.js';

/** The body of the standard format, before it is encoded. */
export interface NotificationBody {
  readonly type: string;
  readonly jobId: string;
  readonly stepId?: string;
  /** ISO 8601: the event's time. */
  readonly at: string;
  readonly data: Readonly<Record<string, unknown>>;
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** The fields of an event's data a notification may carry, by type. */
const SAFE_FIELDS: Readonly<Record<string, readonly string[]>> = {
  'approval.requested': [
    'capability',
    'capabilityVersion',
    'risk',
    'inputDigest',
    'effectDigest',
    'expiresAt',
    // An actor acted for the subject (docs/api.md, "Callers: acting for someone"): both ids.
    'actor',
    'onBehalfOf',
  ],
  // An approver's edit: the flag and both digests (docs/api.md, "Approve with edits").
  'approval.granted': ['approver', 'edited', 'inputDigest', 'proposedDigest', 'kind', 'planDigest'],
  'approval.rejected': ['approver', 'kind', 'planDigest'],
  'job.completed': ['stepCount'],
  'job.failed': [],
  'job.cancelled': ['by'],
  'step.interrupted': ['capability'],
};

/**
 * The summary of a plan request (docs/api.md, "Plan warrants"): its digest and each step's id,
 * capability, version, preview outcome and input digest (ids and digests only: no input, no
 * bounds, no reason).
 */
function planSummary(source: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const steps = Array.isArray(source.steps) ? (source.steps as unknown[]) : [];
  return {
    kind: 'plan',
    planDigest: text(source.planDigest) ?? '',
    stepCount: steps.length,
    steps: steps.map((step) => {
      const fields = (step ?? {}) as Readonly<Record<string, unknown>>;
      const summary: Record<string, unknown> = {};
      for (const key of ['id', 'capability', 'capabilityVersion', 'outcome', 'inputDigest']) {
        const value = text(fields[key]);
        if (value !== undefined) summary[key] = value;
      }
      return summary;
    }),
  };
}

/** True for the event of a plan request (docs/api.md, "Plan warrants"). */
function isPlanRequest(event: JobEvent): boolean {
  return event.type === 'approval.requested' && event.data?.kind === 'plan';
}

/** The step of the job's that failed or stopped it, for `job.failed`. */
function failedStep(job: Job): string | undefined {
  for (const step of job.steps) if (step.status === 'failed') return step.id;
  return undefined;
}

/** How a destination shows the way to decide an approval request (its `publicUrl`, `approveFlags`). */
export interface DecisionPointer {
  readonly publicUrl?: string | undefined;
  readonly approveFlags?: readonly string[];
}

/** The console's link to the job at `publicUrl`. */
function consoleLink(publicUrl: string, jobId: string): string {
  return `${publicUrl.replace(/\/?$/, '/')}#/jobs/${encodeURIComponent(jobId)}`;
}

export function notificationBody(
  job: Job,
  event: JobEvent,
  pointer: DecisionPointer = {},
): NotificationBody {
  const source = event.data ?? {};
  const data: Record<string, unknown> = {};
  for (const field of SAFE_FIELDS[event.type] ?? []) {
    const value = source[field];
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
      data[field] = value;
  }
  const caller = job.caller?.id;
  if (caller !== undefined) data.callerId = caller;
  data.status = job.status;
  data.eventId = event.id;
  const plan = isPlanRequest(event);
  // A plan request is the whole plan's: it names no step, it summarizes them all.
  const stepId = plan
    ? undefined
    : (text(source.stepId) ?? (event.type === 'job.failed' ? failedStep(job) : undefined));
  if (plan) Object.assign(data, planSummary(source));
  // How to decide it, as a Slack message says: the console link, or the approve command with the
  // flags the decision needs (docs/api.md, "Notifications").
  if (event.type === 'approval.requested' && (plan || stepId !== undefined)) {
    if (pointer.publicUrl !== undefined) data.consoleUrl = consoleLink(pointer.publicUrl, job.id);
    else
      data.approveCommand = approveCommandLine(
        job.id,
        plan ? undefined : stepId,
        text(plan ? source.planDigest : source.inputDigest) ?? '',
        pointer.approveFlags ?? [],
      );
  }
  return stepId === undefined
    ? { type: event.type, jobId: job.id, at: event.timestamp, data }
    : { type: event.type, jobId: job.id, stepId, at: event.timestamp, data };
}

/**
 * A value as Slack shows it, whatever it holds: `&`, `<` and `>` escaped as Slack documents
 * (`&amp;`, `&lt;`, `&gt;`), so it can open no mention and no link, and every character of
 * UNSAFE_CHARS shown as an escape, so it can start no line of its own.
 */
function slackText(value: string): string {
  return value
    .replace(UNSAFE_CHARS, escapeOf)
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;');
}

/**
 * A Slack-compatible message: the job, the step, the capability, the reason, and the exact
 * command that approves the step, or a link to the job in the console (`publicUrl`). Every
 * value in it goes through slackText: a planner's step id or a policy's reason cannot mention
 * anyone, link anywhere or add a line.
 */
export function slackMessage(
  job: Job,
  event: JobEvent,
  publicUrl: string | undefined,
  approveFlags: readonly string[] = [],
): { text: string } {
  const source = event.data ?? {};
  const plan = isPlanRequest(event);
  const stepId = plan
    ? undefined
    : (text(source.stepId) ?? (event.type === 'job.failed' ? failedStep(job) : undefined));
  const step = job.steps.find((candidate) => candidate.id === stepId);
  const capability = text(source.capability) ?? step?.capability;
  const lines = [`Warrant: ${slackText(event.type)} for job ${slackText(job.id)}`];
  if (plan) {
    // Every step of the plan with its preview (docs/api.md, "Plan warrants").
    const { steps } = planSummary(source) as { steps: Record<string, string>[] };
    lines.push(`Plan of ${steps.length} step${steps.length === 1 ? '' : 's'}:`);
    for (const planned of steps)
      lines.push(
        `- ${slackText(planned.id ?? '')} (${slackText(planned.capability ?? '')}): ${slackText(planned.outcome ?? '')}`,
      );
  } else if (stepId !== undefined)
    lines.push(
      `Step ${slackText(stepId)}${capability === undefined ? '' : ` (${slackText(capability)})`}`,
    );
  const reason = event.type === 'approval.requested' ? text(source.reason) : undefined;
  if (reason !== undefined) lines.push(`Reason: ${slackText(reason)}`);
  // Who proposed it for whom, as the console says it (docs/api.md, "Callers: acting for someone").
  const actor = event.type === 'approval.requested' ? text(source.actor) : undefined;
  const subject = text(source.onBehalfOf);
  if (actor !== undefined && subject !== undefined)
    lines.push(`By: ${slackText(actor)} for ${slackText(subject)}`);
  const link = publicUrl === undefined ? undefined : consoleLink(publicUrl, job.id);
  if (link !== undefined) lines.push(`Open: ${slackText(link)}`);
  else if (event.type === 'approval.requested' && (plan || stepId !== undefined)) {
    const digest = text(plan ? source.planDigest : source.inputDigest) ?? '';
    const command = approveCommandLine(job.id, plan ? undefined : stepId, digest, approveFlags);
    lines.push(`Approve: ${slackText(command)}`);
  }
  return { text: lines.join('\n') };
}

function bodyFor(destination: CheckedDestination, job: Job, event: JobEvent): string {
  return JSON.stringify(
    destination.format === 'slack'
      ? slackMessage(job, event, destination.publicUrl, destination.approveFlags)
      : notificationBody(job, event, destination),
  );
}

/**
 * The writer a store's outbox is given: the entries each change's events cause, one per event
 * and destination that wants it. `wake` is called once they are written.
 */
export function outboxWriter(config: NotificationsConfig, wake: () => void): OutboxWriter {
  const { destinations } = config;
  return {
    maxPending: config.delivery.maxPending,
    written: wake,
    entries(job, events) {
      let entries: OutboxEntry[] | undefined;
      for (const event of events) {
        for (const destination of destinations) {
          if (!destination.events.has(event.type)) continue;
          (entries ??= []).push({
            id: `msg_${randomUUID().replaceAll('-', '')}`,
            destination: destination.label,
            jobId: job.id,
            type: event.type,
            at: event.timestamp,
            body: bodyFor(destination, job, event),
          });
        }
      }
      return entries;
    },
  };
}
