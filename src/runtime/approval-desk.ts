/**
 * Deciding approval requests and resuming their jobs (docs/api.md, "Approvals"). Every refusal
 * changes nothing. A request is consumed by exactly one decision: the consuming write happens
 * under a per-request claim taken synchronously in this process, after the record was read
 * again and found still waiting, and the store writes it only while the step is still stored
 * waiting (`JobChange.claims`: a conditional update in SQLite and PostgreSQL), so decisions in
 * other processes on the same store lose with APPROVAL_NOT_PENDING. An approved step then runs through the executor's one step path, asked again
 * with `context.approval`, bound to the recorded version and input digest.
 */
import { ErrorCode } from '../errors/error-codes.js';
import { describeThrown } from '../errors/describe-value.js';
import { createError } from '../errors/warrant-error.js';
import { isoNow } from '../jobs/clock.js';
import type { Job, JobStep } from '../jobs/job.js';
import { hasLedger } from '../jobs/store-parts.js';
import {
  endStep,
  expireApproval,
  failJob,
  grantApproval,
  joinChanges,
  rejectApproval,
  type ApprovedEdit,
  type RunningJob,
} from '../jobs/transitions.js';
import type { AdmittedPlan } from '../plan/admission.js';
import {
  isExpired,
  requestDigest,
  requestOf,
  requestPosition,
  requestStepId,
  waitingSteps,
  type ApprovalRequest,
} from '../approvals/approval-request.js';
import { askApprover, type ApprovalsConfig } from '../approvals/approver-policy.js';
import { checkDecisionArguments, type CheckedDecision } from '../approvals/decision-arguments.js';
import { selfApproval, selfApprovalText } from '../approvals/self-approval.js';
import { snapshotCaller } from '../callers/caller-snapshot.js';
import { askWithinTenant } from '../callers/tenant-rules.js';
import { commitChange, resumeApprovedJob, type ExecutorDependencies } from './executor.js';
import { decidedGrant, editOfDecision } from './approval-edits.js';
import { admitRecorded, loadRunningJob, type CapabilityLookup } from './stored-job.js';
import { queueEntryId } from './queued-grants.js';
import { missingCapabilities } from './waiting-jobs.js';
import { decidePlan, type PlanDesk } from './plan-decisions.js';

/** What deciding needs of the runtime. */
export interface ApprovalHost {
  readonly deps: ExecutorDependencies;
  readonly lookup: CapabilityLookup;
  /**
   * With a queue engine: puts a granted job back on the queue (the entry id from
   * `queueEntryId`), to run on a worker, never in the deciding process (docs/api.md, "Workers").
   */
  readonly requeue?: ((jobId: string, entryId: string) => Promise<void>) | undefined;
}

function refusal(code: ErrorCode, message: string): Error {
  return createError(Error, code, message);
}

/** The store refused a claim: another decision (maybe another process) consumed the request. */
function lostClaim(error: unknown): boolean {
  const cause = (error as { cause?: { code?: unknown } } | null)?.cause;
  return cause?.code === ErrorCode.APPROVAL_NOT_PENDING;
}

/** The store refused a decision because the request expired meanwhile (checked in its write). */
function expiredInWrite(error: unknown): boolean {
  const cause = (error as { cause?: { code?: unknown } } | null)?.cause;
  return cause?.code === ErrorCode.APPROVAL_EXPIRED;
}

/**
 * A job granted on a runtime with a queue engine, recorded `queued`, put on the queue: a worker
 * runs the approved step (docs/api.md, "Workers"). Queuing it can fail after the grant is
 * written: the job stays recorded queued and a worker's sweep queues it.
 */
async function requeueGranted(host: ApprovalHost, running: RunningJob): Promise<Job> {
  const { job } = running;
  try {
    await host.requeue?.(job.id, queueEntryId(running.record));
  } catch (error) {
    host.deps.logger.warn(
      `warrant: job ${job.id} is granted and recorded queued, and could not be put on the queue (a worker's sweep queues it): ${describeThrown(error)}`,
      {},
    );
  }
  return job;
}

/** Pending requests and decisions on them, for one runtime. */
export class ApprovalDesk {
  readonly #config: ApprovalsConfig;
  /** Requests being consumed now, `jobId\nstepId`: the synchronous claim of one decision. */
  readonly #claimed = new Set<string>();

  constructor(config: ApprovalsConfig) {
    this.#config = config;
  }

  /** Pending requests, oldest job last; expired ones are failed on the way, not listed. */
  async list(host: ApprovalHost, jobId: string | undefined): Promise<ApprovalRequest[]> {
    const { store } = host.deps;
    let jobs: Job[];
    if (jobId === undefined) {
      jobs = await store.list({ status: 'awaiting_approval' });
    } else {
      const job = await store.get(jobId);
      jobs = job === undefined ? [] : [job];
    }
    return this.requestsOf(host, jobs);
  }

  /**
   * The pending requests of these jobs, in their order (each job's by step); expired ones are
   * failed on the way, not answered.
   */
  async requestsOf(host: ApprovalHost, jobs: readonly Job[]): Promise<ApprovalRequest[]> {
    const { store } = host.deps;
    // A request the store's ledger holds as decided shows pending only in a restored copy.
    const consumed =
      jobs.length === 0 || !hasLedger(store)
        ? undefined
        : new Set(
            (await store.consumedIn(jobs.map((job) => job.id))).map(
              (entry) => `${entry.jobId}\n${entry.position}`,
            ),
          );
    const found: ApprovalRequest[] = [];
    for (const job of jobs) {
      for (const index of waitingSteps(job)) {
        const request = requestOf(job, index);
        if (request === undefined) continue;
        const held = requestStepId(request);
        if (consumed?.has(`${job.id}\n${requestPosition(job, held)}`)) continue;
        if (isExpired(request, Date.now())) {
          await this.#expire(host, request);
          continue;
        }
        found.push(request);
      }
    }
    return found;
  }

  /** Decides one request; resolves with the job at its next stop. */
  async decide(host: ApprovalHost, value: unknown): Promise<Job> {
    const args = checkDecisionArguments(value);
    // A plan request (docs/api.md, "Plan warrants") is decided by plan-decisions.ts.
    if (args.kind === 'plan') return decidePlan(this.#planDesk(), host, args);
    const job = await host.deps.store.get(args.jobId);
    const index = job?.steps.findIndex((step) => step.id === args.stepId) ?? -1;
    if (job === undefined || index < 0) {
      throw refusal(
        ErrorCode.APPROVAL_NOT_FOUND,
        `No approval request for step ${JSON.stringify(args.stepId)} of job ${JSON.stringify(args.jobId)}`,
      );
    }
    const request = requestOf(job, index);
    if (request?.kind !== 'step') throw this.#notPending(args);
    if (isExpired(request, Date.now())) {
      await this.#expire(host, request);
      throw refusal(
        ErrorCode.APPROVAL_EXPIRED,
        `The approval request of step ${JSON.stringify(args.stepId)} expired at ${request.expiresAt}`,
      );
    }
    if (args.inputDigest !== request.inputDigest) {
      throw refusal(
        ErrorCode.APPROVAL_DIGEST_MISMATCH,
        `The digest ${JSON.stringify(args.inputDigest)} is not the one requested for step ${JSON.stringify(args.stepId)}`,
      );
    }
    const self = selfApproval(args.approver, job.caller);
    if (self !== undefined)
      throw refusal(ErrorCode.APPROVAL_SELF_APPROVAL, selfApprovalText(self, job));
    // Never across tenants, whatever the approver policy says (docs/api.md, "Reading and tenants").
    if (
      !(await askWithinTenant(args.approver, job.caller, () =>
        askApprover(this.#config.approver, args.approver, request),
      ))
    ) {
      throw refusal(
        ErrorCode.APPROVAL_FORBIDDEN,
        `Approver ${JSON.stringify(args.approver.id)} may not decide this request`,
      );
    }
    // An approval this runtime could not carry out is refused before anything is consumed: the
    // request stays pending for a runtime that can (docs/api.md, "runtime.decideApproval").
    if (args.decision === 'approve') {
      const needs = missingCapabilities(job, host.lookup);
      if (needs.length > 0)
        throw refusal(
          ErrorCode.APPROVAL_CANNOT_RUN,
          `This runtime cannot run job ${JSON.stringify(args.jobId)}: it does not register ${needs.join(', ')}; approve it from a process that does (the same --module flags as the one that ran it), nothing was decided`,
        );
    }
    // An approver's input is checked before anything is consumed (docs/api.md, "Approve with edits").
    const edit =
      args.input === undefined
        ? undefined
        : await editOfDecision(job, index, args.input, host.lookup);
    const consumed = await this.#consume(host, args, edit);
    if (consumed === 'expired') {
      // The approver policy (or the store) took until past expiresAt: no decision lands late.
      await this.#expire(host, request);
      throw refusal(
        ErrorCode.APPROVAL_EXPIRED,
        `The approval request of step ${JSON.stringify(args.stepId)} expired at ${request.expiresAt}`,
      );
    }
    if (args.decision === 'reject') return consumed.running.job;
    if (host.requeue !== undefined) return requeueGranted(host, consumed.running);
    return this.#resume(host, consumed.running, consumed.index, args, consumed.grantedAt, edit);
  }

  #notPending(args: CheckedDecision): Error {
    return refusal(
      ErrorCode.APPROVAL_NOT_PENDING,
      `Step ${JSON.stringify(args.stepId)} of job ${JSON.stringify(args.jobId)} does not await approval`,
    );
  }

  /** Runs `write` holding the claim on the request, or reports that another decision holds it. */
  async #withClaim<T>(
    jobId: string,
    stepId: string,
    write: () => Promise<T>,
  ): Promise<T | undefined> {
    const key = `${jobId}\n${stepId}`;
    if (this.#claimed.has(key)) return undefined;
    this.#claimed.add(key);
    try {
      return await write();
    } finally {
      this.#claimed.delete(key);
    }
  }

  /** What a plan decision borrows of this desk (plan-decisions.ts). */
  #planDesk(): PlanDesk {
    return {
      config: this.#config,
      withClaim: (jobId, stepId, write) => this.#withClaim(jobId, stepId, write),
      expire: (host, request) => this.#expire(host, request),
      requeue: (host, running) => requeueGranted(host, running),
    };
  }

  /** Fails an expired request's step and job, unless another decision consumed it first. */
  async #expire(host: ApprovalHost, request: ApprovalRequest): Promise<void> {
    const held = requestStepId(request);
    await this.#withClaim(request.jobId, held, async () => {
      const running = await loadRunningJob(host.deps, request.jobId);
      if (running === undefined) return;
      const index = running.record.steps.findIndex((step) => step.id === held);
      const current = requestOf(running.record, index);
      if (current === undefined || requestDigest(current) !== requestDigest(request)) return;
      try {
        await commitChange(running, expireApproval(running, index, isoNow()), host.deps);
      } catch (error) {
        // Another process decided it first: nothing to expire.
        if (!lostClaim(error)) throw error;
      }
    });
  }

  /** The one write that consumes the request: granted, or rejected (the job fails). */
  async #consume(
    host: ApprovalHost,
    args: CheckedDecision,
    edit: ApprovedEdit | undefined,
  ): Promise<{ running: RunningJob; index: number; grantedAt: string } | 'expired'> {
    const consumed = await this.#withClaim(args.jobId, args.stepId, async () => {
      const running = await loadRunningJob(host.deps, args.jobId);
      const index = running?.record.steps.findIndex((step) => step.id === args.stepId) ?? -1;
      const request = running === undefined ? undefined : requestOf(running.record, index);
      if (running === undefined || request?.kind !== 'step') return undefined;
      if (request.inputDigest !== args.inputDigest) return undefined;
      // Checked again as the decision is written (the store checks it once more in its write).
      if (isExpired(request, Date.now())) return 'expired' as const;
      const at = isoNow();
      const change =
        args.decision === 'approve'
          ? grantApproval(
              running,
              index,
              at,
              args.approver.id,
              args.comment,
              host.requeue !== undefined,
              edit,
            )
          : rejectApproval(running, index, at, args.approver.id, args.comment);
      try {
        await commitChange(running, change, host.deps);
      } catch (error) {
        if (lostClaim(error)) return undefined;
        if (expiredInWrite(error)) return 'expired' as const;
        throw error;
      }
      return { running, index, grantedAt: at };
    });
    if (consumed === undefined) throw this.#notPending(args);
    return consumed;
  }

  /** Runs the approved step, bound to the request, and the rest of the plan. */
  async #resume(
    host: ApprovalHost,
    running: RunningJob,
    index: number,
    args: CheckedDecision,
    grantedAt: string,
    edit: ApprovedEdit | undefined,
  ): Promise<Job> {
    const { record } = running;
    const step = record.steps[index] as JobStep;
    const capabilityVersion = step.decision?.capabilityVersion as string;
    let plan: AdmittedPlan;
    try {
      const registered = host.lookup(step.capability);
      if (registered === undefined)
        throw new Error(`Capability ${step.capability} is no longer registered`);
      plan = admitRecorded(record, host.lookup);
    } catch (error) {
      const at = isoNow();
      const message = `The approved step can no longer run: ${describeThrown(error)}`;
      const failed = endStep(running, index, at, { status: 'failed', error: message });
      await commitChange(running, joinChanges(failed, failJob(running, at, message)), host.deps);
      return running.job;
    }
    const results = record.steps.slice(0, index).map((done) => done.result);
    const caller = snapshotCaller(record.caller);
    const grant = decidedGrant(args.approver, grantedAt, args.inputDigest, edit);
    return resumeApprovedJob(running, plan, index, results, caller, host.deps, {
      grant,
      capabilityVersion,
      // The step runs with a copy of the approved input as recorded, as after a restart.
      ...(edit === undefined ? {} : { input: structuredClone(edit.recorded.value) }),
    });
  }
}
