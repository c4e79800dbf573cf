// docs/api.md, "Store outages": a store write that fails on a lost connection or a locked
// database is retried, bounded, and never applied twice. The property drives the real SQLite
// store on a real file, and the real PostgreSQL store on a real server, through the runtime,
// with faults injected by the store's test seam (`faults`, write-retry.ts) before a statement
// (nothing written) or after its commit (the answer lost): every job ends in a state its record
// explains, none is left executing by its live owner, no step runs twice, and nothing
// acknowledged is lost.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { ErrorCode } from '../../../src/errors/error-codes.js';
import {
  isTransientStoreError,
  retryTransient,
  StoreHealth,
  unwrittenOf,
  type LastEvent,
  type WriteFault,
} from '../../../src/stores/shared/write-retry.js';
import type { JobStore } from '../../../src/jobs/job-store.js';
import { PostgresJobStore } from '../../../src/stores/postgres/postgres-store.js';
import { SqliteJobStore } from '../../../src/stores/sqlite/sqlite-store.js';
import { runtimeOnStore } from '../../../src/runtime/operator-runtime.js';
import type { ExecutionPlan, Job } from '../../../src/index.js';
import { register } from '../../support/runtime-fixtures.js';
import { settings } from '../../properties/support.js';
import { startTestPostgres, type TestPostgres } from '../../support/postgres.js';

const coded = (code: string, message = code) => Object.assign(new Error(message), { code });

describe('isTransientStoreError', () => {
  it('holds lost connections and locked databases transient, nothing else', () => {
    for (const error of [
      coded('57P01', 'terminating connection due to administrator command'),
      coded('08006'),
      coded('ECONNRESET'),
      new Error('Connection terminated unexpectedly'),
      coded('SQLITE_BUSY'),
      coded('SQLITE_BUSY_SNAPSHOT'),
      coded('SQLITE_LOCKED'),
    ])
      assert.equal(isTransientStoreError(error), true, error.message);
    for (const error of [
      coded('SQLITE_FULL'),
      coded('SQLITE_IOERR'),
      coded('23505'),
      coded('57014'),
      new Error('syntax error'),
      undefined,
      'ECONNRESET',
    ])
      assert.equal(isTransientStoreError(error), false, String(error));
  });
});

describe('retryTransient', () => {
  const quick = { attempts: 3, totalMs: 1_000, firstDelayMs: 1, maxDelayMs: 2 };

  it('looks for what a lost attempt wrote before writing again, and tells the outage once', async () => {
    const told: string[] = [];
    const health = new StoreHealth((state) => told.push(state));
    const calls: string[] = [];
    let writes = 0;
    await retryTransient(
      () => {
        calls.push('write');
        if ((writes += 1) < 3) throw coded('ECONNRESET');
      },
      () => {
        calls.push('settle');
        return false;
      },
      health,
      undefined,
      quick,
    );
    assert.deepEqual(calls, ['write', 'settle', 'write', 'settle', 'write']);
    assert.deepEqual(told, ['down', 'up']);
  });

  it('writes nothing again when the lost attempt committed', async () => {
    let writes = 0;
    await retryTransient(
      () => {
        writes += 1;
        throw coded('57P01');
      },
      () => true,
      new StoreHealth(),
      undefined,
      quick,
    );
    assert.equal(writes, 1);
  });

  it('gives up after its attempts with STORE_UNAVAILABLE, the driver error as cause', async () => {
    const lost = coded('ECONNRESET', 'read ECONNRESET at 10.0.0.1');
    let writes = 0;
    await assert.rejects(
      retryTransient(
        () => {
          writes += 1;
          throw lost;
        },
        () => false,
        new StoreHealth(),
        undefined,
        quick,
      ),
      (error: Error & { code?: string; cause?: unknown }) => {
        assert.equal(error.code, ErrorCode.STORE_UNAVAILABLE);
        assert.equal(error.cause, lost);
        assert.doesNotMatch(error.message, /10\.0\.0\.1|ECONNRESET/);
        return true;
      },
    );
    assert.equal(writes, 3);
  });

  it('rejects an error that is not transient at once, as it is', async () => {
    const full = coded('SQLITE_FULL');
    let writes = 0;
    await assert.rejects(
      retryTransient(
        () => {
          writes += 1;
          throw full;
        },
        () => false,
        new StoreHealth(),
        undefined,
        quick,
      ),
      (error) => error === full,
    );
    assert.equal(writes, 1);
  });
});

/** Faults at write numbers: `before` a transaction, or `after` its commit; a run of them. */
const faultPlan = fc.record({
  faults: fc.uniqueArray(
    fc.record({ at: fc.nat({ max: 40 }), phase: fc.constantFrom('before', 'after') }),
    { maxLength: 5, selector: (fault) => `${fault.at}` },
  ),
  // Rarely, a database locked through every attempt (the write is given up).
  outage: fc.option(fc.nat({ max: 40 }), { freq: 6 }),
  jobs: fc.integer({ min: 1, max: 4 }),
  steps: fc.integer({ min: 1, max: 3 }),
});

/** The error a lost statement fails with on each store. */
type Lost = () => Error;

/**
 * The property on one store: `open(run, fault)` opens a fresh store on a fresh database with the
 * fault seam. Jobs the runtime gave up (JOB_STORE_FAILED) are recorded by the runtime once the
 * store answers again: none stays `queued` or `executing` while its owner lives.
 */
async function writesThroughFaults(
  open: (run: number, fault: WriteFault) => JobStore | Promise<JobStore>,
  lost: Lost,
  numRuns: number,
) {
  let run = 0;
  await fc.assert(
    fc.asyncProperty(faultPlan, async ({ faults, outage, jobs, steps }) => {
      let calls = 0;
      const byCall = new Map(faults.map((fault) => [fault.at, fault.phase]));
      const fault: WriteFault = (phase) => {
        if (phase === 'before') calls += 1;
        if (outage !== null && calls >= outage && calls < outage + 8 && phase === 'before')
          return lost();
        return byCall.get(calls) === phase ? lost() : undefined;
      };
      const store = await open((run += 1), fault);
      const runtime = runtimeOnStore(store);
      const ledger: string[] = [];
      const [name] = register(runtime, {
        execute: ({ input }) => {
          ledger.push(String((input as { mark: string }).mark));
          return { ok: true };
        },
      });
      try {
        const plans = Array.from({ length: jobs }, (_, job): ExecutionPlan => ({
          version: '1.0',
          goal: `job ${job}`,
          steps: Array.from({ length: steps }, (_, step) => ({
            id: `s${step}`,
            capability: name as string,
            input: { mark: `${job}/${step}` },
          })),
        }));
        const settled = await Promise.allSettled(plans.map((plan) => runtime.executePlan(plan)));
        for (const outcome of settled) {
          if (outcome.status === 'fulfilled') {
            // Acknowledged: stored as answered, and its record proves it.
            const job: Job = outcome.value;
            const stored = await runtime.getJob(job.id);
            assert.equal(stored?.status, job.status);
            assert.deepEqual(await runtime.verifyJob(job.id), {
              ok: true,
              events: job.events.length,
            });
            continue;
          }
          const error = outcome.reason as { code?: string; jobId?: string; cause?: unknown };
          if (error.code === ErrorCode.STORE_UNAVAILABLE) continue;
          assert.equal(error.code, ErrorCode.JOB_STORE_FAILED, String(outcome.reason));
          assert.equal((error.cause as { code?: string }).code, ErrorCode.STORE_UNAVAILABLE);
          assert.equal(typeof error.jobId, 'string');
        }
        // The jobs given up are recorded by the runtime once the store answers: waited for
        // through waitForJob (bounded: 30 s each), then none is left open.
        const isOpen = (job: Job) => job.status === 'queued' || job.status === 'executing';
        for (const job of (await runtime.listJobs({})).filter(isOpen))
          await runtime.waitForJob(job.id, { timeoutMs: 30_000 });
        const open = (await runtime.listJobs({})).filter(isOpen);
        assert.deepEqual(
          open.map((job) => `${job.id} ${job.status}`),
          [],
        );
        // No step ran twice (a step given up before its start was recorded runs then, once).
        assert.equal(new Set(ledger).size, ledger.length, ledger.join(','));
        // Every job stored, given up or not, is explained by its record.
        for (const job of await runtime.listJobs({}))
          assert.equal((await runtime.verifyJob(job.id))?.ok, true, job.id);
      } finally {
        await runtime.close();
      }
    }),
    { seed: settings.seed, numRuns, ...(settings.path !== undefined && { path: settings.path }) },
  );
}

// Each case may wait for retries (100 ms and up) and the recording of jobs given up (1 s and
// up): a fraction of the property runs, 25 on CI's first Node (docs/decisions.md, "Test runs").
const numRuns = Math.max(5, Math.round(settings.numRuns / 400));
const label = `every job ends as its record says, none left executing, no step runs twice, nothing acknowledged is lost (seed ${settings.seed}, ${numRuns} runs)`;

// The lost-commit detection both durable stores use after a lost attempt (write-retry.ts):
// what the stores feed it is driven by the fault properties below.
describe('unwrittenOf', () => {
  it('settles, in order, the changes whose last event is stored with their hash; returns the rest', () => {
    const stored = new Map<string, string | null>([
      ['a\u00002', 'sha256:a2'],
      ['b\u00000', 'sha256:other'],
      ['c\u00004', null],
      ['e\u00001', 'sha256:e1'],
    ]);
    const writes: { name: string; last: LastEvent | undefined }[] = [
      { name: 'a: written', last: { id: 'a', position: 2, hash: 'sha256:a2' } },
      { name: 'b: another hash there', last: { id: 'b', position: 0, hash: 'sha256:b0' } },
      {
        name: 'c: an event without a hash there',
        last: { id: 'c', position: 4, hash: 'sha256:c4' },
      },
      { name: 'd: no event there', last: { id: 'd', position: 7, hash: 'sha256:d7' } },
      { name: 'n: no event in the change', last: undefined },
      { name: 'e: written', last: { id: 'e', position: 1, hash: 'sha256:e1' } },
    ];
    const written: string[] = [];
    const asked: string[] = [];
    const left = unwrittenOf(
      writes,
      (write) => write.last,
      (last) => {
        asked.push(last.id);
        return stored.get(`${last.id}\u0000${last.position}`);
      },
      (write) => written.push(write.name),
    );
    assert.deepEqual(written, ['a: written', 'e: written']);
    assert.deepEqual(
      left.map((write) => write.name),
      [
        'b: another hash there',
        'c: an event without a hash there',
        'd: no event there',
        'n: no event in the change',
      ],
    );
    // A change with no event is not looked for.
    assert.deepEqual(asked, ['a', 'b', 'c', 'd', 'e']);
  });
});

describe('a store write through injected faults (property, SQLite)', () => {
  const directory = mkdtempSync(join(tmpdir(), 'warrant-write-retry-'));
  after(() => rmSync(directory, { recursive: true, force: true }));

  it(label, () =>
    writesThroughFaults(
      (run, faults) => new SqliteJobStore(join(directory, `run-${run}.db`), { faults }),
      () => coded('SQLITE_BUSY', 'database is locked'),
      numRuns,
    ),
  );
});

describe('a store write through injected faults (property, PostgreSQL)', () => {
  let postgres: TestPostgres | undefined;
  before(async () => {
    postgres = await startTestPostgres();
  });
  after(async () => {
    await postgres?.stop();
  });

  it(label, () =>
    writesThroughFaults(
      async (_run, faults) =>
        new PostgresJobStore(await (postgres as TestPostgres).createDatabase(), { faults }),
      () => coded('57P01', 'terminating connection due to administrator command'),
      numRuns,
    ),
  );
});
