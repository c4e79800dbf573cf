/**
 * The shared durable store (`store: 'postgres://...'`, docs/guide/stores.md, "PostgreSQL"), on `pg`
 * with a pool, for several processes writing one database. Same record as the SQLite store (one row
 * per job, per step and per event; values as JSON text through toJsonSafe), with these differences:
 *
 * - every state change is written by ONE SQL statement (data-modifying CTEs over unnested
 *   arrays), so it is atomic; the changes of jobs in flight together are written by one such
 *   statement (group commit: WRITE_BATCH, one round trip and one commit for all of them, one
 *   batch at a time per store), and a change's promise settles only once its statement has
 *   committed; the executor awaits it before it goes on, so the "started" record is committed
 *   before the capability is invoked;
 * - the schema is created on first use under a transaction-scoped advisory lock, so processes
 *   that start together do not race on `CREATE TABLE`;
 * - jobs are listed by `created_at` (the runtime's ISO timestamp) and then by the identity
 *   column, so the order holds across processes; each job is written only by the process that
 *   runs it, and ids are unique (a UNIQUE constraint backs the random UUIDs);
 * - tables are prefixed `warrant_` because the database may be shared with other software;
 * - the goal and capability columns hold JSON text, as in the SQLite store
 *   (stores/shared/record-columns.ts): PostgreSQL text cannot hold U+0000 or a lone surrogate,
 *   JSON escapes both;
 * - every statement has a time-out (the URL's `statement_timeout` parameter, else the
 *   `statementTimeoutMs` option, in milliseconds; default 30,000; 0 for none): the server cancels
 *   a statement that runs longer (waiting for a lock held elsewhere, say), and the client gives
 *   up one second later on a server that does not answer at all, or on a connection it cannot
 *   get, so a request fails instead of hanging.
 *
 * The constructor opens nothing: the pool connects on the first operation.
 */
import { ErrorCode } from '../../errors/error-codes.js';
import pg from 'pg';
import { statementTimeoutOf } from './postgres-url.js';
import { createLimitTables, limitCounters, takeLimits } from './postgres-limits.js';
import { describeThrown } from '../../errors/describe-value.js';
import { createError } from '../../errors/warrant-error.js';
import type { Job, JobListFilter, JobStep } from '../../jobs/job.js';
import type {
  ApprovalLedger,
  AvailabilityStore,
  AwaitingIndex,
  AwaitingJob,
  CancelStore,
  Checkpoint,
  CheckpointEntry,
  SealScanStore,
  ConsumedApproval,
  ConsumedRequest,
  IdempotencyClaim,
  IdempotencyHolder,
  IdempotencyStore,
  JobChange,
  JobStore,
  LimitCounter,
  LimitStore,
  LimitTake,
  LimitVerdict,
  OutboxEntry,
  OutboxStore,
  QueueStore,
  RecordedChain,
  SealedApproval,
  SealedEntry,
  StoreAvailability,
  StoredCancel,
  StoreScan,
  StoreSeals,
} from '../../jobs/job-store.js';
import { isFinished } from '../../jobs/job.js';
import { alreadyConsumed, checkStoredRequest, claimedRequest } from '../shared/approval-ledger.js';
import { ledgerLeaf, MISSING_ENTRY, nextCheckpoint } from '../../record/checkpoint.js';
import { ChainHeads } from '../shared/chain-heads.js';
import { newOwnerId } from '../shared/owner-identity.js';
import { CheckpointSealer } from '../shared/checkpoint-sealer.js';
import { GroupCommit } from '../shared/group-commit.js';
import { schemaStep } from '../shared/schema-version.js';
import { PostgresOutbox } from './postgres-outbox.js';
import { postgresScan } from './postgres-scan.js';
import {
  isTransientStoreError,
  retryTransient,
  StoreHealth,
  unwrittenOf,
  type StoreOutageListener,
  type WriteFault,
} from '../shared/write-retry.js';
import { encodeText, jobRow } from '../shared/record-columns.js';

import type { LedgerRow, RefClient } from './postgres-schema.js';
import {
  POSTGRES_SCHEMA_VERSION,
  APPROVAL_LEDGER,
  MIGRATE_4_TO_5,
  LEDGER_COLUMNS,
  ledgerEntry,
  REQUEST_EVENTS,
  CONSUME_REQUEST,
  CONSUMED_OF,
  MIGRATE_1_TO_2,
  MIGRATE_2_TO_3,
  schemaIsCurrent,
  insertCheckpoint,
  markOrigin,
  SCHEMA_LOCK,
  LIFE_SCHEMA,
  CLAIM_KEY,
  OWNER_SCHEMA,
  OWNERS_ELSEWHERE,
  tryOwnerLock,
  TAKE_JOBS,
  TAKE_SOME,
  OWNED_BY,
  TAKE_QUEUED,
  lockKeyOf,
  SCHEMA,
  CHECKPOINT_SCHEMA,
  CHECKPOINT_LOCK,
  UNSEALED_HEADS,
  CHECKPOINT_COLUMNS,
  SEALED_APPROVAL_COLUMNS,
} from './postgres-schema.js';
import type { JobRow, StepColumns, EncodedChange, QueuedWrite } from './postgres-rows.js';
import {
  CREATE_JOB,
  UPDATE_JOB,
  WRITE_BATCH,
  WRITE_BATCH_OUTBOX,
  WRITTEN_EVENTS,
  CLAIM_STEP,
  JOB_COLUMNS,
  SELECT_JOBS,
  SELECT_JOB_HEAD,
  SELECT_CHAIN,
  STATUS_FOR_UPDATE,
  UPDATE_WHILE_QUEUED,
  LAST_EVENT,
  LAST_HASH,
  lastEventOf,
  stepColumns,
  eventColumns,
  encodedUpdate,
  createValues,
  updateValues,
  batchValues,
  isDataError,
  isUniqueViolation,
  toJob,
  redactUrl,
  DEFAULT_STATEMENT_TIMEOUT_MS,
  CLIENT_MARGIN_MS,
  isTimeout,
  storeError,
  notFound,
} from './postgres-rows.js';

export { statementTimeoutOf } from './postgres-url.js';
export {
  CREATE_JOB,
  UPDATE_JOB,
  DEFAULT_STATEMENT_TIMEOUT_MS,
  redactUrl,
} from './postgres-rows.js';
export { POSTGRES_SCHEMA_VERSION } from './postgres-schema.js';

/**
 * One owner identity of the store (docs/api.md, "Recovery"): its owner id, whose advisory lock
 * a dedicated connection holds, and its generation, 0 for the first and one more for each owner
 * that replaced a lost one (docs/decisions.md, "A lost owner lock").
 */
interface OwnerIdentity {
  readonly owner: string;
  readonly generation: number;
}

/** First wait before the next try to take a new owner lock, or to reach a store whose writes failed (ms). */
const MEND_FIRST_MS = 250;
/** Those waits double up to this (ms). */
const MEND_MAX_MS = 2_000;
/** How long a job the recovering runtime could not admit is left unread by its claims (ms). */
const REFUSED_MS = 30_000;
/** Attempts of a read that fails on transient errors, and the wait after the first (ms). */
const READ_ATTEMPTS = 3;
const READ_DELAY_MS = 50;
/** At most this many jobs' next generations are kept (the oldest are dropped beyond). */
const NEXT_GENERATIONS_MAX = 10_000;

/** What `availability()` answers while the store can write. */
const WRITABLE: StoreAvailability = Object.freeze({ writable: true });

export interface PostgresStoreOptions {
  /** Connections in this process's pool (default 4). */
  readonly poolSize?: number;
  /**
   * Statement time-out in milliseconds when the URL has no `statement_timeout` parameter
   * (default 30,000; 0 for none).
   */
  readonly statementTimeoutMs?: number;
  /** Key of the event chain's HMAC (record/event-chain.ts); plain SHA-256 without one. */
  readonly auditKey?: string | undefined;
  /** Told when job writes start failing on a lost connection, and when one succeeds again. */
  readonly onOutage?: StoreOutageListener | undefined;
  /**
   * Test seam: faults injected around each statement of the write path
   * (stores/shared/write-retry.ts).
   */
  readonly faults?: WriteFault | undefined;
}

export class PostgresJobStore
  implements
    JobStore,
    AwaitingIndex,
    SealScanStore,
    ApprovalLedger,
    CancelStore,
    IdempotencyStore,
    QueueStore,
    AvailabilityStore,
    LimitStore,
    OutboxStore
{
  readonly #pool: pg.Pool;
  readonly #label: string;
  /**
   * The owner this store writes as now (docs/api.md, "Recovery"): a new one replaces an owner
   * whose lock was lost (docs/decisions.md, "A lost owner lock").
   */
  #identity: OwnerIdentity = { owner: newOwnerId(), generation: 0 };
  /** The owner the pool names on every connection it opens (the first identity's). */
  readonly #firstOwner: string;
  /** The owner a pooled connection was switched to since it opened (set_config). */
  readonly #connectionOwner = new WeakMap<pg.ClientBase, string>();
  /** The owners this store wrote as and lost: their records are removed. */
  readonly #lostOwners: string[] = [];
  readonly #url: string;
  readonly #connectMs: number | undefined;
  /**
   * The dedicated connection holding the current owner's session-level advisory lock: while it
   * holds it, no other process takes this owner's jobs.
   */
  #ownerClient: pg.Client | undefined;
  /** Taking the owner lock: before the first write that can make a job queued or executing. */
  #owning: Promise<OwnerIdentity> | undefined;
  /**
   * Set from the moment an owner's lock connection ended until the next owner holds its lock:
   * the store cannot write meanwhile (docs/api.md, "runtime.storeAvailability").
   */
  #between: Error | undefined;
  /** The generation each record being written writes under (the owner that created or took it). */
  readonly #tracked = new WeakMap<Job, number>();
  /**
   * A record `get` returned, with the chain hash of its last event read in the same statement
   * and its number of events then: what a conditional write of that record continues from.
   */
  readonly #readHeads = new WeakMap<Job, { readonly events: number; readonly head: string }>();
  /**
   * The generation the next record read of a job writes under: the owner that took it
   * (claimOrphans, takeQueued), or under which one of its changes failed (a stranded job).
   */
  readonly #nextGeneration = new Map<string, number>();
  /** Claims of orphans, one at a time (they share the owner's connection). */
  #claiming: Promise<unknown> = Promise.resolve();
  /** Jobs a recovering runtime could not admit, and when: not read again for REFUSED_MS. */
  readonly #refused = new Map<string, number>();
  /** Retries taking the next owner lock, or probes a store whose writes fail (`#mend`). */
  #mendTimer: ReturnType<typeof setTimeout> | undefined;
  #mendDelay = MEND_FIRST_MS;
  /** close() was called: nothing is retried in the background any more. */
  #stopping = false;
  /** close() has written what was queued: every later write is refused. */
  #closed = false;
  #ready: Promise<void> | undefined;
  #limitsReady: Promise<void> | undefined;
  /** The last chain hash of each job this process is writing (each job has one writer). */
  readonly #heads: ChainHeads;
  readonly #auditKey: string | undefined;
  readonly #health: StoreHealth;
  readonly #faults: WriteFault | undefined;
  /**
   * Changes committed together: at most one per job, so one statement can write them all; one
   * batch written at a time (the next one gathers meanwhile).
   */
  readonly #writes = new GroupCommit<EncodedChange>({
    write: async (writes) => {
      await this.#commit(writes);
      let events = 0;
      for (const write of writes) events += write.change.events.positions.length;
      this.#sealer.committed(events);
      // Notifications written: the deliverer wakes (only then, not after every batch).
      if (this.outbox.attached && writes.some((write) => write.change.outbox !== undefined))
        this.outbox.written();
    },
    keyOf: (change) => change.id,
    // After a failed change the executor writes nothing more for that job; a later record of it
    // (the stranded job settled, docs/api.md "Store outages") writes under the same owner.
    forget: (change) => {
      this.#heads.forget(change.id);
      if (change.generation !== undefined) this.#rememberGeneration(change.id, change.generation);
    },
  });

  /** Writes the next checkpoint (docs/api.md, "Store checkpoints"), off the path of a step. */
  readonly #sealer = new CheckpointSealer(() => this.seal());

  /** The notification outbox (docs/api.md, "Notifications"): written only once attached. */
  readonly outbox: PostgresOutbox;

  constructor(url: string, options: PostgresStoreOptions = {}) {
    this.#label = redactUrl(url);
    this.#url = url;
    const fromUrl = statementTimeoutOf(url);
    const timeout = isTimeout(fromUrl)
      ? fromUrl
      : isTimeout(options.statementTimeoutMs)
        ? options.statementTimeoutMs
        : DEFAULT_STATEMENT_TIMEOUT_MS;
    this.#pool = new pg.Pool({
      connectionString: url,
      max: options.poolSize ?? 4,
      // Sent to the server at connection (pg lets the URL's own parameter take precedence).
      statement_timeout: timeout,
      // Names this store's owner on every connection: the owner trigger reads it.
      options: `-c warrant.owner=${this.#identity.owner}`,
      ...(timeout > 0 && {
        query_timeout: timeout + CLIENT_MARGIN_MS,
        connectionTimeoutMillis: timeout + CLIENT_MARGIN_MS,
      }),
    });
    this.#firstOwner = this.#identity.owner;
    this.#connectMs = timeout > 0 ? timeout + CLIENT_MARGIN_MS : undefined;
    this.#heads = new ChainHeads(options.auditKey);
    this.#auditKey = options.auditKey;
    // Writes that fail on a lost connection: the store is probed until it answers again, so
    // that it says so without waiting for the next write (docs/api.md, "runtime.storeAvailability").
    const onOutage = options.onOutage;
    this.#health = new StoreHealth((state) => {
      if (state === 'down') this.#mend(MEND_FIRST_MS);
      onOutage?.(state);
    });
    this.#faults = options.faults;
    // An idle client whose server went away emits 'error' on the pool; unhandled, that event
    // would end the process. The next query fails and reports it instead.
    this.#pool.on('error', () => {});
    // The same for a client checked out between two queries (the pool listens only to idle
    // ones): its connection terminated, the next query on it fails and the client is released
    // with that error, never an 'error' event without a listener.
    this.#pool.on('connect', (client) => client.on('error', () => {}));
    this.outbox = new PostgresOutbox(this.#pool, () => this.#whenReady(), SCHEMA_LOCK);
  }

  /** Creates or checks the schema once; a failure is reported again on the next call. */
  #whenReady(): Promise<void> {
    this.#ready ??= this.#migrate().catch((error: unknown) => {
      this.#ready = undefined;
      throw error;
    });
    return this.#ready;
  }

  async #migrate(): Promise<void> {
    let client: pg.PoolClient;
    try {
      client = await this.#pool.connect();
    } catch (error) {
      throw storeError(
        ErrorCode.STORE_OPEN_FAILED,
        `Cannot connect to the PostgreSQL store at ${this.#label}: ${describeThrown(error)}`,
        error,
      );
    }
    try {
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock($1)', [SCHEMA_LOCK]);
      if (await schemaIsCurrent(client)) {
        // No DDL on a database already at this version: `CREATE INDEX IF NOT EXISTS` locks its
        // table, and against the consuming write of an approval (which locks the step row, then
        // the job row) that could deadlock a runtime opening the store while another decides.
        await client.query('COMMIT');
        return;
      }
      // The chain origin below is a checkpoint: taken before any table lock, as a seal takes it.
      await client.query('SELECT pg_advisory_xact_lock($1)', [CHECKPOINT_LOCK]);
      await client.query(SCHEMA);
      await client.query(APPROVAL_LEDGER);
      await client.query(CHECKPOINT_SCHEMA);
      await client.query(LIFE_SCHEMA);
      await client.query(OWNER_SCHEMA);
      const { rows } = await client.query<{ version: number }>(
        'SELECT version FROM warrant_schema_version',
      );
      const version = rows[0]?.version;
      const step = schemaStep(
        version,
        POSTGRES_SCHEMA_VERSION,
        `PostgreSQL store at ${this.#label}`,
      );
      if (step === 'create') {
        await client.query('INSERT INTO warrant_schema_version (version) VALUES ($1)', [
          POSTGRES_SCHEMA_VERSION,
        ]);
      } else if (step === 'migrate' && version !== undefined) {
        // Older versions are migrated step by step, in this transaction, under the lock.
        if (version < 2) await client.query(MIGRATE_1_TO_2);
        if (version < 3) await client.query(MIGRATE_2_TO_3);
        // Before version 4 there was no ledger: the one just created has the column already.
        if (version === 4) await client.query(MIGRATE_4_TO_5);
        await client.query('UPDATE warrant_schema_version SET version = $1', [
          POSTGRES_SCHEMA_VERSION,
        ]);
      }
      await markOrigin(client, this.#auditKey);
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      if (error instanceof Error && 'code' in error && String(error.code).startsWith('STORE_'))
        throw error;
      throw storeError(
        ErrorCode.STORE_OPEN_FAILED,
        `Cannot prepare the PostgreSQL store at ${this.#label}: ${describeThrown(error)}`,
        error,
      );
    } finally {
      client.release();
    }
  }

  /** This store's owner id now (docs/api.md, "Recovery"): another after a lost owner lock. */
  get owner(): string {
    return this.#identity.owner;
  }

  /** Gone owners are known while the store runs: their advisory locks are free. */
  get recoversWhileRunning(): true {
    return true;
  }

  /** Whether the store can write now, from what it knows (docs/api.md, "runtime.storeAvailability"). */
  availability(): StoreAvailability {
    if (this.#between !== undefined)
      return {
        writable: false,
        reason: 'the store lost its owner lock (its connection ended) and holds no new one yet',
      };
    if (this.#health.down)
      return { writable: false, reason: 'writes to the store fail on a lost connection' };
    return WRITABLE;
  }

  /**
   * Opens the current owner's dedicated connection, takes its advisory lock (session-level, held
   * until the connection ends) and records the owner; resolves that identity. Should that
   * connection end, the store takes a new owner (`#lose`).
   */
  #whenOwner(): Promise<OwnerIdentity> {
    this.#owning ??= this.#whenReady()
      .then(() => this.#holdOwner(this.#identity))
      .catch((error: unknown) => {
        this.#owning = undefined;
        throw error;
      });
    return this.#owning;
  }

  async #holdOwner(identity: OwnerIdentity): Promise<OwnerIdentity> {
    const client = new pg.Client({
      connectionString: this.#url,
      ...(this.#connectMs !== undefined && { connectionTimeoutMillis: this.#connectMs }),
    });
    client.on('error', (error: Error) => this.#lose(client, error));
    client.on('end', () =>
      this.#lose(client, new Error('the connection holding its owner lock ended')),
    );
    const key = lockKeyOf(identity.owner);
    try {
      await client.connect();
      await client.query('SELECT pg_advisory_lock($1::bigint)', [key]);
      await client.query(
        'INSERT INTO warrant_owners (owner, lock_key, at) VALUES ($1, $2::bigint, $3) ON CONFLICT (owner) DO NOTHING',
        [identity.owner, key, new Date().toISOString()],
      );
      // The records of this store's lost owners: they are gone, so any runtime may take their
      // jobs without asking their locks (a missing record means gone).
      if (this.#lostOwners.length > 0)
        await client.query('DELETE FROM warrant_owners WHERE owner = ANY($1::text[])', [
          this.#lostOwners,
        ]);
    } catch (error) {
      await client.end().catch(() => {});
      // A connection that cannot be had now is an outage (503), not a store that cannot open.
      if (isTransientStoreError(error))
        throw storeError(
          ErrorCode.STORE_UNAVAILABLE,
          'The job store is unavailable: its owner lock cannot be taken (the connection to the database was lost)',
          error,
        );
      throw storeError(
        ErrorCode.STORE_OPEN_FAILED,
        `Cannot take the owner lock on the PostgreSQL store at ${this.#label}: ${describeThrown(error)}`,
        error,
      );
    }
    if (this.#closed) {
      await client.end().catch(() => {});
      throw this.#closedError();
    }
    // Held while the store writes, it does not keep the process alive by itself (as the pool's
    // idle connections do not); a recovery holds it while it uses it.
    (client as RefClient).unref();
    this.#ownerClient = client;
    this.#between = undefined;
    // The store answers: an outage the loss began (or writes failed in) is over.
    this.#health.succeeded();
    return identity;
  }

  /**
   * The connection holding the current owner's lock ended (terminated, a failover, the network):
   * the store stops writing as that owner (its jobs are anyone's to take by the recovery rule,
   * this process's included) and takes a new owner, a new lock on a fresh connection, at once
   * and again until it holds one (docs/decisions.md, "A lost owner lock").
   */
  #lose(client: pg.Client, error: unknown): void {
    if (client !== this.#ownerClient) return;
    this.#ownerClient = undefined;
    client.end().catch(() => {});
    const lost = this.#identity;
    this.#lostOwners.push(lost.owner);
    this.#identity = { owner: newOwnerId(), generation: lost.generation + 1 };
    this.#between = error instanceof Error ? error : new Error(describeThrown(error));
    this.#owning = undefined;
    // Heads of the lost owner's runs: a run that takes one of those jobs up reads the stored one.
    this.#heads.clear();
    this.#mend(0);
    this.#health.failed();
  }

  /**
   * In the background, until the store can write again: takes the next owner lock after a
   * loss, or sends one statement while writes fail on a lost connection; waits MEND_FIRST_MS
   * after a failed try, doubling up to MEND_MAX_MS. Its timer keeps no process alive.
   */
  #mend(delay: number): void {
    if (this.#stopping || this.#mendTimer !== undefined) return;
    this.#mendTimer = setTimeout(() => void this.#mendOnce(), delay);
    this.#mendTimer.unref();
  }

  async #mendOnce(): Promise<void> {
    try {
      if (this.#between !== undefined) await this.#whenOwner();
      else if (this.#health.down) {
        await this.#pool.query('SELECT 1');
        this.#health.succeeded();
      }
      this.#mendDelay = MEND_FIRST_MS;
    } catch {
      this.#mendDelay = Math.min(this.#mendDelay * 2, MEND_MAX_MS);
    }
    this.#mendTimer = undefined;
    if (this.#between !== undefined || this.#health.down) this.#mend(this.#mendDelay);
  }

  /**
   * The generation a record writes under: the one it was created or first written under; a
   * record read afresh, the generation of the owner that took its job (or under which a change
   * of it failed), else the current one.
   */
  #generationOf(job: Job): number {
    let generation = this.#tracked.get(job);
    if (generation === undefined) {
      generation = this.#nextGeneration.get(job.id) ?? this.#identity.generation;
      this.#nextGeneration.delete(job.id);
      this.#tracked.set(job, generation);
    }
    return generation;
  }

  /** The next record of a job read afresh writes under this generation. */
  #rememberGeneration(jobId: string, generation: number): void {
    this.#nextGeneration.delete(jobId);
    if (this.#nextGeneration.size >= NEXT_GENERATIONS_MAX) {
      const oldest = this.#nextGeneration.keys().next().value;
      if (oldest !== undefined) this.#nextGeneration.delete(oldest);
    }
    this.#nextGeneration.set(jobId, generation);
  }

  /** Points a pooled connection at `identity`'s owner, for the owner trigger, if it is not yet. */
  async #asOwner(client: pg.ClientBase, identity: OwnerIdentity): Promise<void> {
    if ((this.#connectionOwner.get(client) ?? this.#firstOwner) === identity.owner) return;
    await client.query("SELECT set_config('warrant.owner', $1, false)", [identity.owner]);
    this.#connectionOwner.set(client, identity.owner);
  }

  /**
   * Takes a queued job for this owner (a worker about to run it): a compare-and-swap on its
   * owner, so of workers and recoverers racing exactly one takes it.
   */
  async takeQueued(jobId: string): Promise<boolean> {
    const identity = await this.#whenOwner();
    const { rows } = await this.#pool.query<{
      owner: string | null;
      queued: boolean;
      taken: boolean;
    }>({ name: 'warrant_take_queued', text: TAKE_QUEUED, values: [identity.owner, jobId] });
    const row = rows[0];
    const taken = row?.queued === true && (row.taken || row.owner === identity.owner);
    if (taken) this.#rememberGeneration(jobId, identity.generation);
    return taken;
  }

  /**
   * Takes the queued and executing jobs of owners that are gone: an owner whose advisory lock
   * this store can take has no live session (it is released at once), and one with no owner
   * record closed (or was lost). Each owner's jobs are taken by one conditional update; with
   * `admits`, only those it admits (read first; one it refused is not read again for
   * REFUSED_MS). Claims run one at a time. Resolves their ids, oldest first.
   */
  claimOrphans(admits?: (job: Job) => boolean, again?: readonly string[]): Promise<string[]> {
    const claim = this.#claiming.then(() => this.#claimOrphans(admits, again));
    this.#claiming = claim.catch(() => {});
    return claim;
  }

  async #claimOrphans(
    admits: ((job: Job) => boolean) | undefined,
    again: readonly string[] | undefined,
  ): Promise<string[]> {
    const identity = await this.#whenOwner();
    const client = this.#ownerClient;
    if (client === undefined || identity !== this.#identity)
      throw storeError(
        ErrorCode.STORE_UNAVAILABLE,
        'The job store is unavailable: its owner lock was lost while it claimed jobs',
      );
    (client as RefClient).ref();
    try {
      return await this.#claimWith(client, identity, admits, again);
    } finally {
      (client as RefClient).unref();
    }
  }

  async #claimWith(
    client: pg.Client,
    identity: OwnerIdentity,
    admits: ((job: Job) => boolean) | undefined,
    again: readonly string[] | undefined,
  ): Promise<string[]> {
    const { rows } = await client.query<{ owner: string; lock_key: string | null }>(
      OWNERS_ELSEWHERE,
      [identity.owner],
    );
    const taken: string[] = [];
    for (const { owner, lock_key: key } of rows) {
      // Held: that owner's session is alive.
      if (key !== null && !(await tryOwnerLock(client, key))) continue;
      try {
        const some =
          admits === undefined ? undefined : await this.#admitted(client, owner, admits, again);
        if (some?.length === 0) continue;
        await client.query('BEGIN');
        const jobs = await client.query<{ id: string }>(
          some === undefined ? TAKE_JOBS : TAKE_SOME,
          some === undefined ? [identity.owner, owner] : [identity.owner, owner, some],
        );
        // Gone: its record goes (jobs left to it are then taken without asking its lock).
        await client.query('DELETE FROM warrant_owners WHERE owner = $1', [owner]);
        await client.query('COMMIT');
        for (const row of jobs.rows) {
          taken.push(row.id);
          this.#rememberGeneration(row.id, identity.generation);
        }
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {});
        throw error;
      } finally {
        if (key !== null) await client.query('SELECT pg_advisory_unlock($1::bigint)', [key]);
      }
    }
    return taken;
  }

  /**
   * The queued and executing jobs of gone owners, taking nothing: an owner whose lock this
   * session can take has no live session (the lock is given back at once).
   */
  async orphaned(): Promise<string[]> {
    await this.#whenReady();
    const client = await this.#pool.connect();
    try {
      const { rows } = await client.query<{ owner: string; lock_key: string | null }>(
        OWNERS_ELSEWHERE,
        [this.owner],
      );
      const ids: string[] = [];
      for (const { owner, lock_key: key } of rows) {
        if (key !== null) {
          if (!(await tryOwnerLock(client, key))) continue;
          await client.query('SELECT pg_advisory_unlock($1::bigint)', [key]);
        }
        const jobs = await client.query<{ id: string }>(OWNED_BY, [owner]);
        for (const row of jobs.rows) ids.push(row.id);
      }
      client.release();
      return ids;
    } catch (error) {
      // Not back to the pool: it may hold a lock it took.
      client.release(true);
      throw error;
    }
  }

  /** The queued and executing jobs of a gone owner that `admits` takes (see claimOrphans). */
  async #admitted(
    client: pg.Client,
    owner: string,
    admits: (job: Job) => boolean,
    again: readonly string[] | undefined,
  ): Promise<string[]> {
    const now = Date.now();
    for (const [id, at] of this.#refused) if (now - at >= REFUSED_MS) this.#refused.delete(id);
    const { rows } = await client.query<{ id: string }>(OWNED_BY, [owner]);
    const ids = rows
      .map((row) => row.id)
      .filter((id) => !this.#refused.has(id) || again?.includes(id) === true);
    if (ids.length === 0) return [];
    const jobs = await client.query<JobRow>(`${SELECT_JOBS} WHERE j.id = ANY($1::text[])`, [ids]);
    const admitted: string[] = [];
    for (const row of jobs.rows) {
      let admit = false;
      try {
        admit = admits(toJob(row)) === true;
      } catch {
        // A record that cannot be read, or a predicate that throws: not taken.
      }
      if (admit) admitted.push(row.id);
      else this.#refused.set(row.id, now);
    }
    return admitted;
  }

  create(job: Job): Promise<void> {
    if (this.#closed) return Promise.reject(this.#closedError());
    // Encoded now, before anything is awaited: the job as it is when it is created.
    const hashes = this.#heads.append(job.id, '', job.events, isFinished(job));
    return this.#enqueue({
      id: job.id,
      row: jobRow(job),
      status: job.status,
      updatedAt: job.updatedAt,
      state: '',
      steps: stepColumns(job, job.steps.keys()),
      events: eventColumns(job.events, 0, hashes),
      outbox: this.outbox.entriesOf(job, job.events),
      generation: undefined,
      job,
    });
  }

  /**
   * Queues one change and returns a promise settled once it is committed. Changes reported
   * while a batch is written, or in the same turn of the event loop, are written together by
   * the next batch (group commit); a second change of a job already in that batch waits for the
   * batch after it.
   */
  #enqueue(change: EncodedChange): Promise<void> {
    return this.#writes.add(change);
  }

  /**
   * Writes a batch; settles every change of it, never rejects. A lost connection is retried
   * (stores/shared/write-retry.ts): before each new attempt, the changes the lost one may have
   * committed are looked for, and only those not found are written again. Each attempt writes as
   * the current owner; a change of a record that writes under a lost owner is refused
   * (JOB_OWNER_LOST).
   */
  async #commit(writes: readonly QueuedWrite[]): Promise<void> {
    // The changes of the batch not settled yet.
    let pending = writes;
    const settled = new Set<QueuedWrite>();
    // The owner each change was last sent as (a change found written was written as it).
    const sentAs = new Map<QueuedWrite, OwnerIdentity>();
    try {
      await retryTransient(
        async () => {
          const identity = await this.#whenOwner();
          // The outbox table, when notifications are attached (created once, at attach).
          if (this.outbox.attached) await this.outbox.ready();
          pending = pending.filter((write) => !this.#refusedAsLost(write, settled, identity));
          if (pending.length === 0) return;
          for (const write of pending) sentAs.set(write, identity);
          await this.#writeBatch(pending, settled, identity);
        },
        async () => {
          pending = await this.#unwritten(
            pending.filter((write) => !settled.has(write)),
            settled,
            sentAs,
          );
          return pending.length === 0;
        },
        this.#health,
      );
    } catch (error) {
      for (const write of pending) if (!settled.has(write)) this.#writes.fail(write, error);
    }
  }

  /** Refuses (settles) a change of a record that writes under an owner other than `identity`. */
  #refusedAsLost(write: QueuedWrite, settled: Set<QueuedWrite>, identity: OwnerIdentity): boolean {
    if (settled.has(write)) return true;
    const { generation, id } = write.change;
    if (generation === undefined || generation === identity.generation) return false;
    this.#settle(write, settled, this.#ownerLost(id), undefined);
    return true;
  }

  /**
   * Writes changes by one statement, or each alone after an error in the data of one; settles
   * each change it wrote or that failed on its own, adding it to `settled`. Throws a transient
   * error (stores/shared/write-retry.ts) before settling the change it hit.
   */
  async #writeBatch(
    writes: readonly QueuedWrite[],
    settled: Set<QueuedWrite>,
    identity: OwnerIdentity,
  ): Promise<void> {
    if (writes.length === 1) return this.#writeOne(writes[0] as QueuedWrite, settled, identity);
    let found: Set<string>;
    try {
      const changes = writes.map((write) => write.change);
      const { rows } = await this.#write<{ id: string }>(
        this.outbox.attached && changes.some((change) => change.outbox !== undefined)
          ? this.#batchWithOutbox(changes)
          : {
              name: 'warrant_write_batch',
              text: WRITE_BATCH,
              values: batchValues(changes),
            },
        identity,
      );
      found = new Set(rows.map((row) => row.id));
    } catch (error) {
      if (isTransientStoreError(error)) throw error;
      if (!isDataError(error)) {
        for (const write of writes) this.#settle(write, settled, error, identity);
        return;
      }
      // Nothing of the batch was written: each change alone, in order, so only its own fails.
      for (const write of writes) await this.#writeOne(write, settled, identity);
      return;
    }
    for (const write of writes) {
      const { change } = write;
      this.#settle(
        write,
        settled,
        change.row === undefined && !found.has(change.id) ? notFound(change.id) : undefined,
        identity,
      );
    }
  }

  /** Writes one change by its own statement and settles it; throws a transient error unsettled. */
  async #writeOne(
    write: QueuedWrite,
    settled: Set<QueuedWrite>,
    identity: OwnerIdentity,
  ): Promise<void> {
    if (settled.has(write)) return;
    const { change } = write;
    let error: unknown;
    try {
      if (change.outbox !== undefined) {
        // With its outbox rows: the batch statement, for this change alone.
        const { rows } = await this.#write<{ id: string }>(
          this.#batchWithOutbox([change]),
          identity,
        );
        if (change.row === undefined && rows.length === 0) error = notFound(change.id);
      } else if (change.row !== undefined) {
        await this.#write(
          {
            name: 'warrant_create_job',
            text: CREATE_JOB,
            values: createValues(change, change.row),
          },
          identity,
        );
      } else {
        const { rowCount } = await this.#write(
          { name: 'warrant_update_job', text: UPDATE_JOB, values: updateValues(change) },
          identity,
        );
        if (rowCount === 0) error = notFound(change.id);
      }
    } catch (thrown) {
      if (isTransientStoreError(thrown)) throw thrown;
      // Another writer appended at this change's positions (the events' key): another owner took
      // the job up, this one's lock lost (known here yet or not).
      error =
        change.row === undefined && isUniqueViolation(thrown)
          ? this.#ownerLost(change.id, thrown)
          : thrown;
    }
    this.#settle(write, settled, error, identity);
  }

  /** WRITE_BATCH_OUTBOX for `changes`: their rows, then the outbox rows of them all. */
  #batchWithOutbox(changes: readonly EncodedChange[]): pg.QueryConfig {
    const entries: OutboxEntry[] = [];
    for (const change of changes) if (change.outbox !== undefined) entries.push(...change.outbox);
    return {
      name: 'warrant_write_batch_outbox',
      text: WRITE_BATCH_OUTBOX,
      values: [...batchValues(changes), ...this.outbox.values(entries)],
    };
  }

  /**
   * Resolves a change (no error) or fails it, once. A new job written as `identity` writes
   * under its generation from then on; a change of a record whose owner was lost while it was
   * written is failed even so (committed, it is on the record recovery reads; its run goes no
   * further: no step is entered after its owner's lock is known lost).
   */
  #settle(
    write: QueuedWrite,
    settled: Set<QueuedWrite>,
    error: unknown,
    identity: OwnerIdentity | undefined,
  ): void {
    settled.add(write);
    const { change } = write;
    if (error === undefined && change.job !== undefined && identity !== undefined)
      this.#tracked.set(change.job, identity.generation);
    const lost = change.generation !== undefined && change.generation !== this.#identity.generation;
    if (error === undefined && !lost) write.resolve();
    else this.#writes.fail(write, lost ? this.#ownerLost(change.id) : error);
  }

  /**
   * After a lost attempt: settles the changes it committed after all and returns the others
   * (`unwrittenOf`, stores/shared/write-retry.ts), reading the stored hashes of their last events
   * by one statement.
   */
  async #unwritten(
    writes: readonly QueuedWrite[],
    settled: Set<QueuedWrite>,
    sentAs: ReadonlyMap<QueuedWrite, OwnerIdentity>,
  ): Promise<readonly QueuedWrite[]> {
    const ids: string[] = [];
    const positions: number[] = [];
    for (const write of writes) {
      const last = lastEventOf(write.change);
      if (last === undefined) continue;
      ids.push(last.id);
      positions.push(last.position);
    }
    if (ids.length === 0) return writes;
    const { rows } = await this.#write<{ id: string; position: number; hash: string | null }>({
      name: 'warrant_written_events',
      text: WRITTEN_EVENTS,
      values: [ids, positions],
    });
    const stored = new Map(rows.map((row) => [`${row.id}\u0000${row.position}`, row.hash]));
    return unwrittenOf(
      writes,
      (write) => lastEventOf(write.change),
      (last) => stored.get(`${last.id}\u0000${last.position}`),
      (write) => this.#settle(write, settled, undefined, sentAs.get(write)),
    );
  }

  /**
   * A statement of the write path, through the test seam when one is set (options.faults); with
   * `identity`, on a connection that names its owner (the owner trigger reads it).
   */
  async #write<R extends pg.QueryResultRow = pg.QueryResultRow>(
    config: pg.QueryConfig,
    identity?: OwnerIdentity,
  ): Promise<pg.QueryResult<R>> {
    const before = this.#faults?.('before');
    if (before !== undefined) throw before;
    const client = await this.#pool.connect();
    let result: pg.QueryResult<R>;
    try {
      if (identity !== undefined) await this.#asOwner(client, identity);
      result = await client.query<R>(config);
    } catch (error) {
      // As pg's pool.query: a connection whose statement failed is not used again.
      client.release(error instanceof Error ? error : true);
      throw error;
    }
    client.release();
    const after = this.#faults?.('after');
    if (after !== undefined) throw after;
    return result;
  }

  /**
   * A read of the job record: on a transient error (a pooled connection terminated a moment
   * earlier, say) it is sent again on another connection, up to READ_ATTEMPTS in all, READ_DELAY_MS
   * apart; the last such failure is STORE_UNAVAILABLE (docs/api.md, "Store outages").
   */
  async #read<R extends pg.QueryResultRow = pg.QueryResultRow>(
    config: pg.QueryConfig,
  ): Promise<pg.QueryResult<R>> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.#pool.query<R>(config);
      } catch (error) {
        if (!isTransientStoreError(error)) throw error;
        if (attempt >= READ_ATTEMPTS)
          throw storeError(
            ErrorCode.STORE_UNAVAILABLE,
            `The job store is unavailable: the connection to the database was lost (${attempt} attempts to read)`,
            error,
          );
      }
      await new Promise((resolve) => setTimeout(resolve, READ_DELAY_MS * attempt));
    }
  }

  /** The last stored chain hash of a job this store did not create (none today). */
  async #storedHead(id: string): Promise<string> {
    await this.#whenReady();
    const { rows } = await this.#read<{ hash: string | null }>({ text: LAST_HASH, values: [id] });
    return rows[0]?.hash ?? '';
  }

  /** The refusal of a change of a job that writes under an owner whose lock was lost. */
  #ownerLost(jobId: string, cause: unknown = this.#between): Error {
    return storeError(
      ErrorCode.JOB_OWNER_LOST,
      `The PostgreSQL store lost the owner lock job ${JSON.stringify(jobId)} ran under: it writes as a new owner and leaves the job to recovery`,
      cause,
    );
  }

  /** The failure of a write after close(). */
  #closedError(): Error {
    return storeError(
      ErrorCode.JOB_STORE_FAILED,
      `The PostgreSQL store at ${this.#label} is closed: it writes no more`,
    );
  }

  async update(job: Job, change: JobChange): Promise<void> {
    if (this.#closed) throw this.#closedError();
    if (change.claims !== undefined) return this.#claim(job, change, change.claims);
    // A run of a job whose owner was lost writes nothing more (its job is recovery's now).
    const generation = this.#generationOf(job);
    if (generation !== this.#identity.generation) throw this.#ownerLost(job.id);
    // Encoded now, before anything is awaited: the change as it is when it happens.
    const steps = stepColumns(job, change.steps, change.decided);
    const first = job.events.length - change.events.length;
    const previous = this.#heads.last(job.id) ?? (await this.#storedHead(job.id));
    const hashes = this.#heads.append(job.id, previous, change.events, isFinished(job));
    return this.#enqueue(
      encodedUpdate(
        job,
        steps,
        change.events,
        first,
        hashes,
        this.outbox.entriesOf(job, change.events),
        generation,
      ),
    );
  }

  /**
   * Writes a change that consumes an approval request, in one transaction that first claims the
   * step (CLAIM_STEP); the chain continues from the stored head, read after the claim, since
   * another process may have written the job.
   */
  async #claim(job: Job, change: JobChange, position: number): Promise<void> {
    const steps = stepColumns(job, change.steps, change.decided);
    const status = (job.steps[position] as JobStep).status;
    const request = claimedRequest(job, change, position);
    const decidedAt = job.updatedAt;
    const outbox = this.outbox.entriesOf(job, change.events);
    // A granted request makes the job executing again: this owner's from then on.
    const identity = await this.#whenOwner();
    if (outbox !== undefined) await this.outbox.ready();
    const client = await this.#pool.connect();
    try {
      await this.#asOwner(client, identity);
      await client.query('BEGIN');
      const claimed = await client.query(CLAIM_STEP, [job.id, position, status]);
      if (claimed.rowCount !== 1) {
        throw storeError(
          ErrorCode.APPROVAL_NOT_PENDING,
          `Step ${position} of job ${JSON.stringify(job.id)} no longer awaits approval`,
        );
      }
      // The request as stored, checked and entered in the ledger
      // (stores/shared/approval-ledger.ts).
      const stored = await client.query<{ event: string; hash: string | null }>(REQUEST_EVENTS, [
        job.id,
      ]);
      const checked = checkStoredRequest(job.id, request, stored.rows, this.#auditKey, Date.now());
      const entered = await client.query(CONSUME_REQUEST, [
        job.id,
        checked.position,
        request.stepId,
        request.inputDigest ?? null,
        checked.hash,
        request.decision,
        decidedAt,
      ]);
      if (entered.rowCount !== 1) throw alreadyConsumed(job.id, request);
      const { rows } = await client.query<{ hash: string | null }>(LAST_HASH, [job.id]);
      await this.#commitFromHead(client, job, change, steps, rows[0]?.hash ?? '', outbox, identity);
    } catch (error) {
      this.#heads.forget(job.id);
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }

  /**
   * The end of a conditional write (an approval claim, a start or cancel while queued), inside
   * its transaction on `client`: the change's events chained from the stored `head` (read after
   * the condition), the job's row and outbox rows written, then COMMIT. The record writes as
   * `identity`'s owner from then on (a lost one's run writes no more).
   */
  async #commitFromHead(
    client: pg.PoolClient,
    job: Job,
    change: JobChange,
    steps: StepColumns,
    head: string,
    outbox: readonly OutboxEntry[] | undefined,
    identity: OwnerIdentity,
  ): Promise<void> {
    const values = this.#chainedFrom(job, change, steps, head);
    await client.query({ name: 'warrant_update_job', text: UPDATE_JOB, values });
    if (outbox !== undefined) await this.outbox.writeIn(client, job.id, outbox);
    await client.query('COMMIT');
    this.#committedAs(job, change, identity);
    if (outbox !== undefined) this.outbox.written();
  }

  /** UPDATE_JOB's values for a conditional write: the change's events chained from `head`. */
  #chainedFrom(job: Job, change: JobChange, steps: StepColumns, head: string): unknown[] {
    const first = job.events.length - change.events.length;
    this.#heads.forget(job.id);
    const hashes = this.#heads.append(job.id, head, change.events, isFinished(job));
    return updateValues(
      encodedUpdate(job, steps, change.events, first, hashes, undefined, undefined),
    );
  }

  /** After a conditional write committed: the record writes as `identity`'s owner from then on. */
  #committedAs(job: Job, change: JobChange, identity: OwnerIdentity): void {
    this.#tracked.set(job, identity.generation);
    this.#nextGeneration.delete(job.id);
    this.#sealer.committed(change.events.length);
  }

  /**
   * Writes a change only while the job is stored `queued` with the events it follows
   * (JobStore.updateWhileQueued): its row locked, its status and last event read, then the
   * change written, in one transaction; the chain goes on from the stored head.
   */
  async updateWhileQueued(job: Job, change: JobChange): Promise<boolean> {
    if (this.#closed) throw this.#closedError();
    const steps = stepColumns(job, change.steps, change.decided);
    const first = job.events.length - change.events.length;
    const outbox = this.outbox.entriesOf(job, change.events);
    // A job started here becomes this owner's (the current one: the write is conditional, so a
    // record read under a lost owner cannot write past what the store holds).
    const identity = await this.#whenOwner();
    const read = this.#readHeads.get(job);
    if (outbox === undefined && read?.events === first)
      return this.#writeWhileQueued(job, change, steps, read.head, identity);
    if (outbox !== undefined) await this.outbox.ready();
    const client = await this.#pool.connect();
    try {
      await this.#asOwner(client, identity);
      await client.query('BEGIN');
      const locked = await client.query<{ status: string }>(STATUS_FOR_UPDATE, [job.id]);
      // Read after the lock: what a writer that held it committed is seen.
      const last = await client.query<{ position: number; hash: string | null }>(LAST_EVENT, [
        job.id,
      ]);
      if (locked.rows[0]?.status !== 'queued' || (last.rows[0]?.position ?? -1) !== first - 1) {
        await client.query('ROLLBACK');
        return false;
      }
      await this.#commitFromHead(
        client,
        job,
        change,
        steps,
        last.rows[0]?.hash ?? '',
        outbox,
        identity,
      );
      return true;
    } catch (error) {
      this.#heads.forget(job.id);
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }

  /**
   * updateWhileQueued of a record `get` read, with no outbox rows: one statement
   * (UPDATE_WHILE_QUEUED) checks that the job is still queued with the last event the record
   * had, and writes the change chained from that event's hash, read with the record. A second
   * writer at the same positions (refused by the events' key) lost, as the condition would say.
   */
  async #writeWhileQueued(
    job: Job,
    change: JobChange,
    steps: StepColumns,
    head: string,
    identity: OwnerIdentity,
  ): Promise<boolean> {
    const values = this.#chainedFrom(job, change, steps, head);
    const position = job.events.length - change.events.length - 1;
    const client = await this.#pool.connect();
    let written: boolean;
    try {
      await this.#asOwner(client, identity);
      const { rowCount } = await client.query({
        name: 'warrant_update_while_queued',
        text: UPDATE_WHILE_QUEUED,
        values: [...values, position, head],
      });
      written = rowCount === 1;
      client.release();
    } catch (error) {
      client.release(error instanceof Error ? error : true);
      // Another writer at the same positions: it won.
      if (!isUniqueViolation(error)) {
        this.#heads.forget(job.id);
        throw error;
      }
      written = false;
    }
    if (!written) {
      this.#heads.forget(job.id);
      return false;
    }
    this.#readHeads.delete(job);
    this.#committedAs(job, change, identity);
    return true;
  }

  async claimIdempotency(claim: IdempotencyClaim): Promise<IdempotencyHolder | undefined> {
    await this.#whenReady();
    const { scope, key, jobId, digest, at, expiresAt } = claim;
    // A claim that lost may find the holder gone by the time it looks (expired and replaced,
    // rare): it tries again.
    for (;;) {
      const claimed = await this.#pool.query({
        name: 'warrant_claim_key',
        text: CLAIM_KEY,
        values: [scope, key, jobId, digest, expiresAt, at],
      });
      if (claimed.rowCount === 1) return undefined;
      const { rows } = await this.#pool.query<{ job_id: string; digest: string }>({
        name: 'warrant_held_key',
        text: 'SELECT job_id, digest FROM warrant_idempotency WHERE scope = $1 AND key = $2',
        values: [scope, key],
      });
      const held = rows[0];
      if (held !== undefined) return { jobId: held.job_id, digest: held.digest };
    }
  }

  async takeLimits(takes: readonly LimitTake[], at: number): Promise<LimitVerdict> {
    await this.#limitTables();
    const client = await this.#pool.connect();
    try {
      return await takeLimits(client, takes, at);
    } finally {
      client.release();
    }
  }

  async limitCounters(at: number): Promise<LimitCounter[]> {
    await this.#limitTables();
    return limitCounters(this.#pool, at);
  }

  /** The limit tables, created on first use (docs/api.md, "Limits"). */
  #limitTables(): Promise<void> {
    this.#limitsReady ??= this.#whenReady()
      .then(async () => {
        const client = await this.#pool.connect();
        try {
          await createLimitTables(client, SCHEMA_LOCK);
        } finally {
          client.release();
        }
      })
      .catch((error: unknown) => {
        this.#limitsReady = undefined;
        throw error;
      });
    return this.#limitsReady;
  }

  async requestCancel(cancel: StoredCancel): Promise<void> {
    await this.#whenReady();
    await this.#pool.query({
      name: 'warrant_request_cancel',
      text: 'INSERT INTO warrant_job_cancels (job_id, request) VALUES ($1, $2) ON CONFLICT (job_id) DO NOTHING',
      values: [cancel.jobId, JSON.stringify(cancel)],
    });
  }

  async cancelRequests(jobIds: readonly string[]): Promise<StoredCancel[]> {
    await this.#whenReady();
    const { rows } = await this.#read<{ request: string }>({
      name: 'warrant_cancel_requests',
      text: 'SELECT request FROM warrant_job_cancels WHERE job_id = ANY($1::text[])',
      values: [jobIds],
    });
    return rows.map((row) => JSON.parse(row.request) as StoredCancel);
  }

  async get(id: string): Promise<Job | undefined> {
    await this.#whenReady();
    const { rows } = await this.#read<JobRow & { head: string | null }>({
      name: 'warrant_get_job',
      text: `${SELECT_JOB_HEAD} WHERE j.id = $1`,
      values: [id],
    });
    const row = rows[0];
    if (row === undefined) return undefined;
    const job = toJob(row);
    if (row.head !== null) this.#readHeads.set(job, { events: job.events.length, head: row.head });
    return job;
  }

  /** The job with the chain hash of each of its events, read in one statement. */
  async readChain(id: string): Promise<RecordedChain | undefined> {
    await this.#whenReady();
    // Read before the job: every decision the ledger holds then is in the job read after it.
    const ledger = await this.#read<{
      request_position: number;
      step_id: string;
      decision: string;
    }>({ text: CONSUMED_OF, values: [id] });
    const consumed: ConsumedApproval[] = ledger.rows.map((entry) => ({
      position: entry.request_position,
      stepId: entry.step_id,
      decision: entry.decision,
    }));
    const { rows } = await this.#read<JobRow & { hashes: (string | null)[] }>({
      name: 'warrant_read_chain',
      text: `${SELECT_CHAIN} WHERE j.id = $1`,
      values: [id],
    });
    const row = rows[0];
    return row === undefined ? undefined : { job: toJob(row), hashes: row.hashes, consumed };
  }

  async list(filter: JobListFilter): Promise<Job[]> {
    await this.#whenReady();
    const conditions: string[] = [];
    const values: unknown[] = [];
    const names: string[] = ['warrant_list'];
    if (filter.status !== undefined) {
      values.push(filter.status);
      conditions.push(`j.status = $${values.length}`);
      names.push('status');
    }
    if (filter.goal !== undefined) {
      values.push(encodeText(filter.goal));
      conditions.push(`j.goal = $${values.length}`);
      names.push('goal');
    }
    if (filter.capability !== undefined) {
      values.push(encodeText(filter.capability));
      names.push('capability');
      conditions.push(
        `j.seq IN (SELECT s.job_seq FROM warrant_job_steps s WHERE s.capability = $${values.length})`,
      );
    }
    values.push(filter.limit ?? null);
    const where = conditions.length === 0 ? '' : ` WHERE ${conditions.join(' AND ')}`;
    // One prepared statement per combination of filters (at most eight).
    const { rows } = await this.#read<JobRow>({
      name: names.join('_'),
      text: `${SELECT_JOBS}${where} ORDER BY j.created_at DESC, j.seq DESC LIMIT $${values.length}`,
      values,
    });
    return rows.map(toJob);
  }

  /**
   * Jobs awaiting approval by `(created_at, seq)`, through the index warrant_jobs_by_status
   * (status, created_at, seq); a position is `[created_at, seq]` as JSON.
   */
  async listAwaiting(after: string | undefined, limit: number): Promise<AwaitingJob[]> {
    const from = after === undefined ? undefined : postgresPosition(after);
    if (after !== undefined && from === undefined)
      throw createError(
        TypeError,
        ErrorCode.JOB_FILTER_INVALID,
        'listAwaiting(): not a position of this store',
      );
    if (limit <= 0) return [];
    await this.#whenReady();
    const select = `${JOB_COLUMNS}, j.seq::text AS position_seq
FROM warrant_jobs j WHERE j.status = 'awaiting_approval'`;
    const order = 'ORDER BY j.created_at, j.seq';
    const { rows } = await this.#read<JobRow & { position_seq: string }>(
      from === undefined
        ? { name: 'warrant_awaiting', text: `${select} ${order} LIMIT $1`, values: [limit] }
        : {
            name: 'warrant_awaiting_after',
            text: `${select} AND (j.created_at, j.seq) > ($1, $2::bigint) ${order} LIMIT $3`,
            values: [from[0], from[1], limit],
          },
    );
    return rows.map((row) => ({
      job: toJob(row),
      position: JSON.stringify([row.created_at, row.position_seq]),
    }));
  }

  async close(): Promise<void> {
    this.#stopping = true;
    clearTimeout(this.#mendTimer);
    this.#mendTimer = undefined;
    // Changes already reported are written first (each write is bounded by the time-outs), and
    // those their jobs report meanwhile.
    while (this.#writes.busy) await this.#writes.settled();
    this.#closed = true;
    // An owner lock being taken is let go once taken (#holdOwner).
    await this.#owning?.catch(() => {});
    await this.#claiming;
    if (!this.#pool.ended) {
      await this.#sealer.close();
      await this.#pool.end();
    }
    const owner = this.#ownerClient;
    this.#ownerClient = undefined;
    if (owner !== undefined) {
      // Its jobs have ended: the record goes, and the lock with the connection (held by the
      // process while it does: nothing else may be left to).
      (owner as RefClient).ref();
      await owner
        .query('DELETE FROM warrant_owners WHERE owner = ANY($1::text[])', [
          [this.owner, ...this.#lostOwners],
        ])
        .catch(() => {});
      await owner.end().catch(() => {});
    }
  }

  /**
   * Writes the next checkpoint of what is marked unsealed, in one transaction holding an
   * advisory lock: processes sharing the database seal one after another and never fork the
   * chain (the seq primary key backs it). Marks made meanwhile are left for the next seal.
   */
  async seal(): Promise<Checkpoint | undefined> {
    // What was reported before the call is sealed with it; later changes wait for the next seal
    // (waiting for no write at all, under load, spun the event loop and could wait for ever).
    await this.#writes.settled();
    await this.#whenReady();
    const client = await this.#pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock($1)', [CHECKPOINT_LOCK]);
      const marks = await client.query<{ id: string }>(
        'SELECT id FROM warrant_checkpoint_unsealed',
      );
      const ids = marks.rows.map((row) => row.id);
      const heads = await client.query<{ id: string; position: number; hash: string | null }>(
        UNSEALED_HEADS,
        [ids],
      );
      // An event without a hash is sealed too, as such: verifyStore reports it.
      const current = heads.rows.map((row) => ({
        jobId: row.id,
        events: row.position + 1,
        hash: row.hash ?? MISSING_ENTRY,
      }));
      const before = await client.query<CheckpointEntry>(
        `SELECT DISTINCT ON (job_id) job_id AS "jobId", events, hash FROM warrant_checkpoint_entries
         WHERE job_id = ANY($1::text[]) ORDER BY job_id, checkpoint DESC`,
        [current.map((entry) => entry.jobId)],
      );
      const sealed = new Map(before.rows.map((entry) => [entry.jobId, entry]));
      const head = await client.query<{ seq: number; hash: string }>(
        'SELECT seq, hash FROM warrant_checkpoints ORDER BY seq DESC LIMIT 1',
      );
      const ledgerMarks = await client.query<LedgerRow & { id: string }>(
        `SELECT u.id, ${LEDGER_COLUMNS.split(', ')
          .map((column) => `l.${column}`)
          .join(', ')}
         FROM warrant_approval_ledger_unsealed u
         JOIN warrant_approval_ledger l USING (job_id, request_position)`,
      );
      const approvals = ledgerMarks.rows.map((row) => ({
        jobId: row.job_id,
        position: row.request_position,
        hash: ledgerLeaf(ledgerEntry(row)),
      }));
      const next = nextCheckpoint(
        head.rows[0],
        current,
        sealed,
        new Date().toISOString(),
        this.#auditKey,
        approvals,
      );
      if (next !== undefined) {
        const { checkpoint, entries } = next;
        await insertCheckpoint(client, checkpoint, entries);
        if (approvals.length > 0) {
          await client.query(
            `INSERT INTO warrant_checkpoint_approvals (checkpoint, job_id, request_position, hash)
             SELECT $1, * FROM unnest($2::text[], $3::int[], $4::text[])`,
            [
              checkpoint.seq,
              approvals.map((leaf) => leaf.jobId),
              approvals.map((leaf) => leaf.position),
              approvals.map((leaf) => leaf.hash),
            ],
          );
          await client.query(
            'DELETE FROM warrant_approval_ledger_unsealed WHERE id = ANY($1::bigint[])',
            [ledgerMarks.rows.map((row) => row.id)],
          );
        }
      }
      await client.query('DELETE FROM warrant_checkpoint_unsealed WHERE id = ANY($1::bigint[])', [
        ids,
      ]);
      await client.query('COMMIT');
      return next?.checkpoint;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }

  /** The checkpoints, their entries and the job ids, in one snapshot (REPEATABLE READ). */
  async readSeals(): Promise<StoreSeals> {
    return this.#inSnapshot(async (client) => {
      const head = await this.#sealsHead(client);
      const entries = await client.query<SealedEntry>(
        'SELECT checkpoint, job_id AS "jobId", events, hash FROM warrant_checkpoint_entries ORDER BY checkpoint, job_id',
      );
      const jobs = await client.query<{ id: string }>('SELECT id FROM warrant_jobs ORDER BY seq');
      return { ...head, entries: entries.rows, jobIds: jobs.rows.map((row) => row.id) };
    });
  }

  /** The seals a page at a time, for verifyStore (postgres-scan.ts). */
  async scanSeals(page?: number): Promise<StoreScan> {
    const head = await this.#inSnapshot(async (client) => {
      const bound = await client.query<{ jobs: number; last: string }>(
        'SELECT count(*)::int AS jobs, coalesce(max(seq), 0)::text AS last FROM warrant_jobs',
      );
      const { jobs, last } = bound.rows[0] as { jobs: number; last: string };
      return { ...(await this.#sealsHead(client)), jobs, last };
    });
    return postgresScan((config) => this.#read(config), head, page);
  }

  /** The checkpoints, the ledger and its leaves: what readSeals and scanSeals read whole. */
  async #sealsHead(client: pg.PoolClient): Promise<Omit<StoreSeals, 'entries' | 'jobIds'>> {
    const checkpoints = await client.query<Checkpoint>(
      `SELECT ${CHECKPOINT_COLUMNS} FROM warrant_checkpoints ORDER BY seq`,
    );
    const unsealed = await client.query<{ count: number }>(
      'SELECT count(DISTINCT job_seq)::int AS count FROM warrant_checkpoint_unsealed',
    );
    const approvals = await client.query<SealedApproval>(
      `SELECT ${SEALED_APPROVAL_COLUMNS} FROM warrant_checkpoint_approvals`,
    );
    const ledger = await client.query<LedgerRow>(
      `SELECT ${LEDGER_COLUMNS} FROM warrant_approval_ledger`,
    );
    return {
      checkpoints: checkpoints.rows,
      unsealed: unsealed.rows[0]?.count ?? 0,
      approvals: approvals.rows,
      ledger: ledger.rows.map(ledgerEntry),
    };
  }

  /** Reads in one snapshot (REPEATABLE READ, read only). */
  async #inSnapshot<T>(read: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    await this.#whenReady();
    const client = await this.#pool.connect();
    try {
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      const result = await read(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }

  /** The latest checkpoint that sealed a job, with that checkpoint's entries. */
  async readSeal(
    jobId: string,
  ): Promise<
    { checkpoint: Checkpoint; entries: SealedEntry[]; approvals: SealedApproval[] } | undefined
  > {
    await this.#whenReady();
    const { rows } = await this.#pool.query<
      Checkpoint & { entries: SealedEntry[]; approvals: SealedApproval[] | null }
    >(
      `SELECT c.seq, c.previous, c.root, c.events, c.at, c.hash,
         (SELECT json_agg(json_build_object('checkpoint', e.checkpoint, 'jobId', e.job_id,
            'events', e.events, 'hash', e.hash)) FROM warrant_checkpoint_entries e
          WHERE e.checkpoint = c.seq) AS entries,
         (SELECT json_agg(json_build_object('checkpoint', a.checkpoint, 'jobId', a.job_id,
            'position', a.request_position, 'hash', a.hash)) FROM warrant_checkpoint_approvals a
          WHERE a.checkpoint = c.seq) AS approvals
       FROM warrant_checkpoints c
       WHERE c.seq = (SELECT max(checkpoint) FROM warrant_checkpoint_entries WHERE job_id = $1)`,
      [jobId],
    );
    const row = rows[0];
    if (row === undefined) return undefined;
    const { entries, approvals, ...checkpoint } = row;
    return { checkpoint, entries: entries ?? [], approvals: approvals ?? [] };
  }

  /** The requests of these jobs the ledger holds as decided (a restored copy shows them pending). */
  async consumedIn(jobIds: readonly string[]): Promise<ConsumedRequest[]> {
    await this.#whenReady();
    const { rows } = await this.#pool.query<{ job_id: string; request_position: number }>(
      'SELECT job_id, request_position FROM warrant_approval_ledger WHERE job_id = ANY($1::text[])',
      [jobIds],
    );
    return rows.map((row) => ({ jobId: row.job_id, position: row.request_position }));
  }
}

/** A PostgreSQL store position, `[created_at, seq]` (seq in decimal), or undefined. */
function postgresPosition(position: string): [string, string] | undefined {
  try {
    const value: unknown = JSON.parse(position);
    return Array.isArray(value) &&
      value.length === 2 &&
      typeof value[0] === 'string' &&
      typeof value[1] === 'string' &&
      /^\d{1,18}$/.test(value[1])
      ? (value as [string, string])
      : undefined;
  } catch {
    return undefined;
  }
}
