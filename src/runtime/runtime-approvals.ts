/**
 * The runtime's approval methods (docs/api.md, "Approvals", "Reading and tenants"): the pending
 * requests listed, paged and counted, and a decision taken to the approval desk with what it
 * needs of the runtime (the store, the registered capabilities, the queue a granted job goes
 * back on). Without the `approvals` option there is no desk: nothing is pending, nothing decided.
 */
import type { ApprovalRequest } from '../approvals/approval-request.js';
import type { ApprovalsConfig } from '../approvals/approver-policy.js';
import type { ApprovalDecision } from '../approvals/decision-arguments.js';
import type { PlanApprovalDecision } from '../approvals/plan-request.js';
import { capabilityInventory } from '../capabilities/inventory.js';
import { ErrorCode } from '../errors/error-codes.js';
import { createError } from '../errors/warrant-error.js';
import type { Job } from '../jobs/job.js';
import { ApprovalDesk, type ApprovalHost } from './approval-desk.js';
import {
  approvalPage,
  countApprovals,
  type ApprovalCountFilter,
  type ApprovalListFilter,
  type ApprovalPage,
  type Readable,
} from './approval-pages.js';
import type { DbosQueue } from './dbos-queue.js';
import type { LiveJobs } from './live-jobs.js';
import type { RuntimeStore } from './runtime-store.js';

export interface RuntimeApprovalsOptions {
  readonly approvals: ApprovalsConfig | undefined;
  readonly store: RuntimeStore;
  /** A decision that resumes a job runs as one of the runtime's live jobs (close waits for it). */
  readonly jobs: LiveJobs;
  /** With the queue engine, a granted job runs on a worker (docs/api.md, "Workers"). */
  readonly queue: DbosQueue | undefined;
  readonly mayRead: Readable;
  /** Throws RUNTIME_CLOSED once the runtime is closed. */
  readonly assertOpen: () => void;
}

export class RuntimeApprovals {
  readonly #options: RuntimeApprovalsOptions;
  readonly #desk: ApprovalDesk | undefined;

  constructor(options: RuntimeApprovalsOptions) {
    this.#options = options;
    this.#desk = options.approvals === undefined ? undefined : new ApprovalDesk(options.approvals);
  }

  async list(filter: ApprovalListFilter): Promise<ApprovalRequest[]> {
    return (await this.page(filter)).requests;
  }

  async page(filter: ApprovalListFilter): Promise<ApprovalPage> {
    this.#options.assertOpen();
    return approvalPage(filter, this.#desk, () => this.#host(), this.#options.mayRead);
  }

  async count(filter: ApprovalCountFilter): Promise<number> {
    this.#options.assertOpen();
    return countApprovals(filter, this.#desk, () => this.#host(), this.#options.mayRead);
  }

  async decide(decision: ApprovalDecision | PlanApprovalDecision): Promise<Job> {
    this.#options.assertOpen();
    const desk = this.#desk;
    if (desk === undefined) {
      throw createError(
        Error,
        ErrorCode.APPROVAL_NOT_FOUND,
        'No approval request: this runtime has no approvals option',
      );
    }
    return this.#options.jobs.track(this.#host().then((host) => desk.decide(host, decision)));
  }

  /** What the desk decides with, the store opened first if need be. */
  async #host(): Promise<ApprovalHost> {
    const inventory = capabilityInventory();
    const queue = this.#options.queue;
    return {
      deps: await this.#options.store.dependencies(),
      lookup: (name: string) => inventory.get(name),
      requeue: queue && ((jobId: string, entryId: string) => queue.enqueue(jobId, entryId)),
    };
  }
}
