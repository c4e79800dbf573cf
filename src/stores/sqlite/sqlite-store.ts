/**
 * The embedded durable store (`store: 'sqlite:<file>'`, docs/guide/stores.md, "Which store"), on
 * better-sqlite3: one connection per store, WAL, statements prepared once (at open, or on first
 * use), and each state change one synchronous `db.transaction` call (docs/decisions.md, "House
 * rules"). Changes reported in the same turn of the event loop (jobs in flight together) are
 * committed together in one transaction (group commit; when a change of it fails, the batch runs
 * again with one savepoint per change, so that change alone fails); the promise of a change settles
 * only once it is committed, and the executor waits for it, so a change is on disk before the
 * runtime goes on (the "started" record before the capability runs).
 *
 * Values are stored as JSON through toJsonSafe (json-value.ts): what JSON cannot hold is
 * recorded as documented there, and never crashes a write. The goal and capability columns hold
 * JSON text too (stores/shared/record-columns.ts), so every string comes back exactly.
 */
import { ErrorCode } from '../../errors/error-codes.js';
import type Sqlite from 'better-sqlite3';
import { Database } from './sqlite-driver.cjs';
import { createError } from '../../errors/warrant-error.js';
import type { Job, JobEvent, JobListFilter, JobStep } from '../../jobs/job.js';
import type {
  ApprovalLedger,
  AwaitingIndex,
  AwaitingJob,
  CancelStore,
  Checkpoint,
  CheckpointEntry,
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
  OutboxStore,
  OwnedStore,
  RecordedChain,
  SealedApproval,
  SealedEntry,
  SealScanStore,
  StoredCancel,
  StoreScan,
  StoreSeals,
} from '../../jobs/job-store.js';
import { isFinished } from '../../jobs/job.js';
import {
  alreadyConsumed,
  checkStoredRequest,
  claimedRequest,
  type ClaimedRequest,
} from '../shared/approval-ledger.js';
import {
  ledgerLeaf,
  MISSING_ENTRY,
  nextCheckpoint,
  originCheckpoint,
} from '../../record/checkpoint.js';
import { ChainHeads } from '../shared/chain-heads.js';
import {
  newOwnerId,
  processAlive,
  thisProcess,
  type OwnerProcess,
} from '../shared/owner-identity.js';
import { CheckpointSealer } from '../shared/checkpoint-sealer.js';
import { WalCheckpointer, type WalCheckpointerOptions } from './wal-checkpointer.js';
import { GroupCommit } from '../shared/group-commit.js';
import { schemaStep } from '../shared/schema-version.js';
import { SqliteLimits } from './sqlite-limits.js';
import { SqliteOutbox } from './sqlite-outbox.js';
import { sqliteScan, type ScanHead } from './sqlite-scan.js';
import {
  isTransientStoreError,
  retryTransient,
  StoreHealth,
  unwrittenOf,
  type StoreOutageListener,
  type WriteFault,
} from '../shared/write-retry.js';
import {
  decodeEvent,
  decodeJob,
  decodeStep,
  encode,
  encodeText,
  jobRow,
  jobState,
} from '../shared/record-columns.js';

import type { SealStatements, LedgerRow } from './sqlite-schema.js';
import {
  SQLITE_SCHEMA_VERSION,
  APPROVAL_LEDGER,
  MIGRATE_4_TO_5,
  MIGRATE_OWNERS,
  LEDGER_COLUMNS,
  MIGRATE_1_TO_2,
  MIGRATE_2_TO_3,
  SCHEMA,
  CHECKPOINT_SCHEMA,
  UNCHAINED_JOBS,
  UNSEALED_HEADS,
  CHECKPOINT_COLUMNS,
  ledgerEntry,
  CANCEL_SCHEMA,
  OWNER_SCHEMA,
} from './sqlite-schema.js';
import type {
  JobRow,
  StepRow,
  EventRow,
  EncodedChange,
  LedgerStatements,
  PendingWrite,
} from './sqlite-rows.js';
import {
  INSERT_JOB,
  UPDATE_JOB,
  isActive,
  OWNED_ELSEWHERE,
  JOB_COLUMNS,
  STEP_COLUMNS,
  IN_SEQS,
  STEP_VALUES,
  EVENT_VALUES,
  ROWS_PER_STATEMENT,
  placeholders,
  pushStep,
} from './sqlite-rows.js';

export { SQLITE_SCHEMA_VERSION, UNSEALED_HEADS } from './sqlite-schema.js';

export interface SqliteStoreOptions {
  /** Key of the event chain's HMAC (record/event-chain.ts); plain SHA-256 without one. */
  readonly auditKey?: string | undefined;
  /** Told when job writes start failing on a locked database, and when one succeeds again. */
  readonly onOutage?: StoreOutageListener | undefined;
  /**
   * Test seam: faults injected around each transaction of the write path
   * (stores/shared/write-retry.ts).
   */
  readonly faults?: WriteFault | undefined;
  /** Test seam: when SQLite's WAL checkpoints move to a worker thread (wal-checkpointer.ts). */
  readonly walCheckpoints?: WalCheckpointerOptions | undefined;
}

/** An owner's recorded process; anything unreadable is a process that cannot be alive. */
/** Whether a recovering runtime takes this job: a record it cannot read, or a throw, is not. */
function admitted(job: Job | undefined, admits: (job: Job) => boolean): boolean {
  if (job === undefined) return false;
  try {
    return admits(job) === true;
  } catch {
    return false;
  }
}

function parseProcess(text: string): OwnerProcess {
  try {
    const parsed = JSON.parse(text) as Partial<OwnerProcess> | null;
    return typeof parsed?.pid === 'number' ? (parsed as OwnerProcess) : { pid: 0 };
  } catch {
    return { pid: 0 };
  }
}

function storeError(code: ErrorCode, message: string, cause?: unknown): Error {
  return createError(Error, code, message, cause);
}

export class SqliteJobStore
  implements
    JobStore,
    AwaitingIndex,
    SealScanStore,
    ApprovalLedger,
    CancelStore,
    IdempotencyStore,
    OwnedStore,
    LimitStore,
    OutboxStore
{
  readonly #db: Sqlite.Database;
  readonly #insertJob: Sqlite.Statement;
  readonly #updateJob: Sqlite.Statement;
  readonly #claimStep: Sqlite.Statement;
  readonly #jobById: Sqlite.Statement;
  readonly #stepsOf: Sqlite.Statement;
  readonly #eventsOf: Sqlite.Statement;
  readonly #stepsIn: Sqlite.Statement;
  readonly #eventsIn: Sqlite.Statement;
  /** Runs a read in one transaction: the job rows, steps and events of one snapshot. */
  readonly #snapshot: (read: () => Job[]) => Job[];
  readonly #seqOf = new Map<string, number>();
  /** The last chain hash of each job being written (record/event-chain.ts). */
  readonly #heads: ChainHeads;
  readonly #lastHash: Sqlite.Statement;
  readonly #hashesOf: Sqlite.Statement;
  readonly #auditKey: string | undefined;
  /**
   * The ledger of consumed approvals (stores/shared/approval-ledger.ts), prepared when first used.
   */
  #ledger: LedgerStatements | undefined;
  readonly #listQueries = new Map<string, Sqlite.Statement>();
  /** The cancel statements, prepared on first use. */
  #insertCancel: Sqlite.Statement | undefined;
  #cancelsOf: Sqlite.Statement | undefined;
  #consumedIn: Sqlite.Statement | undefined;
  /** The idempotency claim (a transaction) and its statements, made on first use. */
  #claimKey:
    Sqlite.Transaction<(claim: IdempotencyClaim) => IdempotencyHolder | undefined> | undefined;
  #heldKey: Sqlite.Statement | undefined;
  #putKey: Sqlite.Statement | undefined;
  /** This store's owner id (docs/api.md, "Recovery"). */
  readonly owner: string = newOwnerId();
  /** The multi-row step and event statements, by their number of rows (prepared when first used). */
  readonly #stepStatements: Sqlite.Statement[] = [];
  readonly #eventStatements: Sqlite.Statement[] = [];
  readonly #one: (change: EncodedChange) => void;
  readonly #together: (writes: readonly PendingWrite[]) => void;
  /** Runs a batch with one savepoint per change; `errors[i]` receives the error of change i. */
  readonly #batch: (writes: readonly PendingWrite[], errors: unknown[]) => void;
  /**
   * Changes reported in one turn of the event loop, committed together on the next (group
   * commit); reads flush it first.
   */
  readonly #writes = new GroupCommit<EncodedChange>({
    write: (writes) => {
      const retried = this.#commit(writes);
      if (retried === undefined) return this.#committed(writes);
      return retried.then(() => this.#committed(writes));
    },
    // The executor writes nothing more for a job whose change failed.
    forget: (change) => {
      this.#heads.forget(change.id);
      this.#seqOf.delete(change.id);
    },
  });

  /** The notification outbox (docs/api.md, "Notifications"): written only once attached. */
  readonly outbox: SqliteOutbox;
  /** Limit counters (docs/api.md, "Limits"): their table is created when first used. */
  readonly #limits: SqliteLimits;

  /** Writes the next checkpoint (docs/api.md, "Store checkpoints"), off the path of a step. */
  readonly #sealer = new CheckpointSealer(() => this.#sealNow());
  /** SQLite's own WAL checkpoints, moved off the event loop once the store is busy. */
  readonly #wal: WalCheckpointer;
  readonly #health: StoreHealth;
  readonly #faults: WriteFault | undefined;
  /** The chain hash of an event, by job id and position (a lost commit is looked for), on first use. */
  #eventHash: Sqlite.Statement | undefined;

  /**
   * Opens (and creates or migrates) the database at `file`, or runs on a connection already
   * open (the store then owns it and closes it): tests hand it one they hold, to act on the very
   * connection the store writes through.
   */
  constructor(file: string | Sqlite.Database, options: SqliteStoreOptions = {}) {
    this.#heads = new ChainHeads(options.auditKey);
    this.#auditKey = options.auditKey;
    this.#health = new StoreHealth(options.onOutage);
    this.#faults = options.faults;
    if (typeof file === 'string') {
      try {
        this.#db = new Database(file);
      } catch (error) {
        throw storeError(
          ErrorCode.STORE_OPEN_FAILED,
          `Cannot open the SQLite store at ${JSON.stringify(file)}: ${(error as Error).message}`,
          error,
        );
      }
    } else {
      this.#db = file;
    }
    const db = this.#db;
    db.pragma('journal_mode = WAL');
    // In WAL mode NORMAL keeps every committed transaction through a crash of the process
    // (SIGKILL included, test/stores/sqlite/sqlite-crash.test.ts); only an OS crash or power loss can
    // lose the last transactions. FULL would fsync every transition.
    db.pragma('synchronous = NORMAL');
    db.pragma('busy_timeout = 5000');
    db.pragma('foreign_keys = ON');
    this.#wal = new WalCheckpointer(db, options.walCheckpoints);
    this.#migrate(db.name);
    db.exec(CHECKPOINT_SCHEMA);
    this.#markOrigin();
    db.exec(CANCEL_SCHEMA);
    this.outbox = new SqliteOutbox(db);
    this.#registerOwner();
    this.#limits = new SqliteLimits(db);
    this.#insertJob = db.prepare(INSERT_JOB);
    this.#updateJob = db.prepare(UPDATE_JOB);
    // The check-and-set of a decision on an approval request: SQLite runs one writer at a time,
    // so of concurrent claims (any process on this file) exactly one finds the step waiting.
    this.#claimStep = db.prepare(
      "UPDATE job_steps SET status = ? WHERE job_seq = ? AND position = ? AND status = 'awaiting_approval'",
    );
    this.#lastHash = db
      .prepare(
        'SELECT hash FROM job_events WHERE job_seq = (SELECT seq FROM jobs WHERE id = ?) ORDER BY position DESC LIMIT 1',
      )
      .pluck();
    this.#hashesOf = db
      .prepare('SELECT hash FROM job_events WHERE job_seq = ? ORDER BY position')
      .pluck();
    this.#jobById = db.prepare(`SELECT ${JOB_COLUMNS} FROM jobs WHERE id = ?`).raw();
    this.#stepsOf = db
      .prepare(`SELECT ${STEP_COLUMNS} FROM job_steps WHERE job_seq = ? ORDER BY position`)
      .raw();
    this.#eventsOf = db
      .prepare('SELECT job_seq, event FROM job_events WHERE job_seq = ? ORDER BY position')
      .raw();
    // The steps and events of every job of a list in one query each (not two per job).
    this.#stepsIn = db
      .prepare(`SELECT ${STEP_COLUMNS} FROM job_steps WHERE ${IN_SEQS} ORDER BY job_seq, position`)
      .raw();
    this.#eventsIn = db
      .prepare(`SELECT job_seq, event FROM job_events WHERE ${IN_SEQS} ORDER BY job_seq, position`)
      .raw();
    this.#snapshot = db.transaction((read: () => Job[]) => read());

    this.#one = db.transaction((change: EncodedChange) => this.#write(change));
    // A batch first runs as one transaction with no savepoint; if a change fails, nothing of it
    // is kept and it runs again with one savepoint per change, so a change that fails leaves
    // the others alone (the savepoints cost about as much as the statements of a change).
    this.#together = db.transaction((writes: readonly PendingWrite[]) =>
      this.#writeAll(writes.map((pending) => pending.change)),
    );
    this.#batch = db.transaction((writes: readonly PendingWrite[], errors: unknown[]) => {
      for (let index = 0; index < writes.length; index++) {
        try {
          this.#one((writes[index] as PendingWrite).change);
        } catch (error) {
          // Locked: the whole batch is rolled back and tried again (stores/shared/write-retry.ts).
          if (isTransientStoreError(error)) throw error;
          errors[index] = error;
          // Some errors (SQLITE_FULL, SQLITE_IOERR, ...) roll back the whole transaction: then
          // nothing of this batch is on disk, and the rest must not run outside a transaction.
          if (!db.inTransaction) throw error;
        }
      }
    });
  }

  /**
   * Queues one change, its values encoded now, and returns a promise settled once it is
   * committed. Changes queued while the event loop runs other work (other jobs in flight) share
   * one transaction, flushed on the next turn (group commit): each change is still durable before
   * its promise settles, that is before the executor goes on, at a fraction of the cost of one
   * commit per change.
   */
  #enqueue(change: EncodedChange): Promise<void> {
    return this.#writes.add(change);
  }

  /**
   * Commits a batch of queued changes (the group commit's write): in one transaction, or each in
   * its own savepoint once one has failed; then settles each, in order. When the database stays
   * locked (SQLITE_BUSY beyond the busy time-out, SQLITE_LOCKED), the batch is tried again later
   * (stores/shared/write-retry.ts) and the promise returned settles once it is.
   */
  #commit(writes: readonly PendingWrite[]): Promise<void> | undefined {
    let errors: unknown[];
    try {
      errors = this.#commitNow(writes);
    } catch (error) {
      return this.#retry(writes, error);
    }
    this.#settleAll(writes, errors);
    return undefined;
  }

  /**
   * Commits changes; returns the error of each (undefined for a change committed). Throws a
   * transient error (stores/shared/write-retry.ts), after which nothing of them is committed, or
   * may be (the test seam's `after`).
   */
  #commitNow(writes: readonly PendingWrite[]): unknown[] {
    const errors: unknown[] = [];
    try {
      if (writes.length === 1) this.#one((writes[0] as PendingWrite).change);
      else this.#commitBatch(writes, errors);
    } catch (error) {
      if (isTransientStoreError(error)) throw error;
      for (let index = 0; index < writes.length; index++) errors[index] ??= error;
      return errors;
    }
    const after = this.#faults?.('after');
    if (after !== undefined) throw after;
    return errors;
  }

  #settleAll(writes: readonly PendingWrite[], errors: readonly unknown[]): void {
    writes.forEach((pending, index) => {
      if (errors[index] === undefined) pending.resolve();
      else this.#writes.fail(pending, errors[index]);
    });
  }

  /** Tries a batch again after a transient error, writing only what is not committed yet. */
  async #retry(writes: readonly PendingWrite[], failed: unknown): Promise<void> {
    let pending = writes;
    try {
      await retryTransient(
        () => this.#settleAll(pending, this.#commitNow(pending)),
        () => {
          pending = this.#unwritten(pending);
          return pending.length === 0;
        },
        this.#health,
        failed,
      );
    } catch (error) {
      for (const write of pending) this.#writes.fail(write, error);
    }
  }

  /**
   * Resolves the changes a lost attempt committed after all and returns the others
   * (`unwrittenOf`, stores/shared/write-retry.ts).
   */
  #unwritten(writes: readonly PendingWrite[]): readonly PendingWrite[] {
    this.#eventHash ??= this.#db
      .prepare(
        'SELECT hash FROM job_events WHERE job_seq = (SELECT seq FROM jobs WHERE id = ?) AND position = ?',
      )
      .pluck();
    const statement = this.#eventHash;
    return unwrittenOf(
      writes,
      ({ change }) => {
        const last = change.events.length - 1;
        if (last < 0) return undefined;
        return { id: change.id, position: change.firstEvent + last, hash: change.hashes[last] };
      },
      (last) => statement.get(last.id, last.position) as string | null | undefined,
      (write) => write.resolve(),
    );
  }

  #committed(writes: readonly PendingWrite[]): void {
    let events = 0;
    for (const pending of writes) events += pending.change.events.length;
    this.#sealer.committed(events);
    this.#wal.committed();
  }

  /** Commits several changes: together, or each in its own savepoint once one has failed. */
  #commitBatch(writes: readonly PendingWrite[], errors: unknown[]): void {
    try {
      this.#together(writes);
      return;
    } catch (error) {
      // Rolled back as a whole: the job rows it inserted are not there.
      for (const pending of writes)
        if (pending.change.job !== undefined) this.#seqOf.delete(pending.change.id);
      // Locked: so would be each change alone; the batch is tried again as a whole.
      if (isTransientStoreError(error)) throw error;
    }
    this.#batch(writes, errors);
  }

  /** Runs the statements of one queued change (inside a transaction or savepoint). */
  #write(change: EncodedChange): void {
    this.#writeAll([change]);
  }

  /**
   * Runs the statements of queued changes, in order (inside one transaction or savepoint): each
   * job row on its own, then the step rows and the event rows of all of them by multi-row
   * statements (ROWS_PER_STATEMENT rows each), rather than one statement per row.
   */
  #writeAll(changes: readonly EncodedChange[]): void {
    const before = this.#faults?.('before');
    if (before !== undefined) throw before;
    const steps: (string | number | null)[] = [];
    const events: (string | number)[] = [];
    for (const change of changes) {
      const seq = this.#writeJobRow(change);
      const changed = change.steps;
      for (let index = 0; index < changed.length; index += STEP_VALUES) {
        steps.push(seq);
        for (let column = 0; column < STEP_VALUES; column++)
          steps.push(changed[index + column] as string | number | null);
      }
      const { firstEvent, hashes } = change;
      change.events.forEach((event, offset) =>
        events.push(seq, firstEvent + offset, event, hashes[offset] as string),
      );
    }
    this.#runRows(this.#stepRows, steps, STEP_VALUES + 1);
    this.#runRows(this.#eventRows, events, EVENT_VALUES);
    for (const change of changes) if (change.outbox !== undefined) this.outbox.write(change.outbox);
    for (const change of changes) if (change.finished) this.#seqOf.delete(change.id);
  }

  /** Inserts or updates the job row of a change (claiming its step first); returns its seq. */
  #writeJobRow(change: EncodedChange): number {
    if (change.job !== undefined) {
      const seq = Number(
        this.#insertJob.run(...change.job, isActive(change.status) ? this.owner : null)
          .lastInsertRowid,
      );
      this.#seqOf.set(change.id, seq);
      return seq;
    }
    const seq = this.#seq(change.id);
    const { claims } = change;
    if (
      claims !== undefined &&
      this.#claimStep.run(claims.status, seq, claims.position).changes !== 1
    ) {
      throw storeError(
        ErrorCode.APPROVAL_NOT_PENDING,
        `Step ${claims.position} of job ${JSON.stringify(change.id)} no longer awaits approval`,
      );
    }
    if (claims !== undefined) this.#consume(change.id, seq, claims.request, change.updatedAt);
    const { status } = change;
    this.#updateJob.run(status, change.updatedAt, change.state, status, this.owner, seq);
    return seq;
  }

  /** Runs `statementFor(rows)` over `values`, `width` values a row, at most ROWS_PER_STATEMENT rows a run. */
  #runRows(
    statementFor: (rows: number) => Sqlite.Statement,
    values: readonly (string | number | null)[],
    width: number,
  ): void {
    const rows = values.length / width;
    for (let from = 0; from < rows; from += ROWS_PER_STATEMENT) {
      const count = Math.min(ROWS_PER_STATEMENT, rows - from);
      statementFor(count).run(
        count === rows ? values : values.slice(from * width, (from + count) * width),
      );
    }
  }

  /** The upsert of `rows` step rows (the decision column kept when the row gives NULL). */
  readonly #stepRows = (rows: number): Sqlite.Statement =>
    (this.#stepStatements[rows] ??= this.#db.prepare(
      `INSERT INTO job_steps (job_seq, position, capability, status, fixed, state, decision)
       VALUES ${placeholders(rows, STEP_VALUES + 1)}
       ON CONFLICT (job_seq, position) DO UPDATE SET status = excluded.status,
         state = excluded.state, decision = coalesce(excluded.decision, job_steps.decision)`,
    ));

  /** The insert of `rows` event rows. */
  readonly #eventRows = (rows: number): Sqlite.Statement =>
    (this.#eventStatements[rows] ??= this.#db.prepare(
      `INSERT INTO job_events (job_seq, position, event, hash) VALUES ${placeholders(rows, EVENT_VALUES)}`,
    ));

  #statementsOfLedger(): LedgerStatements {
    this.#ledger ??= {
      events: this.#db
        .prepare('SELECT event, hash FROM job_events WHERE job_seq = ? ORDER BY position')
        .raw(),
      consume: this.#db.prepare(
        `INSERT INTO approval_ledger (${LEDGER_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
      ),
      mark: this.#db.prepare(
        'INSERT INTO approval_ledger_unsealed (job_id, request_position) VALUES (?, ?)',
      ),
      consumedOf: this.#db
        .prepare(
          'SELECT request_position, step_id, decision FROM approval_ledger WHERE job_id = ? ORDER BY request_position',
        )
        .raw(),
    };
    return this.#ledger;
  }

  /**
   * Inside the consuming write: checks the request as stored (stores/shared/approval-ledger.ts) and
   * enters it in the ledger; a request found there already was decided before (a restored copy).
   */
  #consume(id: string, seq: number, request: ClaimedRequest, at: string): void {
    const ledger = this.#statementsOfLedger();
    const rows = (ledger.events.all(seq) as [string, string | null][]).map(([event, hash]) => ({
      event,
      hash,
    }));
    const checked = checkStoredRequest(id, request, rows, this.#auditKey, Date.now());
    // The insert is the claim: its primary key lets one decision on a request in, ever.
    const entered = ledger.consume.run(
      id,
      checked.position,
      request.stepId,
      request.inputDigest ?? null,
      checked.hash,
      request.decision,
      at,
    );
    if (entered.changes !== 1) throw alreadyConsumed(id, request);
    ledger.mark.run(id, checked.position);
  }

  #migrate(file: string): void {
    const db = this.#db;
    db.transaction(() => {
      db.exec(SCHEMA);
      db.exec(APPROVAL_LEDGER);
      const row = db.prepare('SELECT version FROM schema_version').get() as
        { version: number } | undefined;
      const step = schemaStep(
        row?.version,
        SQLITE_SCHEMA_VERSION,
        `SQLite store at ${JSON.stringify(file)}`,
      );
      if (step === 'create') {
        db.prepare('INSERT INTO schema_version (version) VALUES (?)').run(SQLITE_SCHEMA_VERSION);
      } else if (step === 'migrate' && row !== undefined) {
        // Older versions are migrated step by step, in this one transaction.
        if (row.version < 2) db.exec(MIGRATE_1_TO_2);
        if (row.version < 3) db.exec(MIGRATE_2_TO_3);
        // Before version 4 there was no ledger: the one just created has the column already.
        if (row.version === 4) db.exec(MIGRATE_4_TO_5);
        if (row.version < 6) this.#migrateOwners();
        db.prepare('UPDATE schema_version SET version = ?').run(SQLITE_SCHEMA_VERSION);
      }
    })();
  }

  /**
   * Writes the store's chain origin (record/checkpoint.ts) once: the jobs recorded before the event
   * chain, sealed as such, none in a store created with chains (docs/decisions.md, "Jobs without
   * a chain"). In one IMMEDIATE transaction, after the checkpoint head like any seal.
   */
  #markOrigin(): void {
    const db = this.#db;
    const marked = db.prepare('SELECT 1 FROM chain_origin LIMIT 1').pluck();
    if (marked.get() !== undefined) return;
    db.transaction(() => {
      if (marked.get() !== undefined) return;
      const unchained = (db.prepare(UNCHAINED_JOBS).raw().all() as [string, number][]).map(
        ([jobId, events]) => ({ jobId, events }),
      );
      const statements = this.#sealStatements();
      const head = statements.head.get() as { seq: number; hash: string } | undefined;
      const { checkpoint, entries } = originCheckpoint(
        head,
        unchained,
        new Date().toISOString(),
        this.#auditKey,
      );
      this.#writeCheckpoint(statements, checkpoint, entries);
      db.prepare('INSERT INTO chain_origin (checkpoint) VALUES (?)').run(checkpoint.seq);
    }).immediate();
  }

  /**
   * Version 6 keeps a job's owner in its row (was: a job_owners row per job, written by triggers:
   * one more table written by the commits that create and end each job). The owners of queued
   * and executing jobs are copied; job_owners is left as it is, unused.
   */
  #migrateOwners(): void {
    const db = this.#db;
    const has = (sql: string) => db.prepare(sql).pluck().get() !== undefined;
    if (!has("SELECT 1 FROM pragma_table_info('jobs') WHERE name = 'owner'"))
      db.exec('ALTER TABLE jobs ADD COLUMN owner TEXT');
    if (has("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'job_owners'"))
      db.exec(MIGRATE_OWNERS);
  }

  #seq(id: string): number {
    const known = this.#seqOf.get(id);
    if (known !== undefined) return known;
    const row = this.#db.prepare('SELECT seq FROM jobs WHERE id = ?').get(id) as
      { seq: number } | undefined;
    if (row === undefined)
      throw storeError(ErrorCode.JOB_NOT_FOUND, `No job ${JSON.stringify(id)} in the SQLite store`);
    return row.seq;
  }

  /** Chain hashes of events appended to a job, continuing its chain. */
  #chain(id: string, events: readonly JobEvent[], finished: boolean): string[] {
    // A job this store did not create (none today) continues from its last stored hash.
    const previous =
      this.#heads.last(id) ?? (this.#lastHash.get(id) as string | null | undefined) ?? '';
    return this.#heads.append(id, previous, events, finished);
  }

  create(job: Job): Promise<void> {
    this.#heads.start(job.id);
    const steps: (string | number | null)[] = [];
    job.steps.forEach((step, position) => pushStep(steps, position, step, false));
    return this.#enqueue({
      id: job.id,
      job: jobRow(job),
      status: job.status,
      updatedAt: job.updatedAt,
      state: '',
      finished: false,
      steps,
      firstEvent: 0,
      events: job.events.map(encode),
      hashes: this.#chain(job.id, job.events, isFinished(job)),
      claims: undefined,
      outbox: this.outbox.entriesOf(job, job.events),
    });
  }

  update(job: Job, change: JobChange): Promise<void> {
    const steps: (string | number | null)[] = [];
    for (const position of change.steps)
      pushStep(steps, position, job.steps[position] as JobStep, position === change.decided);
    const finished = isFinished(job);
    const claimed = change.claims;
    if (claimed !== undefined) {
      // Another process may have written this job since: its chain continues from the file.
      // Its row is looked up now: a transaction that reads before it writes cannot take the
      // write lock once another process has committed (SQLITE_BUSY_SNAPSHOT).
      this.#writes.flush();
      this.#heads.forget(job.id);
      this.#seqOf.set(job.id, this.#seq(job.id));
    }
    return this.#enqueue({
      id: job.id,
      job: undefined,
      status: job.status,
      updatedAt: job.updatedAt,
      state: jobState(job),
      finished,
      steps,
      firstEvent: job.events.length - change.events.length,
      events: change.events.map(encode),
      hashes: this.#chain(job.id, change.events, finished),
      // Set in both literals, last: one shape for every change (a spread made each one slower).
      claims:
        claimed === undefined
          ? undefined
          : {
              position: claimed,
              status: (job.steps[claimed] as JobStep).status,
              request: claimedRequest(job, change, claimed),
            },
      outbox: this.outbox.entriesOf(job, change.events),
    });
  }

  /** Records this store's owner and its process. */
  #registerOwner(): void {
    const db = this.#db;
    db.transaction(() => {
      db.exec(OWNER_SCHEMA);
      db.prepare('INSERT INTO runtime_owners (owner, process, at) VALUES (?, ?, ?)').run(
        this.owner,
        JSON.stringify(thisProcess()),
        new Date().toISOString(),
      );
    }).immediate();
  }

  /**
   * Takes the queued and executing jobs whose owner is gone (its process ended, by pid, start
   * time and boot id; or its owner record was removed), each by a conditional update, in one
   * IMMEDIATE transaction: of processes recovering together, one takes each job. Resolves their
   * ids, oldest first. Owners in this very process are alive. With `admits`, only the jobs it
   * answers true for: the others stay their gone owner's (docs/api.md, "Recovery").
   */
  claimOrphans(admits?: (job: Job) => boolean): string[] {
    this.#writes.flush();
    const db = this.#db;
    const take = db.prepare('UPDATE jobs SET owner = ? WHERE id = ? AND owner = ?');
    const forget = db.prepare('DELETE FROM runtime_owners WHERE owner = ?');
    const claim = db.transaction(() => {
      const { jobs, gone } = this.#goneOwnersJobs();
      const kept = new Set<string>();
      const taken: string[] = [];
      for (const [jobId, owner] of jobs) {
        if (admits !== undefined && !admitted(this.get(jobId), admits)) {
          kept.add(owner);
          continue;
        }
        if (take.run(this.owner, jobId, owner).changes === 1) taken.push(jobId);
      }
      // A gone owner's record goes once nothing of it is left (a removed record is gone too).
      for (const owner of gone) if (!kept.has(owner)) forget.run(owner);
      return taken;
    });
    return claim.immediate();
  }

  orphaned(): string[] {
    this.#writes.flush();
    return this.#goneOwnersJobs().jobs.map(([jobId]) => jobId);
  }

  /**
   * The queued and executing jobs owned elsewhere whose owner is gone, oldest first, as
   * `[jobId, owner]`, and those owners (docs/api.md, "Recovery": gone, not guessed).
   */
  #goneOwnersJobs(): { jobs: [string, string][]; gone: Set<string> } {
    const rows = this.#db.prepare(OWNED_ELSEWHERE).raw().all(this.owner) as [
      string,
      string,
      string | null,
    ][];
    const alive = new Map<string, boolean>();
    const jobs: [string, string][] = [];
    for (const [jobId, owner, recorded] of rows) {
      let live = alive.get(owner);
      if (live === undefined) {
        live = recorded !== null && processAlive(parseProcess(recorded));
        alive.set(owner, live);
      }
      if (!live) jobs.push([jobId, owner]);
    }
    const gone = new Set([...alive].filter(([, live]) => !live).map(([owner]) => owner));
    return { jobs, gone };
  }

  requestCancel(cancel: StoredCancel): void {
    (this.#insertCancel ??= this.#db.prepare(
      'INSERT INTO job_cancels (job_id, request) VALUES (?, ?) ON CONFLICT (job_id) DO NOTHING',
    )).run(cancel.jobId, JSON.stringify(cancel));
  }

  claimIdempotency(claim: IdempotencyClaim): IdempotencyHolder | undefined {
    this.#claimKey ??= this.#db.transaction((wanted: IdempotencyClaim) => {
      const held = (this.#heldKey ??= this.#db
        .prepare(
          'SELECT job_id, digest, expires_at FROM job_idempotency WHERE scope = ? AND key = ?',
        )
        .raw()).get(wanted.scope, wanted.key) as [string, string, number] | undefined;
      if (held !== undefined && held[2] > wanted.at) return { jobId: held[0], digest: held[1] };
      (this.#putKey ??= this.#db.prepare(
        'INSERT OR REPLACE INTO job_idempotency (scope, key, job_id, digest, expires_at) VALUES (?, ?, ?, ?, ?)',
      )).run(wanted.scope, wanted.key, wanted.jobId, wanted.digest, wanted.expiresAt);
      return undefined;
    });
    // IMMEDIATE: the write lock is taken before the read, so of processes claiming one key
    // together exactly one finds it free (busy_timeout makes the others wait their turn).
    return this.#claimKey.immediate(claim);
  }

  takeLimits(takes: readonly LimitTake[], at: number): LimitVerdict {
    return this.#limits.take(takes, at);
  }

  limitCounters(at: number): LimitCounter[] {
    return this.#limits.counters(at);
  }

  cancelRequests(jobIds: readonly string[]): StoredCancel[] {
    const rows = (this.#cancelsOf ??= this.#db
      .prepare('SELECT request FROM job_cancels WHERE job_id IN (SELECT value FROM json_each(?))')
      .pluck()).all(JSON.stringify(jobIds)) as string[];
    return rows.map((row) => JSON.parse(row) as StoredCancel);
  }

  /** The job with the chain hash of each of its events, read in one snapshot. */
  readChain(id: string): RecordedChain | undefined {
    this.#writes.flush();
    let hashes: (string | null)[] = [];
    let consumed: ConsumedApproval[] = [];
    const [job] = this.#snapshot(() => {
      const row = this.#jobById.get(id) as JobRow | undefined;
      if (row === undefined) return [];
      hashes = this.#hashesOf.all(row[0]) as (string | null)[];
      consumed = this.#consumedOf(id);
      return this.#toJobs([row]);
    });
    return job === undefined ? undefined : { job, hashes, consumed };
  }

  /** The job's requests the ledger holds as consumed. */
  #consumedOf(id: string): ConsumedApproval[] {
    const rows = this.#statementsOfLedger().consumedOf.all(id) as [number, string, string][];
    return rows.map(([position, stepId, decision]) => ({ position, stepId, decision }));
  }

  // Reads commit what is queued first, so a reader sees every change reported before it.
  get(id: string): Job | undefined {
    this.#writes.flush();
    return this.#snapshot(() => {
      const row = this.#jobById.get(id) as JobRow | undefined;
      return row === undefined ? [] : this.#toJobs([row]);
    })[0];
  }

  list(filter: JobListFilter): Job[] {
    this.#writes.flush();
    const conditions: string[] = [];
    const values: unknown[] = [];
    let from = 'jobs';
    let newestFirst = 'jobs.seq DESC';
    if (filter.capability !== undefined) {
      // Walks job_steps_by_capability newest first and stops at the limit; grouping lists a job
      // with several such steps once. (`seq IN (SELECT job_seq ...)` first collected every
      // matching step: 17-26 ms for a capability used by 100,000 of 1,000,000 jobs.)
      from = 'job_steps JOIN jobs ON jobs.seq = job_steps.job_seq';
      newestFirst = 'job_steps.job_seq DESC';
      conditions.push('job_steps.capability = ?');
      values.push(encodeText(filter.capability));
    }
    if (filter.status !== undefined) {
      conditions.push('jobs.status = ?');
      values.push(filter.status);
    }
    if (filter.goal !== undefined) {
      conditions.push('jobs.goal = ?');
      values.push(encodeText(filter.goal));
    }
    const where = conditions.length === 0 ? '' : ` WHERE ${conditions.join(' AND ')}`;
    const group = filter.capability === undefined ? '' : ' GROUP BY job_steps.job_seq';
    const sql = `SELECT ${JOB_COLUMNS} FROM ${from}${where}${group} ORDER BY ${newestFirst} LIMIT ?`;
    let statement = this.#listQueries.get(sql);
    if (statement === undefined) {
      statement = this.#db.prepare(sql).raw();
      this.#listQueries.set(sql, statement);
    }
    const query = statement;
    return this.#snapshot(() => this.#toJobs(query.all(...values, filter.limit ?? -1) as JobRow[]));
  }

  /**
   * Jobs awaiting approval by `seq` (creation order), through the index jobs_by_status
   * (status, seq); a position is the job's seq in decimal.
   */
  listAwaiting(after: string | undefined, limit: number): AwaitingJob[] {
    if (after !== undefined && !/^\d{1,15}$/.test(after))
      throw createError(
        TypeError,
        ErrorCode.JOB_FILTER_INVALID,
        'listAwaiting(): not a position of this store',
      );
    if (limit <= 0) return [];
    this.#writes.flush();
    const sql = `SELECT ${JOB_COLUMNS} FROM jobs WHERE jobs.status = 'awaiting_approval' AND jobs.seq > ? ORDER BY jobs.seq LIMIT ?`;
    let statement = this.#listQueries.get(sql);
    if (statement === undefined) {
      statement = this.#db.prepare(sql).raw();
      this.#listQueries.set(sql, statement);
    }
    const query = statement;
    let seqs: number[] = [];
    const jobs = this.#snapshot(() => {
      const rows = query.all(after === undefined ? 0 : Number(after), limit) as JobRow[];
      seqs = rows.map((row) => row[0]);
      return this.#toJobs(rows);
    });
    return jobs.map((job, index) => ({ job, position: String(seqs[index]) }));
  }

  close(): void {
    if (!this.#db.open) return;
    this.#writes.flush();
    try {
      this.#db.prepare('DELETE FROM runtime_owners WHERE owner = ?').run(this.owner);
    } catch {
      // Left behind, the record names a process that has ended: the next owner removes it.
    }
    if (this.#sealer.stop()) {
      try {
        this.#sealNow();
      } catch {
        // Still marked: the next process that writes this store seals it.
      }
    }
    this.#wal.close();
    this.#db.close();
  }

  /**
   * Writes the next checkpoint of what is marked unsealed, in one IMMEDIATE transaction: it
   * takes SQLite's write lock before it reads the head, so processes sharing the file seal one
   * after another and never fork the chain (the seq primary key backs it).
   */
  #sealNow(): Checkpoint | undefined {
    this.#writes.flush();
    const db = this.#db;
    if (!db.open) return undefined;
    return db
      .transaction(() => {
        const statements = this.#sealStatements();
        const rows = statements.unsealed.all() as [
          string,
          number,
          string | null,
          number | null,
          string | null,
        ][];
        const current: CheckpointEntry[] = [];
        const sealed = new Map<string, CheckpointEntry>();
        for (const [jobId, position, hash, sealedEvents, sealedHash] of rows) {
          // An event without a hash is sealed too, as such: verifyStore reports it.
          current.push({ jobId, events: position + 1, hash: hash ?? MISSING_ENTRY });
          if (sealedEvents !== null && sealedHash !== null)
            sealed.set(jobId, { jobId, events: sealedEvents, hash: sealedHash });
        }
        const head = statements.head.get() as { seq: number; hash: string } | undefined;
        const approvals = (statements.unsealedApprovals.all() as LedgerRow[]).map((row) => ({
          jobId: row[0],
          position: row[1],
          hash: ledgerLeaf(ledgerEntry(row)),
        }));
        const next = nextCheckpoint(
          head,
          current,
          sealed,
          new Date().toISOString(),
          this.#auditKey,
          approvals,
        );
        if (next !== undefined) {
          const { checkpoint, entries } = next;
          this.#writeCheckpoint(statements, checkpoint, entries);
          if (approvals.length > 0) {
            statements.insertApprovals.run(
              checkpoint.seq,
              JSON.stringify(approvals.map((leaf) => [leaf.jobId, leaf.position, leaf.hash])),
            );
            statements.clearApprovals.run();
          }
        }
        statements.clear.run();
        return next?.checkpoint;
      })
      .immediate();
  }

  /** Inserts a checkpoint and its entries (inside the seal's or the origin's transaction). */
  #writeCheckpoint(
    statements: SealStatements,
    checkpoint: Checkpoint,
    entries: readonly CheckpointEntry[],
  ): void {
    statements.insertCheckpoint.run(
      checkpoint.seq,
      checkpoint.previous,
      checkpoint.root,
      checkpoint.events,
      checkpoint.at,
      checkpoint.hash,
    );
    for (const entry of entries)
      statements.insertEntry.run(checkpoint.seq, entry.jobId, entry.events, entry.hash);
  }

  #sealing: SealStatements | undefined;

  /** The statements of a seal, prepared on the first. */
  #sealStatements(): SealStatements {
    const db = this.#db;
    this.#sealing ??= {
      unsealed: db.prepare(UNSEALED_HEADS).raw(),
      head: db.prepare('SELECT seq, hash FROM checkpoints ORDER BY seq DESC LIMIT 1'),
      insertCheckpoint: db.prepare(
        `INSERT INTO checkpoints (${CHECKPOINT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)`,
      ),
      // One entry a run: bound directly, cheaper than one statement decoding a JSON array.
      insertEntry: db.prepare(
        'INSERT INTO checkpoint_entries (checkpoint, job_id, events, hash) VALUES (?, ?, ?, ?)',
      ),
      clear: db.prepare('DELETE FROM checkpoint_unsealed'),
      unsealedApprovals: db
        .prepare(
          `SELECT ${LEDGER_COLUMNS} FROM approval_ledger_unsealed JOIN approval_ledger USING (job_id, request_position)`,
        )
        .raw(),
      insertApprovals: db.prepare(
        `INSERT INTO checkpoint_approvals (checkpoint, job_id, request_position, hash)
         SELECT ?, json_extract(value, '$[0]'), json_extract(value, '$[1]'), json_extract(value, '$[2]')
         FROM json_each(?)`,
      ),
      clearApprovals: db.prepare('DELETE FROM approval_ledger_unsealed'),
    };
    return this.#sealing;
  }

  seal(): Promise<Checkpoint | undefined> {
    try {
      return Promise.resolve(this.#sealNow());
    } catch (error) {
      return Promise.reject(error as Error);
    }
  }

  readSeals(): StoreSeals {
    this.#writes.flush();
    const db = this.#db;
    return db.transaction(() => ({
      ...this.#sealsHead(),
      entries: db
        .prepare(
          'SELECT checkpoint, job_id AS jobId, events, hash FROM checkpoint_entries ORDER BY checkpoint, job_id',
        )
        .all() as SealedEntry[],
      jobIds: db.prepare('SELECT id FROM jobs ORDER BY seq').pluck().all() as string[],
    }))();
  }

  /** The seals a page at a time, for verifyStore (sqlite-scan.ts). */
  scanSeals(page?: number): StoreScan {
    return sqliteScan(
      this.#db,
      () => this.#sealsHead(),
      () => this.#writes.flush(),
      page,
    );
  }

  /** The checkpoints, the ledger and its leaves: what readSeals and scanSeals read whole. */
  #sealsHead(): ScanHead {
    const db = this.#db;
    return {
      checkpoints: db
        .prepare(`SELECT ${CHECKPOINT_COLUMNS} FROM checkpoints ORDER BY seq`)
        .all() as Checkpoint[],
      unsealed: db.prepare('SELECT count(*) FROM checkpoint_unsealed').pluck().get() as number,
      approvals: this.#sealedApprovals(),
      ledger: (
        db.prepare(`SELECT ${LEDGER_COLUMNS} FROM approval_ledger`).raw().all() as LedgerRow[]
      ).map(ledgerEntry),
    };
  }

  /** The ledger leaves checkpoints sealed, of one checkpoint or of all. */
  #sealedApprovals(seq?: number): SealedApproval[] {
    const columns = 'checkpoint, job_id AS jobId, request_position AS position, hash';
    const statement =
      seq === undefined
        ? this.#db.prepare(`SELECT ${columns} FROM checkpoint_approvals`)
        : this.#db.prepare(`SELECT ${columns} FROM checkpoint_approvals WHERE checkpoint = ?`);
    return (seq === undefined ? statement.all() : statement.all(seq)) as SealedApproval[];
  }

  /** The requests of these jobs the ledger holds as decided (a restored copy shows them pending). */
  consumedIn(jobIds: readonly string[]): ConsumedRequest[] {
    this.#writes.flush();
    const rows = (this.#consumedIn ??= this.#db
      .prepare(
        'SELECT job_id, request_position FROM approval_ledger WHERE job_id IN (SELECT value FROM json_each(?))',
      )
      .raw()).all(JSON.stringify(jobIds)) as [string, number][];
    return rows.map(([jobId, position]) => ({ jobId, position }));
  }

  readSeal(
    jobId: string,
  ): { checkpoint: Checkpoint; entries: SealedEntry[]; approvals: SealedApproval[] } | undefined {
    this.#writes.flush();
    const db = this.#db;
    return db.transaction(() => {
      const seq = db
        .prepare('SELECT max(checkpoint) FROM checkpoint_entries WHERE job_id = ?')
        .pluck()
        .get(jobId) as number | null;
      if (seq === null) return undefined;
      const checkpoint = db
        .prepare(`SELECT ${CHECKPOINT_COLUMNS} FROM checkpoints WHERE seq = ?`)
        .get(seq) as Checkpoint | undefined;
      if (checkpoint === undefined) return undefined;
      const entries = db
        .prepare(
          'SELECT checkpoint, job_id AS jobId, events, hash FROM checkpoint_entries WHERE checkpoint = ?',
        )
        .all(seq) as SealedEntry[];
      return { checkpoint, entries, approvals: this.#sealedApprovals(seq) };
    })();
  }

  /** Jobs of these rows, in their order, with their steps and events. */
  #toJobs(rows: readonly JobRow[]): Job[] {
    if (rows.length === 0) return [];
    let stepRows: StepRow[];
    let eventRows: EventRow[];
    if (rows.length === 1) {
      const seq = (rows[0] as JobRow)[0];
      stepRows = this.#stepsOf.all(seq) as StepRow[];
      eventRows = this.#eventsOf.all(seq) as EventRow[];
    } else {
      const seqs = JSON.stringify(rows.map((row) => row[0]));
      stepRows = this.#stepsIn.all(seqs) as StepRow[];
      eventRows = this.#eventsIn.all(seqs) as EventRow[];
    }
    const steps = new Map<number, JobStep[]>();
    const events = new Map<number, JobEvent[]>();
    for (const row of rows) {
      steps.set(row[0], []);
      events.set(row[0], []);
    }
    for (const [seq, capability, status, fixed, state, decision] of stepRows)
      steps.get(seq)?.push(decodeStep(capability, status, fixed, state, decision));
    for (const [seq, event] of eventRows) events.get(seq)?.push(decodeEvent(event));
    return rows.map(([seq, id, status, goal, createdAt, updatedAt, fixed, state]) =>
      decodeJob(
        id,
        status,
        goal,
        createdAt,
        updatedAt,
        fixed,
        state,
        steps.get(seq) as JobStep[],
        events.get(seq) as JobEvent[],
      ),
    );
  }
}
