// SQLite's WAL checkpoints off the event loop (src/stores/sqlite/wal-checkpointer.ts,
// docs/decisions.md "SQLite's WAL checkpoints off the event loop"): a worker thread checkpoints
// once the store is busy, the WAL is started over under a steady flow of commits, the store
// checkpoints by itself again when the worker cannot run, and closing leaves no WAL behind.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { Database } from '../../../src/stores/sqlite/sqlite-driver.cjs';
import {
  WalCheckpointer,
  type WalCheckpointerOptions,
  type WalPass,
} from '../../../src/stores/sqlite/wal-checkpointer.js';
import { OperatorRuntime } from '../../../src/index.js';
import { planOf, register } from '../../support/runtime-fixtures.js';

const directory = mkdtempSync(join(tmpdir(), 'warrant-wal-'));
after(() => rmSync(directory, { recursive: true, force: true }));
let files = 0;

/** A WAL database with one table, written a commit at a time by `commit`. */
function walDatabase(options: WalCheckpointerOptions) {
  const file = join(directory, `wal-${++files}.db`);
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec('CREATE TABLE rows (text TEXT NOT NULL)');
  const checkpointer = new WalCheckpointer(db, options);
  const insert = db.prepare('INSERT INTO rows (text) VALUES (?)');
  const text = 'x'.repeat(1_000);
  /** One transaction of `rows` rows of 1,000 characters (a page each, about). */
  const commit = db.transaction((rows: number) => {
    for (let row = 0; row < rows; row++) insert.run(text);
  });
  return {
    file,
    db,
    checkpointer,
    commit(rows = 4) {
      commit(rows);
      checkpointer.committed();
    },
  };
}

/** The rows stored in `file`, read by a new connection. */
function storedRows(file: string, table = 'rows'): unknown {
  const reader = new Database(file, { readonly: true });
  try {
    return reader.prepare(`SELECT count(*) FROM ${table}`).pluck().get();
  } finally {
    reader.close();
  }
}

/** A database whose worker has started: its first pass is reported. */
async function startedStore(options: WalCheckpointerOptions) {
  let passed!: () => void;
  const ready = new Promise<void>((resolve) => (passed = resolve));
  const store = walDatabase({
    ...options,
    startsAfter: 0,
    onPass: (pass) => {
      passed();
      options.onPass?.(pass);
    },
  });
  store.commit();
  await ready;
  return store;
}

/** Lets the event loop turn (the worker's answers arrive between commits, as in a store). */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * A steady flow of commits, the event loop turning every 8, until `done()` or `most` commits.
 * The flow never outruns the worker by more than 512 commits: past them it waits for the worker's
 * next pass (a loaded machine may starve the worker; the WAL would then only grow).
 */
async function flow(
  store: ReturnType<typeof walDatabase>,
  passes: readonly WalPass[],
  done: () => boolean,
  most: number,
): Promise<number> {
  let commits = 0;
  let seen = passes.length;
  let since = 0;
  while (!done() && commits < most) {
    store.commit();
    commits += 1;
    since += 1;
    if (commits % 8 === 0) await turn();
    if (passes.length > seen) {
      seen = passes.length;
      since = 0;
    }
    while (since >= 512 && passes.length === seen) await turn();
  }
  return commits;
}

describe('WAL checkpoints off the event loop', () => {
  it('move to a worker once the store is busy; its connection stops running them', async () => {
    let firstPass!: (pass: WalPass) => void;
    const passed = new Promise<WalPass>((resolve) => (firstPass = resolve));
    const store = walDatabase({ startsAfter: 3, onPass: (pass) => firstPass(pass) });
    try {
      for (let index = 0; index < 3; index++) store.commit();
      assert.equal(store.db.pragma('wal_autocheckpoint', { simple: true }), 1000);
      store.commit(); // the fourth starts the worker
      const pass = await passed;
      assert.equal(store.db.pragma('wal_autocheckpoint', { simple: true }), 0);
      assert.ok(pass.log > 0, 'the WAL had frames');
      assert.equal(pass.checkpointed, pass.log, 'a quiet WAL is copied to its end');
    } finally {
      store.checkpointer.close();
      store.db.close();
    }
  });

  it('starts the WAL over under a steady flow of commits', { timeout: 60_000 }, async () => {
    const passes: WalPass[] = [];
    const restartFrames = 256;
    const store = await startedStore({
      restartFrames,
      onPass: (pass) => passes.push(pass),
    });
    const restarts = () =>
      passes.filter((pass, index) => index > 0 && pass.log < (passes[index - 1]?.log ?? 0)).length;
    try {
      // Four pages a commit: without starting over, the WAL would hold every one of them.
      const commits = await flow(store, passes, () => restarts() >= 3, 4_000);
      assert.ok(
        restarts() >= 3,
        `the WAL was started over ${restarts()} times in ${commits} commits`,
      );
      const bytes = statSync(`${store.file}-wal`).size;
      const written = commits * 4 * 4096;
      assert.ok(bytes < written / 2, `the WAL file grew to ${bytes} bytes of ${written} written`);
    } finally {
      store.checkpointer.close();
      store.db.close();
    }
  });

  it(
    'copies once per bound of growth while a reader holds the WAL, not after every pass',
    { timeout: 60_000 },
    async () => {
      const passes: WalPass[] = [];
      let copies = 0;
      const restartFrames = 256;
      const store = await startedStore({
        restartFrames,
        onPass: (pass) => passes.push(pass),
        onCopy: () => (copies += 1),
      });
      // A reader on an old snapshot: nothing past it can be copied, nor the WAL started over.
      const reader = new Database(store.file, { readonly: true });
      reader.exec('BEGIN');
      reader.prepare('SELECT count(*) FROM rows').pluck().get();
      try {
        await flow(store, passes, () => copies >= 2, 2_000);
        const log = Math.max(...passes.map((pass) => pass.log));
        const crossed = passes.filter((pass) => pass.log >= restartFrames).length;
        assert.ok(copies >= 2, `the store copied ${copies} times`);
        // After every pass past the bound, it would be about twice as many.
        assert.ok(
          copies <= Math.floor(log / restartFrames),
          `${copies} copies for ${log} frames (${crossed} passes past the bound)`,
        );
      } finally {
        reader.exec('COMMIT');
        reader.close();
        store.checkpointer.close();
        store.db.close();
      }
    },
  );

  it('falls back to SQLite checkpointing on commit when the worker cannot run', async () => {
    let fellBack!: (error: Error) => void;
    const failed = new Promise<Error>((resolve) => (fellBack = resolve));
    const store = walDatabase({
      startsAfter: 0,
      driverFile: join(directory, 'no-such-driver.js'),
      onFallback: (error) => fellBack(error),
    });
    try {
      store.commit();
      const error = await failed;
      assert.match(error.message, /no-such-driver/);
      assert.equal(store.db.pragma('wal_autocheckpoint', { simple: true }), 1000);
      for (let index = 0; index < 10; index++) store.commit();
      assert.equal(store.db.pragma('wal_autocheckpoint', { simple: true }), 1000);
    } finally {
      store.checkpointer.close();
      store.db.close();
    }
  });

  it('closes its connection first: closing the store removes the WAL, every row kept', async () => {
    let firstPass!: () => void;
    const passed = new Promise<void>((resolve) => (firstPass = resolve));
    const store = walDatabase({ startsAfter: 0, onPass: () => firstPass() });
    store.commit();
    await passed;
    for (let index = 0; index < 99; index++) store.commit();
    store.checkpointer.close();
    store.db.close();
    assert.equal(existsSync(`${store.file}-wal`), false, 'the WAL is removed');
    assert.equal(storedRows(store.file), 400);
  });

  it('stops a worker still starting at close, every row kept', () => {
    const store = walDatabase({ startsAfter: 0, onFallback: () => assert.fail('no fallback') });
    for (let index = 0; index < 10; index++) store.commit();
    store.checkpointer.close(); // before the worker said it is ready
    store.db.close();
    assert.equal(storedRows(store.file), 40);
  });

  it('leaves a database in memory alone', () => {
    const db = new Database(':memory:');
    const checkpointer = new WalCheckpointer(db, {
      startsAfter: 0,
      onFallback: () => assert.fail('no worker to fail'),
    });
    for (let index = 0; index < 10; index++) checkpointer.committed();
    checkpointer.close();
    db.close();
  });

  it('a busy SQLite store keeps every job and verifies, its WAL removed at close', async () => {
    const file = join(directory, 'busy.db');
    const runtime = new OperatorRuntime({ store: `sqlite:${file}` });
    const [echo = ''] = register(runtime, { execute: ({ input }) => input });
    // Three commits a job, 16 jobs in flight: well past the worker's start (256 commits).
    const ids: string[] = [];
    for (let round = 0; round < 25; round++) {
      const jobs = await Promise.all(
        Array.from({ length: 16 }, () =>
          runtime.executePlan(planOf({ id: 'echo', capability: echo })),
        ),
      );
      for (const job of jobs) {
        assert.equal(job.status, 'completed');
        ids.push(job.id);
      }
    }
    const report = await runtime.verifyStore();
    assert.equal(report.ok, true);
    await runtime.close();
    assert.equal(existsSync(`${file}-wal`), false, 'the WAL is removed');
    assert.equal(storedRows(file, 'jobs'), ids.length);
  });
});
