/**
 * Taking up the jobs of owners that are gone (docs/api.md, "Recovery"): at open, on a worker's
 * sweep, every second on a store that tells gone owners while it runs (PostgreSQL), and the jobs
 * of this owner whose last write was lost. Each is claimed by a conditional write in the store,
 * gets `job.recovered`, and what its record says happens next (recovery.ts); the ones with steps
 * left are scheduled in this runtime's live jobs and run through the executor.
 */
import type { ExecutionLogger } from '../capabilities/capability.js';
import { capabilityInventory } from '../capabilities/inventory.js';
import { describeThrown } from '../errors/describe-value.js';
import type { JobStore } from '../jobs/job-store.js';
import { hasCancels, isOwned } from '../jobs/store-parts.js';
import type { CancelRequest } from '../jobs/transitions.js';
import { resumeRecoveredJob, runQueuedJob, type ExecutorDependencies } from './executor.js';
import { liveJob, type LiveJobs } from './live-jobs.js';
import { recoverable, recoverStoredJob, type Recovery } from './recovery.js';
import { isOwnerLost, type StrandedJobs } from './stranded-jobs.js';

/**
 * How often a runtime with `recover: true`, on a store that tells gone owners while it runs
 * (PostgreSQL), looks for them (docs/api.md, "Recovery"; docs/decisions.md, "A lost owner lock").
 */
const OWNER_PROBE_MS = 1_000;

/** What taking up jobs needs of its runtime. */
export interface OrphanHost {
  readonly jobs: LiveJobs;
  readonly stranded: StrandedJobs;
  readonly logger: ExecutionLogger;
  /** The open store, if any. */
  readonly store: () => JobStore | undefined;
  readonly depsOn: (store: JobStore) => ExecutorDependencies;
  /** True once the runtime closes: nothing is taken up then. */
  readonly closed: () => boolean;
}

export class Orphans {
  readonly #host: OrphanHost;
  #probe: ReturnType<typeof setInterval> | undefined;
  /** The look under way, if one is. */
  #probing: Promise<void> | undefined;
  /** The last look failed (and was reported). */
  #probeFailed = false;
  /** The id of the worker this runtime runs, named in `job.recovered { worker }`. */
  worker: string | undefined;

  constructor(host: OrphanHost) {
    this.#host = host;
  }

  /**
   * Takes up the jobs of owners that are gone (docs/api.md, "Recovery"): each is claimed by a
   * conditional write in the store, gets `job.recovered`, and what its record says happens next
   * (recovery.ts); the ones with steps left run through this runtime's queue and executor, in
   * the order they were created. A job that cannot be taken up is reported on the logger and
   * left to its record.
   */
  async recover(store: JobStore): Promise<void> {
    if (!isOwned(store)) return;
    const inventory = capabilityInventory();
    const lookup = (name: string) => inventory.get(name);
    // Only the jobs this runtime can admit: the others wait for a runtime that can
    // (docs/api.md, "Recovery").
    const refused: string[] = [];
    const ids = await store.claimOrphans((record) => {
      if (recoverable(record, lookup)) return true;
      refused.push(record.id);
      return false;
    });
    // Except a refused job whose cancel is recorded: ending it runs nothing, so any runtime
    // takes it (docs/decisions.md, "Which commands recover").
    if (refused.length > 0 && hasCancels(store)) {
      const ended = new Set((await store.cancelRequests(refused)).map((request) => request.jobId));
      if (ended.size > 0)
        ids.push(...(await store.claimOrphans((record) => ended.has(record.id), [...ended])));
    }
    if (ids.length === 0) return;
    const deps = this.#host.depsOn(store);
    // The owner that took them (read after the claim: a lost owner lock replaces it).
    const host = { deps, lookup, by: store.owner, worker: this.worker };
    const cancels = hasCancels(store) ? await store.cancelRequests(ids) : [];
    for (const id of ids) {
      const stored = cancels.find((request) => request.jobId === id);
      const cancel: CancelRequest | undefined =
        stored === undefined ? undefined : { by: stored.by, reason: stored.reason };
      let recovery: Recovery | undefined;
      try {
        recovery = await recoverStoredJob(host, id, cancel);
      } catch (error) {
        this.#host.logger.warn(
          `warrant: recovering job ${id} failed: ${describeThrown(error)}`,
          {},
        );
        // Taken, the job is this owner's now: it is settled once the store answers (unless this
        // owner was lost meanwhile: then it is recovery's again).
        if (!isOwnerLost(error)) this.#host.stranded.keep(id);
        continue;
      }
      if (recovery !== undefined && recovery.kind !== 'settled') this.#run(recovery, deps);
    }
  }

  /**
   * Looks for gone owners every OWNER_PROBE_MS while the runtime is open, and takes up the jobs
   * of theirs it can admit (docs/api.md, "Recovery"): a process that ended, or lost its owner
   * lock, after this runtime opened (this runtime's own lost owners included). One look at a
   * time; a failing look is reported once, until one succeeds.
   */
  probe(store: JobStore): void {
    if (this.#probe !== undefined || this.#host.closed()) return;
    this.#probe = setInterval(() => {
      if (this.#probing !== undefined || this.#host.closed()) return;
      this.#probing = this.recover(store)
        .then(
          () => {
            this.#probeFailed = false;
          },
          (error: unknown) => {
            if (!this.#probeFailed)
              this.#host.logger.warn(
                `warrant: looking for gone owners failed (tried again every second): ${describeThrown(error)}`,
                {},
              );
            this.#probeFailed = true;
          },
        )
        .finally(() => {
          this.#probing = undefined;
        });
    }, OWNER_PROBE_MS);
    this.#probe.unref();
  }

  /**
   * Records a job of this owner whose last write was lost as recovery would once its owner is
   * gone (recovery.ts): the record decides. Rejects while the store still fails (tried again).
   */
  async settleStranded(jobId: string): Promise<void> {
    const store = this.#host.store();
    if (store === undefined || !isOwned(store)) return;
    const { owner } = store;
    const deps = this.#host.depsOn(store);
    const inventory = capabilityInventory();
    const host = {
      deps,
      lookup: (name: string) => inventory.get(name),
      by: owner,
      worker: this.worker,
    };
    const [stored] = hasCancels(store) ? await store.cancelRequests([jobId]) : [];
    const cancel: CancelRequest | undefined =
      stored === undefined ? undefined : { by: stored.by, reason: stored.reason };
    const recovery = await recoverStoredJob(host, jobId, cancel);
    if (recovery !== undefined && recovery.kind !== 'settled') this.#run(recovery, deps);
  }

  /** Queues a recovered job whose steps go on; it counts as live (cancellable) until it ends. */
  #run(recovery: Exclude<Recovery, { kind: 'settled' }>, deps: ExecutorDependencies) {
    // Closing already: the job stays this owner's until the store closes, then the next owner's.
    if (this.#host.closed()) return;
    const { running, plan, caller } = recovery;
    const jobId = running.job.id;
    // Still queued here as a lost owner's job (docs/api.md, "Recovery"): this run replaces it in
    // the queue, so that one never starts.
    const stale = this.#host.jobs.of(jobId);
    if (stale?.queued !== undefined) this.#host.jobs.leave(stale);
    const live = liveJob(jobId);
    if (recovery.kind === 'queued') live.queued = { running, plan, caller };
    this.#host.jobs.hold();
    this.#host.jobs.schedule(live, () =>
      recovery.kind === 'queued'
        ? runQueuedJob(running, plan, caller, deps, live)
        : resumeRecoveredJob(
            running,
            plan,
            recovery.from,
            recovery.results,
            caller,
            deps,
            live,
            recovery.approval,
          ),
    );
  }

  /** No look starts from now on; resolves once the one under way has ended. */
  async stop(): Promise<void> {
    clearInterval(this.#probe);
    this.#probe = undefined;
    await this.#probing;
  }
}
