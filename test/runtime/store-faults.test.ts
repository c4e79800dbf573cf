// Fault injection (issue 9), the store side: a SQLite store whose disk fills up under the real
// OperatorRuntime. The store's own connection is capped with PRAGMA max_page_count, so writes
// fail inside SQLite itself (SQLITE_FULL), exactly as on a full disk. Whatever step the
// failure hits, executePlan rejects with JOB_STORE_FAILED (never a job reported but not
// recorded), nothing runs after the failed write, the file keeps the last recorded state, no
// rejection goes unhandled, and plans run again once there is space. Also: results that JSON
// cannot hold comfortably (huge, deep, cyclic) and rejections arriving after a time-out, on SQLite.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, beforeEach, describe, it } from 'node:test';
import type Sqlite from 'better-sqlite3';
import { Database } from '../../src/stores/sqlite/sqlite-driver.cjs';
import { Client, type CallToolResult } from '@modelcontextprotocol/client';
import { InMemoryTransport } from '@modelcontextprotocol/server';
import { createHttpServer } from '../../src/http/server.js';
import { SqliteJobStore } from '../../src/stores/sqlite/sqlite-store.js';
import { runtimeOnStore } from '../../src/runtime/operator-runtime.js';
import {
  McpAdapter,
  createCapability,
  type OperatorRuntime,
  type ExecutionAuthorizer,
  type Job,
  type OperatorRuntimeOptions,
  type RuntimeEvent,
} from '../../src/index.js';
import { recordEvents, recordingAuthorizer, register } from '../support/runtime-fixtures.js';
import { within } from '../support/wait.js';

const directory = mkdtempSync(join(tmpdir(), 'warrant-store-faults-'));
after(() => rmSync(directory, { recursive: true, force: true }));
let files = 0;

// Every rejection this file causes must be handled; the suite-wide guard would only fail the
// process at exit, this fails the very test that leaked one.
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);
process.on('unhandledRejection', onUnhandled);
after(() => process.off('unhandledRejection', onUnhandled));

async function settle(): Promise<void> {
  for (let tick = 0; tick < 5; tick++) await new Promise((resolve) => setImmediate(resolve));
}

/** Large enough to need new pages in any table it is written to (overflow pages). */
const BIG = 'x'.repeat(200_000);

interface Opened {
  readonly runtime: OperatorRuntime;
  /** The better-sqlite3 connection the runtime's store itself writes through. */
  readonly db: Sqlite.Database;
  readonly file: string;
}

/**
 * A runtime on a fresh SQLite file, through a store on a connection this test holds: the very
 * connection the store writes through.
 */
async function openSqlite(options: OperatorRuntimeOptions = {}): Promise<Opened> {
  const file = join(directory, `jobs-${++files}.db`);
  const db = new Database(file);
  const runtime = runtimeOnStore(new SqliteJobStore(db), options);
  await runtime.listJobs();
  assert.ok(db.open);
  assert.equal(db.name, file);
  return { runtime, db, file };
}

/** The disk is full: the database cannot grow by a single page. */
function fillDisk(db: Sqlite.Database): void {
  const pages = db.pragma('page_count', { simple: true }) as number;
  db.pragma(`max_page_count = ${pages}`);
}

/** Space is back. */
function freeDisk(db: Sqlite.Database): void {
  db.pragma('max_page_count = 1073741823');
}

interface StoreFailure {
  code?: string;
  message: string;
  cause?: { code?: string };
}

function assertDiskFull(error: unknown): true {
  const failure = error as StoreFailure;
  assert.equal(failure.code, 'JOB_STORE_FAILED');
  assert.match(failure.message, /^The job store failed: .*database or disk is full/);
  assert.equal(failure.cause?.code, 'SQLITE_FULL');
  assert.doesNotMatch(failure.message, /\n\s+at /, 'one line, no stack');
  return true;
}

/** What a second connection reads from the file: the state a restarted process would see. */
function readFromDisk(file: string, jobId: string): Job | undefined {
  const store = new SqliteJobStore(file);
  try {
    return store.get(jobId);
  } finally {
    store.close();
  }
}

// Runtimes opened by a test, closed after it (whatever it asserted).
const opened: OperatorRuntime[] = [];
async function openTracked(options: OperatorRuntimeOptions = {}): Promise<Opened> {
  const result = await openSqlite(options);
  opened.push(result.runtime);
  return result;
}
beforeEach(() => {
  unhandled.length = 0;
});
afterEach(async () => {
  await settle();
  for (const runtime of opened.splice(0)) await runtime.close();
  assert.deepEqual(unhandled, [], 'no unhandled rejection');
});

describe('a SQLite store whose disk is full', () => {
  it('rejects with JOB_STORE_FAILED when the job cannot be created, and asks and runs nothing', async () => {
    const authorizer = recordingAuthorizer();
    const { runtime, db } = await openTracked({ authorizer });
    let invoked = 0;
    const [name] = register(runtime, { execute: () => invoked++ });
    const events = recordEvents(runtime);
    fillDisk(db);
    await assert.rejects(
      runtime.executePlan({
        version: '1.0',
        steps: [{ id: 'only', capability: name as string, input: { pad: BIG } }],
      }),
      assertDiskFull,
    );
    assert.equal(authorizer.calls.length, 0);
    assert.equal(invoked, 0);
    assert.deepEqual(events, [], 'no event for a job that was never recorded');
    assert.deepEqual(await runtime.listJobs(), [], 'the failed create left no row');
  });

  // Where the disk fills, and the step statuses the file must then hold.
  const failures: {
    label: string;
    steps: ['running' | 'pending', 'pending'];
    define: (fill: () => void) => { execute: () => unknown; authorizer?: ExecutionAuthorizer };
  }[] = [
    {
      label: 'the step result',
      steps: ['running', 'pending'],
      define: (fill) => ({
        execute: () => {
          fill();
          return { pad: BIG };
        },
      }),
    },
    {
      label: 'the step failure (a thrown error)',
      steps: ['running', 'pending'],
      define: (fill) => ({
        execute: () => {
          fill();
          throw new Error(BIG);
        },
      }),
    },
    {
      label: "the step denial (the authorizer's reason)",
      steps: ['pending', 'pending'],
      define: (fill) => ({
        execute: () => 'never',
        authorizer: {
          authorize: () => {
            fill();
            return { decision: 'deny', reason: BIG };
          },
        },
      }),
    },
  ];

  for (const { label, steps, define } of failures) {
    it(`rejects with JOB_STORE_FAILED when ${label} cannot be recorded, runs no later step, and keeps the last recorded state on disk`, async () => {
      let fill = (): void => assert.fail('the connection is not open yet');
      const definition = define(() => fill());
      const { runtime, db, file } = await openTracked(
        definition.authorizer === undefined ? {} : { authorizer: definition.authorizer },
      );
      fill = () => fillDisk(db);
      let later = 0;
      const [failing, next] = register(
        runtime,
        { execute: definition.execute },
        { execute: () => later++ },
      );
      const events: RuntimeEvent[] = recordEvents(runtime);
      await assert.rejects(
        runtime.executePlan({
          version: '1.0',
          steps: [
            { id: 'first', capability: failing as string },
            { id: 'second', capability: next as string },
          ],
        }),
        assertDiskFull,
      );
      assert.equal(later, 0, 'nothing runs after a write that failed');
      const lastRecorded = steps[0] === 'running' ? 'capability.started' : 'execution.started';
      assert.equal(events.at(-1)?.type, lastRecorded, 'observers saw recorded events only');
      freeDisk(db);
      const stored = readFromDisk(file, events[0]?.jobId as string);
      assert.equal(stored?.status, 'executing');
      assert.deepEqual(
        stored?.steps.map((step) => step.status),
        steps,
      );
      assert.equal(stored?.events.at(-1)?.type, lastRecorded);
      assert.equal(stored?.error, undefined);
      assert.equal(db.pragma('integrity_check', { simple: true }), 'ok');
    });
  }

  it('lets plans run and be recorded again once space is back, with the failed job left as recorded', async () => {
    const { runtime, db, file } = await openTracked();
    const [name] = register(runtime, {
      execute: () => {
        fillDisk(db);
        return { pad: BIG };
      },
    });
    const [plain] = register(runtime, { execute: () => ({ pad: BIG }) });
    const events = recordEvents(runtime);
    await assert.rejects(
      runtime.executePlan({ version: '1.0', steps: [{ id: 'only', capability: name as string }] }),
      assertDiskFull,
    );
    const failedId = events[0]?.jobId as string;
    const plan = { version: '1.0' as const, steps: [{ id: 'only', capability: plain as string }] };
    await assert.rejects(runtime.executePlan(plan), assertDiskFull, 'still full');
    freeDisk(db);
    const job = await runtime.executePlan(plan);
    assert.equal(job.status, 'completed');
    const stored = readFromDisk(file, job.id);
    assert.equal(stored?.status, 'completed');
    assert.equal((stored?.result as { pad: string }).pad.length, BIG.length);
    assert.equal(readFromDisk(file, failedId)?.status, 'executing');
    assert.equal(db.pragma('integrity_check', { simple: true }), 'ok');
  });

  it('settles every one of many concurrent plans: a job recorded as returned, or JOB_STORE_FAILED', async () => {
    const { runtime, db, file } = await openTracked();
    // Each invocation waits until the test releases it, so the disk fills at a known point.
    // Plans with an odd index return a result too big for the full disk, the others a small one
    // that may still fit; the changes released together are committed together.
    const release: (() => void)[] = [];
    const [name] = register(runtime, {
      execute: async ({ input }) => {
        await new Promise<void>((resolve) => release.push(resolve));
        const { index } = input as { index: number };
        return index % 2 === 1 ? { pad: 'y'.repeat(20_000) } : { index };
      },
    });
    const running = Array.from({ length: 40 }, (_, index) =>
      runtime.executePlan({
        version: '1.0',
        goal: `concurrent ${index}`,
        steps: [{ id: 'only', capability: name as string, input: { index } }],
      }),
    );
    while (release.length < 40) await new Promise((resolve) => setImmediate(resolve));
    for (let index = 0; index < 20; index++) {
      (release[index] as () => void)();
      assert.equal((await running[index])?.status, 'completed');
    }
    fillDisk(db);
    for (const resolve of release.slice(20)) resolve();
    const settled = await Promise.allSettled(running);
    const rejected = new Set<string>();
    for (const [index, outcome] of settled.entries()) {
      if (outcome.status === 'fulfilled') {
        assert.ok(index < 20 || index % 2 === 0, `plan ${index} cannot fit`);
        // Read through a second connection: what a restarted process would find.
        const stored = readFromDisk(file, outcome.value.id);
        assert.equal(stored?.status, 'completed', `plan ${index}: returned = recorded`);
      } else {
        assert.ok(index >= 20, `plan ${index} finished before the disk filled`);
        // Changes committed together may fail together (a full disk rolls back the whole
        // transaction); each still names the disk-full cause, never a follow-on error.
        assertDiskFull(outcome.reason);
        rejected.add(`concurrent ${index}`);
      }
    }
    assert.ok(rejected.size >= 10, 'every big result was refused');
    freeDisk(db);
    const again = runtime.executePlan({
      version: '1.0',
      steps: [{ id: 'only', capability: name as string, input: { index: 40 } }],
    });
    while (release.length < 41) await new Promise((resolve) => setImmediate(resolve));
    (release[40] as () => void)();
    assert.equal(readFromDisk(file, (await again).id)?.status, 'completed');
    const recorded = await runtime.listJobs();
    assert.equal(recorded.length, 41, 'every job created, the cut-off ones included, once');
    assert.equal(new Set(recorded.map((job) => job.id)).size, 41);
    for (const job of recorded.filter((candidate) => candidate.status !== 'completed')) {
      assert.ok(rejected.has(job.goal), `${job.goal} was cut off only if its call rejected`);
      assert.equal(job.status, 'executing');
    }
    assert.equal(db.pragma('integrity_check', { simple: true }), 'ok');
  });
});

describe('the edges when the store is full', () => {
  it('HTTP answers 500 "Internal error" (no inner message) and serves again once space is back', async () => {
    const { runtime, db } = await openTracked();
    const [name] = register(runtime, { execute: () => 'ok' });
    const app = createHttpServer(runtime);
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    try {
      const post = () =>
        fetch(`${url}/api/plans`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            version: '1.0',
            steps: [{ id: 'only', capability: name, input: { pad: 'z'.repeat(100_000) } }],
          }),
        });
      fillDisk(db);
      const full = await post();
      const text = await full.text();
      assert.equal(full.status, 500);
      assert.deepEqual(JSON.parse(text), { error: 'Internal error' });
      assert.doesNotMatch(text, /disk|SQLITE|\n\s+at /);
      assert.equal((await fetch(`${url}/health`)).status, 200, 'the server survives');
      freeDisk(db);
      const again = await post();
      assert.equal(again.status, 201);
      const job = (await again.json()) as { id: string };
      assert.equal((await runtime.getJob(job.id))?.status, 'completed');
    } finally {
      await app.close();
    }
  });

  it('MCP answers an "Internal error" tool result, tells onInternalError, and serves again once space is back', async () => {
    const { runtime, db } = await openTracked();
    const [name] = register(runtime, {
      inputSchema: { pad: { type: 'string', required: true, description: 'padding' } },
      execute: () => 'ok',
    });
    const told: unknown[] = [];
    const adapter = new McpAdapter(runtime, {
      onInternalError: (error, tool) => told.push([(error as StoreFailure).code, tool]),
    });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await adapter.connect(serverSide);
    const client = new Client({ name: 'store-faults', version: '1.0.0' });
    await client.connect(clientSide);
    try {
      const call = async () =>
        (await client.callTool({
          name: (name as string).replaceAll('.', '_'),
          arguments: { pad: 'z'.repeat(100_000) },
        })) as CallToolResult;
      fillDisk(db);
      const full = await call();
      assert.equal(full.isError, true);
      assert.deepEqual(full.content, [{ type: 'text', text: 'Internal error' }]);
      assert.deepEqual(told, [['JOB_STORE_FAILED', (name as string).replaceAll('.', '_')]]);
      freeDisk(db);
      const again = await call();
      assert.equal(again.isError, undefined);
      assert.equal(told.length, 1);
    } finally {
      await client.close();
      await adapter.close();
    }
  });
});

describe('hostile capability results on SQLite', () => {
  it('records huge, 10,000-deep and cyclic results as documented, and reads them back', async () => {
    const { runtime, file } = await openTracked();
    let deep: Record<string, unknown> = { leaf: true };
    for (let level = 0; level < 10_000; level++) deep = { level: deep };
    const cyclic: Record<string, unknown> = { name: 'loop' };
    cyclic.self = cyclic;
    const [huge, nested, cycle] = register(
      runtime,
      { execute: () => 'h'.repeat(5_000_000) },
      { execute: () => deep },
      { execute: () => cyclic },
    );
    const job = await runtime.executePlan({
      version: '1.0',
      steps: [
        { id: 'huge', capability: huge as string },
        { id: 'deep', capability: nested as string },
        { id: 'cycle', capability: cycle as string },
      ],
    });
    assert.equal(job.status, 'completed');
    const stored = readFromDisk(file, job.id);
    assert.equal(stored?.status, 'completed');
    const [hugeStep, deepStep, cycleStep] = stored?.steps ?? [];
    assert.equal((hugeStep?.result as string).length, 5_000_000);
    let reached: unknown = deepStep?.result;
    let depth = 0;
    while (typeof reached === 'object' && reached !== null && 'level' in reached) {
      reached = (reached as { level: unknown }).level;
      depth++;
    }
    assert.equal(reached, '[Too deep]', 'nesting beyond 200 levels is cut, not a crash');
    assert.ok(depth > 100 && depth < 10_000);
    assert.deepEqual(cycleStep?.result, { name: 'loop', self: '[Circular]' });
  });

  it('records a time-out when a capability rejects with a non-Error after it, and leaves that rejection handled', async () => {
    const { runtime, file } = await openTracked();
    let lateRejected = false;
    let rejected: () => void = () => {};
    const late = new Promise<void>((resolve) => (rejected = resolve));
    const name = `store-faults.late.${process.pid}`;
    runtime.use({
      manifest: { name: `store-faults.module.${process.pid}`, version: '1', capabilities: [name] },
      capabilities: [
        createCapability({
          name,
          version: '1',
          description: 'rejects with a string, too late',
          risk: 'read',
          timeoutMs: 10,
          execute: () =>
            new Promise((_resolve, reject) =>
              setTimeout(() => {
                lateRejected = true;
                reject('too late, and not an Error');
                rejected();
              }, 40),
            ),
        }),
      ],
    });
    const job = await runtime.executePlan({
      version: '1.0',
      steps: [{ id: 'only', capability: name }],
    });
    assert.equal(job.status, 'failed');
    assert.equal(job.error, 'Capability execution timed out after 10ms');
    // Once it has rejected, and a turn later (an unhandled rejection is reported by then).
    await within(late, { what: 'the late rejection' });
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(lateRejected, true);
    const stored = readFromDisk(file, job.id);
    assert.equal(stored?.status, 'failed');
    assert.equal(stored?.steps[0]?.error, 'Capability execution timed out after 10ms');
    assert.equal(stored?.events.filter((event) => event.type === 'job.failed').length, 1);
  });
});
