import type { Job, JobEvent, JobListFilter } from './job.js';

/**
 * One change of a job, as a transition (transitions.ts) made it: the job's own fields (status,
 * times, result, error) changed, and so did the steps named here; `events` were appended, in
 * order, and are the job's last events. A store writes exactly this, nothing it re-derives.
 */
export interface JobChange {
  /** Indexes of the steps this change wrote, ascending. */
  readonly steps: readonly number[];
  /** The step (one of `steps`) whose decision, and resolved input, this change recorded. */
  readonly decided?: number;
  /**
   * The step whose approval request this change consumes (a decision on it, or its expiry). A
   * store writes such a change only while that step is still stored `awaiting_approval`, checked
   * and set in one atomic step (a conditional update in SQL); otherwise it writes nothing and
   * rejects with APPROVAL_NOT_PENDING. So of concurrent decisions, in any number of processes
   * sharing the store, exactly one is written (docs/decisions.md, "Approvals").
   */
  readonly claims?: number;
  readonly events: readonly JobEvent[];
}

/** A request the store's ledger of consumed approvals holds as decided (docs/api.md, "Approvals"). */
export interface ConsumedApproval {
  /** Index of the request's `approval.requested` event in the job's events. */
  readonly position: number;
  readonly stepId: string;
  /** `granted`, `rejected` or `expired`. */
  readonly decision: string;
}

/** A request the ledger holds as decided: its job and the position of its event. */
export interface ConsumedRequest {
  readonly jobId: string;
  readonly position: number;
}

/**
 * A cancel written to the store (docs/api.md, "runtime.cancelJob"), so that the process running
 * the job sees it (it polls for the jobs it runs). `by` is the cancelling caller's id.
 */
export interface StoredCancel {
  readonly jobId: string;
  readonly by?: string;
  readonly reason?: string;
  /** ISO 8601. */
  readonly at: string;
}

/**
 * A claim of an idempotency key (docs/api.md, "Idempotency"): `key` within `scope` (the caller's
 * id and tenant) for the job `jobId`, submitted with the plan digest `digest`, until `expiresAt`
 * (ms since the epoch). `at` is now, in the same unit.
 */
export interface IdempotencyClaim {
  readonly scope: string;
  readonly key: string;
  readonly jobId: string;
  readonly digest: string;
  readonly at: number;
  readonly expiresAt: number;
}

/** The live claim that holds a key: its job and plan digest. */
export interface IdempotencyHolder {
  readonly jobId: string;
  readonly digest: string;
}

/**
 * A job awaiting approval with its place in the store's order of such jobs (`listAwaiting`):
 * `position` is opaque outside the store that wrote it (docs/api.md, "Reading and tenants":
 * `runtime.approvalPage`).
 */
export interface AwaitingJob {
  readonly job: Job;
  readonly position: string;
}

/**
 * What a step takes of one limit (docs/api.md, "Limits"): `amount` (1, or the capability's
 * `cost`) counted under `name` and `key` (the caller, the tenant, or all), at most `max` in any
 * `windowMs` ending now.
 */
export interface LimitTake {
  readonly name: string;
  /** JSON: `[]` (global), `[tenant]` or `[tenant, callerId]` (null where there is none). */
  readonly key: string;
  readonly max: number;
  readonly windowMs: number;
  readonly amount: number;
}

/**
 * How `takeLimits` answered: every take counted, or none, because the take at `index` would
 * have brought its counter to `count` (over its `max`).
 */
export type LimitVerdict =
  | { readonly taken: true }
  | { readonly taken: false; readonly index: number; readonly count: number };

/** A counter as the store holds it: what was taken under `name` and `key` in its last window. */
export interface LimitCounter {
  readonly name: string;
  readonly key: string;
  /** The sum of the amounts taken in the window ending now. */
  readonly used: number;
  /** The window the counter was last taken with (ms). */
  readonly windowMs: number;
}

/** A stored job and its event chain (record/event-chain.ts). */
export interface RecordedChain {
  readonly job: Job;
  readonly hashes: readonly (string | null)[];
  /** The job's requests the store's ledger holds as consumed (stores that keep one). */
  readonly consumed?: readonly ConsumedApproval[];
}

/*
 * What a durable store's checkpoints hold, as the store returns them (docs/api.md, "Store
 * checkpoints"); how they are sealed and checked is the record's (src/record/checkpoint.ts).
 */

/** What a checkpoint seals and chains; `hash` is computed over the other fields. */
export interface Checkpoint {
  /** 1, 2, 3, ... in the order they were written. */
  readonly seq: number;
  /** The hash of checkpoint `seq - 1`; '' for the first. */
  readonly previous: string;
  /** The Merkle root of its entries. */
  readonly root: string;
  /** How many events it sealed that no earlier checkpoint had sealed. */
  readonly events: number;
  /** When it was written (ISO 8601). */
  readonly at: string;
  readonly hash: string;
}

/** One job's sealed state: its first `events` events, the last of them with chain hash `hash`. */
export interface CheckpointEntry {
  readonly jobId: string;
  readonly events: number;
  readonly hash: string;
}

/** One consumed approval as the ledger holds it (stores/shared/approval-ledger.ts). */
export interface LedgerEntry {
  readonly jobId: string;
  /** The index of the request's `approval.requested` event in the job's events. */
  readonly position: number;
  readonly stepId: string;
  readonly inputDigest: string | null;
  /** The chain hash of the request's event, as stored when it was consumed. */
  readonly requestHash: string | null;
  /** `granted`, `rejected` or `expired`. */
  readonly decision: string;
  /** When it was consumed (ISO 8601). */
  readonly at: string;
}

/** A ledger entry's leaf, as a checkpoint seals it: 'sha256:' + hex. */
export interface ApprovalLeaf {
  readonly jobId: string;
  readonly position: number;
  readonly hash: string;
}

/** A ledger entry's leaf with the checkpoint that sealed it. */
export interface SealedApproval extends ApprovalLeaf {
  readonly checkpoint: number;
}

/** An entry with the checkpoint that sealed it. */
export interface SealedEntry extends CheckpointEntry {
  readonly checkpoint: number;
}

/** A durable store's checkpoints, read together for `verifyStore` (record/checkpoint.ts). */
export interface StoreSeals {
  /** Every checkpoint, by seq. */
  readonly checkpoints: readonly Checkpoint[];
  /** Every entry of every checkpoint. */
  readonly entries: readonly SealedEntry[];
  /** The id of every job stored. */
  readonly jobIds: readonly string[];
  /** Jobs with events committed since the last checkpoint. */
  readonly unsealed: number;
  /** The leaf of every ledger entry a checkpoint sealed (stores that keep a ledger). */
  readonly approvals?: readonly SealedApproval[];
  /** Every entry of the ledger of consumed approvals (stores that keep one). */
  readonly ledger?: readonly LedgerEntry[];
}

/** The latest checkpoint that sealed a job, with what it sealed (for its Merkle proof). */
export interface JobSeal {
  readonly checkpoint: Checkpoint;
  readonly entries: readonly SealedEntry[];
  /** The ledger leaves the checkpoint sealed too. */
  readonly approvals?: readonly SealedApproval[];
}

/** What a store can do now (`AvailabilityStore.availability`). */
export type StoreAvailability =
  | { readonly writable: true }
  | {
      readonly writable: false;
      /** Why, in one sentence that names no database, host or credential. */
      readonly reason: string;
    };

/**
 * Where jobs live: the core every store has (docs/api.md, "Stores"). The transitions change the
 * job and report every change; a durable store persists it before the call returns (or its
 * promise settles), so a crash leaves the last reported state on disk. Methods may be
 * synchronous or return promises: the executor awaits only when a promise comes back.
 *
 * What a store can do beyond the core it declares by the named parts below, each all of its
 * members or none (store-parts.ts tells which a store has); the runtime uses a part only where the
 * store has all of it, and does without it otherwise.
 */
export interface JobStore {
  /**
   * Persists a newly created job. The runtime starts a job as it creates it, so the job usually
   * arrives `executing`, with its `job.created` and `execution.started` events.
   */
  create(job: Job): void | Promise<void>;
  /** Persists one change of a job already created. */
  update(job: Job, change: JobChange): void | Promise<void>;
  /** A snapshot: changing what it returns changes nothing stored (docs/api.md, "runtime.getJob"). */
  get(id: string): Job | undefined | Promise<Job | undefined>;
  /** Newest first, filtered, at most `limit`. */
  list(filter: JobListFilter): Job[] | Promise<Job[]>;
  close(): void | Promise<void>;
}

/**
 * Jobs awaiting approval in an order the store keeps (an index, in SQL): a page of approvals
 * reads one page of rows. Without it the runtime reads every awaiting job and pages them itself.
 */
export interface AwaitingIndex {
  /**
   * At most `limit` jobs `awaiting_approval`, oldest first in an order the store keeps stable,
   * after the job at `after` (a `position` it answered before; undefined: from the start), each
   * with its position.
   * @throws TypeError (JOB_FILTER_INVALID) for a position this store did not write.
   */
  listAwaiting(
    after: string | undefined,
    limit: number,
  ): readonly AwaitingJob[] | Promise<readonly AwaitingJob[]>;
}

/** The job's event chain as stored, for `verifyJob`. Stores that keep no chain leave it out. */
export interface ChainStore {
  /**
   * The job with the chain hash stored with each of its events (NULL for events recorded before
   * the chain), read together.
   */
  readChain(id: string): RecordedChain | undefined | Promise<RecordedChain | undefined>;
}

/**
 * Checkpoints of the chain (docs/api.md, "Store checkpoints"), for `sealStore` and
 * `verifyStore`. Stores that keep none (memory) leave them out.
 */
export interface CheckpointStore extends ChainStore {
  /**
   * Writes a checkpoint of the events committed since the last one, now; resolves the checkpoint
   * written, or undefined when nothing was unsealed.
   */
  seal(): Promise<Checkpoint | undefined>;
  /** The checkpoints and what they sealed, for `verifyStore`. */
  readSeals(): StoreSeals | Promise<StoreSeals>;
  /** The latest checkpoint entry of a job, and its checkpoint with that checkpoint's entries. */
  readSeal(jobId: string): JobSeal | undefined | Promise<JobSeal | undefined>;
}

/** An entry of a checkpoint as a scan reads it: with whether its job was stored then. */
export interface ScannedEntry extends SealedEntry {
  readonly stored: boolean;
}

/** One job as a scan reads it: its record with its chain, and what checkpoints sealed of it. */
export interface ScannedJob {
  readonly id: string;
  /**
   * The record with its chain hashes and consumed requests, read together; undefined when the
   * record cannot be read (`unreadable`), or the job is gone since the scan began.
   */
  readonly chain: RecordedChain | undefined;
  /** Why the record cannot be read: the message of its JOB_RECORD_UNREADABLE error. */
  readonly unreadable?: string;
  /** The entries checkpoints sealed of this job, by checkpoint. */
  readonly sealed: readonly SealedEntry[];
}

/**
 * A durable store read a page at a time for `verifyStore` (docs/api.md, "Stores"): the
 * checkpoints and the ledger are read whole, the jobs and the checkpoints' entries in pages, so
 * memory stays bounded by a page whatever the number of jobs.
 */
export interface StoreScan {
  /** Every checkpoint, by seq, when the scan began. */
  readonly checkpoints: readonly Checkpoint[];
  /** Jobs stored when the scan began: `chains()` reads those. */
  readonly jobs: number;
  /** Jobs with events committed since the last checkpoint. */
  readonly unsealed: number;
  /** The leaf of every ledger entry a checkpoint sealed (stores that keep a ledger). */
  readonly approvals?: readonly SealedApproval[];
  /** Every entry of the ledger of consumed approvals (stores that keep one). */
  readonly ledger?: readonly LedgerEntry[];
  /** The jobs `jobs` counts, oldest first, a page at a time; each page is one snapshot. */
  chains(): AsyncIterable<readonly ScannedJob[]> | Iterable<readonly ScannedJob[]>;
  /**
   * Every entry of every checkpoint, by checkpoint then job id, a page at a time; read after
   * `chains()`, so a job gone meanwhile is found here.
   */
  entries(): AsyncIterable<readonly ScannedEntry[]> | Iterable<readonly ScannedEntry[]>;
}

/** Checkpoints read in pages (docs/api.md, "Stores"): `verifyStore` in bounded memory. */
export interface SealScanStore extends CheckpointStore {
  /** Begins a scan; `page` bounds the jobs (and entries, times ten) read at a time. */
  scanSeals(page?: number): StoreScan | Promise<StoreScan>;
}

/** The ledger of consumed approvals (docs/api.md, "Approvals"). */
export interface ApprovalLedger {
  /**
   * The approval requests of these jobs that the ledger holds as consumed (a restored copy shows
   * them pending): `listApprovals` leaves them out.
   */
  consumedIn(jobIds: readonly string[]): ConsumedRequest[] | Promise<ConsumedRequest[]>;
}

/**
 * Cancels written to the store, so that the process running a job sees them (it polls for the
 * jobs it runs). Stores shared by several processes have it; one process needs none.
 */
export interface CancelStore {
  /** Writes a cancel request for a job (the first one wins; later ones change nothing). */
  requestCancel(cancel: StoredCancel): void | Promise<void>;
  /** The cancel requests written for any of these jobs. */
  cancelRequests(jobIds: readonly string[]): StoredCancel[] | Promise<StoredCancel[]>;
}

/** Idempotency keys claimed in the store (docs/api.md, "Idempotency"). */
export interface IdempotencyStore {
  /**
   * Claims an idempotency key, atomically (a conditional insert in SQL, so across processes on
   * one store exactly one claim of a key wins): resolves undefined when this claim now holds it
   * (no claim, or only an expired one), else the live claim that holds it, unchanged.
   */
  claimIdempotency(
    claim: IdempotencyClaim,
  ): IdempotencyHolder | undefined | Promise<IdempotencyHolder | undefined>;
}

/**
 * A store shared by several processes, each an owner (docs/api.md, "Recovery"): each queued or
 * executing job it writes is recorded as this owner's, and the jobs of gone owners are taken up.
 */
export interface OwnedStore {
  /** This store's owner id. */
  readonly owner: string;
  /**
   * Takes the queued and executing jobs whose owner is gone, each by a conditional write (so of
   * processes recovering together exactly one takes a job), and resolves their ids, oldest
   * first; with `admits`, only the jobs it answers true for (the others stay the gone owner's).
   * A store may leave the jobs `admits` refused unread for a while (PostgreSQL: 30 s); the ids in
   * `again` are read now all the same (a refused job whose cancel was found since).
   */
  claimOrphans(
    admits?: (job: Job) => boolean,
    again?: readonly string[],
  ): string[] | Promise<string[]>;
  /**
   * The ids of the queued and executing jobs whose owner is gone, oldest first, taking nothing:
   * the jobs waiting for a runtime that can admit them (docs/api.md, "Recovery").
   */
  orphaned(): string[] | Promise<string[]>;
  /**
   * True when the store tells a gone owner from a live one while it runs (PostgreSQL: its
   * advisory lock is free): a runtime with `recover: true` then looks for gone owners every
   * second, not only at open. Absent: false.
   */
  readonly recoversWhileRunning?: boolean;
}

/** Workers' queued jobs (docs/api.md, "Workers"): taken and started by compare-and-swap. */
export interface QueueStore extends OwnedStore {
  /**
   * Takes a queued job for this owner, a worker about to run it: true when the job is `queued`
   * and its owner is still the one read (a compare-and-swap, so of workers and recoverers racing
   * exactly one takes it), false otherwise.
   */
  takeQueued(jobId: string): Promise<boolean>;
  /**
   * Persists a change that takes a job out of `queued` (a worker starting it, a cancel while it
   * is queued) only while the job is still stored `queued` with exactly the events the change
   * follows, checked and written in one transaction: of a worker starting a job and a cancel
   * from another process, exactly one is written. Resolves true when written, false (nothing
   * written) otherwise.
   */
  updateWhileQueued(job: Job, change: JobChange): Promise<boolean>;
}

/** What a store knows of its own health (docs/api.md, "runtime.storeAvailability"). */
export interface AvailabilityStore {
  /**
   * Whether the store can write now, from what it knows (no statement is sent): false from the
   * moment it lost its owner lock until it holds a new one, and while its writes fail on a lost
   * connection. A store without it always can.
   */
  availability(): StoreAvailability;
}

/**
 * Rate and cost limits counted in the store (docs/api.md, "Limits"). A store without them cannot
 * count, and the runtime denies steps under a limit.
 */
export interface LimitStore {
  /**
   * Takes every one of `takes` at `at` (ms since the epoch), or none: atomically, so that across
   * processes sharing the store no counter ever holds more than its `max` in any window (one
   * IMMEDIATE transaction in SQLite, row locks in PostgreSQL).
   */
  takeLimits(takes: readonly LimitTake[], at: number): LimitVerdict | Promise<LimitVerdict>;
  /** Every counter with something taken in its window ending at `at`. */
  limitCounters(at: number): LimitCounter[] | Promise<LimitCounter[]>;
}

/** The notification outbox (docs/api.md, "Notifications"). */
export interface OutboxStore {
  readonly outbox: JobStoreOutbox;
}

/**
 * A notification to send (docs/api.md, "Notifications"), written to the store's outbox in the
 * same transaction as the event that causes it. Holds no secret: `destination` names the
 * receiver by its URL's origin and a digest of the whole URL, and the delivering process finds
 * the URL and the secret in its own options.
 */
export interface OutboxEntry {
  /** The `webhook-id`, the same on every attempt. */
  readonly id: string;
  readonly destination: string;
  readonly jobId: string;
  /** The event type. */
  readonly type: string;
  /** ISO 8601: the event's time. */
  readonly at: string;
  /** The request body, as sent. */
  readonly body: string;
}

/** `pending` (to deliver), `failed` (after its last attempt) or `dropped` (the outbox was full). */
export type OutboxStatus = 'pending' | 'failed' | 'dropped';

/** An outbox row as the store holds it. Delivered rows are deleted. */
export interface OutboxRecord extends OutboxEntry {
  /** Order of writing, ascending. */
  readonly seq: number;
  readonly status: OutboxStatus;
  /** Attempts made (claims). */
  readonly attempts: number;
  /** Not before this time (ms since the epoch) is the next attempt made. */
  readonly nextAt: number;
  /** Why the last attempt failed, or why the row was dropped. */
  readonly error?: string;
}

/** A notification not delivered yet, as `runtime.listNotifications` answers it. */
export type NotificationRecord = OutboxRecord;

/**
 * What a store with an outbox is given (docs/api.md, "Notifications"): the entries a change's
 * events cause (none: undefined), and the bound of pending rows per destination.
 */
export interface OutboxWriter {
  entries(job: Job, events: readonly JobEvent[]): readonly OutboxEntry[] | undefined;
  readonly maxPending: number;
  /** Called after the entries were written (committed), to wake the deliverer. */
  written(): void;
}

/**
 * The outbox of a store (docs/api.md, "Notifications"). Stores that have one have all four
 * methods; the outbox is written only once `attachOutbox` was called.
 */
export interface JobStoreOutbox {
  attachOutbox(writer: OutboxWriter): void;
  /**
   * Claims, atomically (so that of processes sharing the store one alone delivers a row), at most
   * `limit` rows due at `now`: of each job and destination only its oldest pending row, and only
   * when no claim on it is live; each claimed row counts one attempt and is leased until
   * `now + leaseMs`. With `destination` (a label), only that destination's rows: the deliverer
   * claims for each destination apart, so that one never waits on another.
   */
  claimNotifications(
    now: number,
    leaseMs: number,
    limit: number,
    destination?: string,
  ): OutboxRecord[] | Promise<OutboxRecord[]>;
  /**
   * Settles a claimed row: delivered (deleted), retried at `nextAt`, or failed for good
   * (`nextAt` undefined).
   */
  settleNotification(
    seq: number,
    outcome:
      | { readonly delivered: true }
      | { readonly delivered: false; readonly error: string; readonly nextAt?: number },
  ): void | Promise<void>;
  /** The rows not delivered, oldest first, at most `limit`; only those after seq `after` if given. */
  listNotifications(limit: number, after?: number): OutboxRecord[] | Promise<OutboxRecord[]>;
}
