/**
 * SQLite's own WAL checkpoints, off the event loop (docs/decisions.md, "SQLite's WAL checkpoints
 * off the event loop"). In WAL mode a commit appends pages to the `-wal` file; by default the
 * commit that takes the file past 1,000 pages also copies them back into the database and syncs
 * it, on the thread that committed: the store's, which is the event loop. Once a store is busy
 * (STARTS_AFTER_COMMITS commits), a worker thread with a connection of its own runs those
 * checkpoints instead, PASSIVE ones (they never wait for, nor block, a writer or a reader), and
 * the store's connection stops running them. Nothing about durability changes: a commit is on
 * disk in the WAL as before, and a checkpoint only moves pages already committed.
 *
 * SQLite starts the WAL over at a commit only when every frame in it has been copied back. Under
 * a steady flow of commits the worker never gets there (commits keep coming while it syncs the
 * file), so once the WAL holds RESTART_FRAMES frames the store's connection copies the few frames
 * the worker's last pass left, itself, and its next commit starts the WAL over: the WAL stays
 * within about RESTART_FRAMES pages, and the event loop pays one small checkpoint for every
 * RESTART_FRAMES pages instead of a full one for every 1,000.
 *
 * If the worker cannot run (it fails to start, to open the file, or exits), the store's
 * connection checkpoints by itself again, as SQLite does by default.
 */
import { resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import type Sqlite from 'better-sqlite3';
import { SQLITE_DRIVER_FILE } from './sqlite-driver.cjs';

/** Commits of a store after which its checkpoints move to a worker thread. */
export const STARTS_AFTER_COMMITS = 256;
/** The worker is asked to checkpoint after every so many commits (one pass at a time). */
export const ASK_EVERY_COMMITS = 32;
/** WAL frames (pages) after which the store's connection copies the worker's leftovers. */
export const RESTART_FRAMES = 8_192;
/** SQLite's default `wal_autocheckpoint`, restored when the worker cannot run. */
const SQLITE_AUTOCHECKPOINT = 1000;
/** The longest `close` waits for the worker to close its connection, in milliseconds. */
const CLOSE_WAIT_MS = 2_000;

/** One checkpoint pass of the worker, as SQLite reports its last checkpoint (frames). */
export interface WalPass {
  /** Frames in the WAL when the last checkpoint of the pass ran. */
  readonly log: number;
  /** Of which copied into the database. */
  readonly checkpointed: number;
}

export interface WalCheckpointerOptions {
  /** Commits before the worker starts (STARTS_AFTER_COMMITS); 0 starts it on the first. */
  readonly startsAfter?: number | undefined;
  /** WAL frames after which the store copies the worker's leftovers itself (RESTART_FRAMES). */
  readonly restartFrames?: number | undefined;
  /** Test seam: told after every pass of the worker. */
  readonly onPass?: ((pass: WalPass) => void) | undefined;
  /** Test seam: told when the store copies the worker's leftovers itself. */
  readonly onCopy?: (() => void) | undefined;
  /** Test seam: told when the worker cannot run and the store checkpoints by itself again. */
  readonly onFallback?: ((error: Error) => void) | undefined;
  /** Test seam: the driver file the worker loads (SQLITE_DRIVER_FILE). */
  readonly driverFile?: string | undefined;
}

// The worker, plain CommonJS run with `eval` (no loader, no file to find in either build). A
// pass runs PASSIVE checkpoints back to back while the last one left frames behind because
// commits came in meanwhile (at most 8), so that under a steady flow of commits the WAL is
// copied to its end and SQLite starts it over at the next commit rather than growing it.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driverFile);
const db = new Database(workerData.file, { fileMustExist: true });
const closed = new Int32Array(workerData.closed);
function pass() {
  let result = { busy: 1, log: 0, checkpointed: 0 };
  for (let round = 0; round < 8; round++) {
    result = db.pragma('wal_checkpoint(PASSIVE)')[0];
    if (result.busy !== 0 || result.checkpointed >= result.log) break;
  }
  parentPort.postMessage({ log: result.log, checkpointed: result.checkpointed });
}
parentPort.on('message', (message) => {
  if (message === 'close') {
    db.close();
    Atomics.store(closed, 0, 1);
    Atomics.notify(closed, 0);
    parentPort.close();
    return;
  }
  pass();
});
parentPort.postMessage('ready');
`;

export class WalCheckpointer {
  readonly #db: Sqlite.Database;
  readonly #options: WalCheckpointerOptions;
  readonly #startsAfter: number;
  readonly #restartFrames: number;
  #commits = 0;
  #worker: Worker | undefined;
  /** Set to 1 by the worker once its connection is closed. */
  #closed: Int32Array | undefined;
  /** The worker cannot run (or the store is closing): the store checkpoints by itself. */
  #off = false;
  /** The WAL's frames when the store last copied the worker's leftovers (0: none since a restart). */
  #copiedAt = 0;
  /** The worker has opened its connection and checkpoints from now on. */
  #ready = false;
  /** A pass was asked for and has not answered yet: no other is asked meanwhile. */
  #asked = false;
  /** Commits when the worker was last asked for a pass. */
  #askedAt = 0;

  constructor(db: Sqlite.Database, options: WalCheckpointerOptions = {}) {
    this.#db = db;
    this.#options = options;
    this.#startsAfter = options.startsAfter ?? STARTS_AFTER_COMMITS;
    this.#restartFrames = options.restartFrames ?? RESTART_FRAMES;
    // A database in memory, or one SQLite could not put in WAL mode, has no WAL to move.
    if (db.memory || db.pragma('journal_mode', { simple: true }) !== 'wal') this.#off = true;
  }

  /** The store committed a transaction. */
  committed(): void {
    if (this.#off) return;
    this.#commits += 1;
    if (this.#worker === undefined) {
      if (this.#commits > this.#startsAfter) this.#start();
    } else if (this.#ready && !this.#asked && this.#commits - this.#askedAt >= ASK_EVERY_COMMITS) {
      this.#ask(this.#worker);
    }
  }

  /**
   * One pass at a time: asks queued behind a slow pass (a loaded disk) would keep the worker
   * checkpointing back to back, and the store's own copy would find it busy every time.
   */
  #ask(worker: Worker): void {
    this.#asked = true;
    this.#askedAt = this.#commits;
    worker.postMessage('pass');
  }

  #start(): void {
    const closed = new SharedArrayBuffer(4);
    let worker: Worker;
    try {
      worker = new Worker(WORKER_SOURCE, {
        eval: true,
        // Plain CommonJS: none of the parent's loaders or flags.
        execArgv: [],
        workerData: {
          driverFile: this.#options.driverFile ?? SQLITE_DRIVER_FILE,
          // Absolute: the process may change its directory after the store opened the file.
          file: resolve(this.#db.name),
          closed,
        },
      });
    } catch (error) {
      this.#fallBack(error);
      return;
    }
    this.#worker = worker;
    this.#closed = new Int32Array(closed);
    worker.unref();
    worker.on('message', (message: unknown) => {
      if (message === 'ready') {
        // From here on the worker checkpoints; until now SQLite still did, on commit.
        this.#ready = true;
        if (!this.#off && this.#db.open) this.#db.pragma('wal_autocheckpoint = 0');
        this.#ask(worker);
      } else if (typeof message === 'object' && message !== null) {
        this.#asked = false;
        this.#passed(message as WalPass);
      }
    });
    worker.on('error', (error) => this.#fallBack(error));
    worker.on('exit', () => {
      if (this.#worker === worker && !this.#off)
        this.#fallBack(new Error('The WAL checkpoint worker exited'));
    });
  }

  /**
   * After a pass of the worker: each time the WAL has grown by the bound since the store's last
   * copy, the store copies what is left itself (the worker is idle now: no pass is asked while
   * one runs, so the copy does not find it busy). Once per bound, not after every pass: while
   * another connection reads an old snapshot nothing can be copied past it nor started over, and
   * a copy after every pass would sync the files every ASK_EVERY_COMMITS commits for nothing.
   */
  #passed(pass: WalPass): void {
    if (pass.log < this.#copiedAt) this.#copiedAt = 0; // started over
    if (
      !this.#off &&
      pass.log >= this.#copiedAt + this.#restartFrames &&
      this.#db.open &&
      !this.#db.inTransaction
    ) {
      try {
        const [result] = this.#db.pragma('wal_checkpoint(PASSIVE)') as { busy: number }[];
        // Busy: another connection was checkpointing at that moment; the next pass tries again.
        if (result?.busy === 0) this.#copiedAt = pass.log;
      } catch {
        // Failing: tried again once the WAL has grown by the bound once more.
        this.#copiedAt = pass.log;
      }
      this.#options.onCopy?.();
    }
    this.#options.onPass?.(pass);
  }

  /** The store's connection checkpoints by itself again; the worker, if any, is let go. */
  #fallBack(error: unknown): void {
    if (this.#off) return;
    this.#off = true;
    const worker = this.#worker;
    this.#worker = undefined;
    if (this.#db.open) this.#db.pragma(`wal_autocheckpoint = ${SQLITE_AUTOCHECKPOINT}`);
    void worker?.terminate();
    this.#options.onFallback?.(error instanceof Error ? error : new Error(String(error)));
  }

  /**
   * Before the store closes its connection: the worker closes its own first (waited for, at most
   * CLOSE_WAIT_MS), so the store's is the last one and SQLite checkpoints and removes the WAL as
   * it closes. A worker still starting has checkpointed nothing: it is stopped, not waited for.
   */
  close(): void {
    this.#off = true;
    const worker = this.#worker;
    const closed = this.#closed;
    this.#worker = undefined;
    if (worker === undefined || closed === undefined) return;
    if (!this.#ready) {
      void worker.terminate();
      return;
    }
    worker.postMessage('close');
    Atomics.wait(closed, 0, 0, CLOSE_WAIT_MS);
    if (Atomics.load(closed, 0) !== 1) void worker.terminate();
  }
}
