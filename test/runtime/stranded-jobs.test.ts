// docs/api.md, "Store outages": a job this live process owns whose write was lost after the
// retries is remembered and, once the store answers again, recorded as recovery's rule says: a
// step with a durable start and no end `interrupted` (the job failed STEP_INTERRUPTED, or
// awaiting approval with approvals on), a step never started run then; never left `executing`.
// The real SQLite and PostgreSQL stores, their writes failed by their test seam (`faults`).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ErrorCode } from '../../src/errors/error-codes.js';
import type { ExecutionPlan, Job, OperatorRuntimeOptions } from '../../src/index.js';
import type { JobStore } from '../../src/jobs/job-store.js';
import { PostgresJobStore } from '../../src/stores/postgres/postgres-store.js';
import { SqliteJobStore } from '../../src/stores/sqlite/sqlite-store.js';
import type { WriteFault } from '../../src/stores/shared/write-retry.js';
import { runtimeOnStore } from '../../src/runtime/operator-runtime.js';
import { StrandedJobs, strandedJobId } from '../../src/runtime/stranded-jobs.js';
import { register } from '../support/runtime-fixtures.js';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';
import { Changes } from '../support/wait.js';

const directory = mkdtempSync(join(tmpdir(), 'warrant-stranded-'));
after(() => rmSync(directory, { recursive: true, force: true }));

/** A switch for the store's writes: while `down`, every statement fails as a lost connection. */
class Outage {
  down = false;
  readonly fault: WriteFault = (phase) =>
    this.down && phase === 'before'
      ? Object.assign(new Error('Connection terminated unexpectedly'), { code: 'ECONNRESET' })
      : undefined;
}

function plan(name: string): ExecutionPlan {
  return { version: '1.0', goal: 'stranded', steps: [{ id: 'a', capability: name, input: {} }] };
}

type OpenStore = (outage: Outage) => Promise<JobStore>;

/** Runs one job whose write `when` the store is down for, then lets the store answer again. */
async function strand(
  open: OpenStore,
  when: 'step ran' | 'before the step',
  options: OperatorRuntimeOptions = {},
) {
  const outage = new Outage();
  let decided = 0;
  const runtime = runtimeOnStore(await open(outage), {
    ...options,
    // Allowed; when the step must not start, the store goes down once it is decided.
    authorizer: {
      name: 'outage',
      authorize: () => {
        if (when === 'before the step' && !(decided++ > 0)) outage.down = true;
        return { decision: 'allow' };
      },
    },
  });
  const ledger: string[] = [];
  const [name] = register(runtime, {
    risk: 'write',
    execute: () => {
      ledger.push('ran');
      // The step ran; its end cannot be written.
      if (when === 'step ran') outage.down = true;
      return { ok: true };
    },
  });
  try {
    const failing = runtime.executePlan(plan(name as string));
    const error = (await failing.then(
      () => assert.fail('the job should not be acknowledged'),
      (rejected: unknown) => rejected,
    )) as { code?: string; jobId?: string; cause?: { code?: string } };
    assert.equal(error.code, ErrorCode.JOB_STORE_FAILED);
    assert.equal(error.cause?.code, ErrorCode.STORE_UNAVAILABLE);
    const jobId = error.jobId as string;
    assert.equal((await runtime.getJob(jobId))?.status, 'executing');
    outage.down = false;
    // Recorded by the runtime itself once the store answers (bounded: 20 s).
    const job = (await runtime.waitForJob(jobId, { timeoutMs: 20_000 })) as Job;
    assert.ok(!['queued', 'executing'].includes(job.status), `job still ${job.status} after 20 s`);
    assert.deepEqual(await runtime.verifyJob(jobId), { ok: true, events: job.events.length });
    return { job, ledger: ledger.length, runtime };
  } finally {
    outage.down = false;
    await runtime.close();
  }
}

function cases(label: string, open: OpenStore) {
  describe(`a job whose write was lost is recorded once the store answers (${label})`, () => {
    it('a step that ran and whose end was lost: interrupted, the job failed STEP_INTERRUPTED', async () => {
      const { job, ledger } = await strand(open, 'step ran');
      assert.equal(ledger, 1);
      assert.equal(job.status, 'failed');
      assert.equal(job.steps[0]?.status, 'interrupted');
      assert.match(String(job.error), /^STEP_INTERRUPTED: /);
      const types = job.events.map((event) => event.type);
      assert.ok(types.includes('job.recovered'), types.join(','));
      assert.ok(types.includes('step.interrupted'), types.join(','));
    });

    it('a step whose start was lost: it never ran, so it runs then, and the job completes', async () => {
      const { job, ledger } = await strand(open, 'before the step');
      assert.equal(ledger, 1);
      assert.equal(job.status, 'completed');
      assert.ok(job.events.some((event) => event.type === 'job.recovered'));
    });

    it('with approvals on: the interrupted step awaits an approval', async () => {
      const { job, ledger } = await strand(open, 'step ran', {
        approvals: { approver: { canApprove: () => true } },
      });
      assert.equal(ledger, 1);
      assert.equal(job.status, 'awaiting_approval');
      assert.equal(job.steps[0]?.status, 'awaiting_approval');
    });
  });
}

let files = 0;
cases('SQLite', (outage) => {
  return Promise.resolve(
    new SqliteJobStore(join(directory, `${(files += 1)}.db`), {
      faults: outage.fault,
    }),
  );
});

let postgres: TestPostgres | undefined;
before(async () => {
  postgres = await startTestPostgres();
});
after(async () => {
  await postgres?.stop();
});
cases('PostgreSQL', async (outage) => {
  const url = await (postgres as TestPostgres).createDatabase();
  return new PostgresJobStore(url, { faults: outage.fault });
});

describe('StrandedJobs', () => {
  const quick = { firstDelayMs: 5, maxDelayMs: 20 };
  const lost = (jobId: string) =>
    Object.assign(new Error('The job store failed'), {
      code: ErrorCode.JOB_STORE_FAILED,
      jobId,
    });

  it('keeps only jobs a store failure gave up', () => {
    assert.equal(strandedJobId(lost('j1')), 'j1');
    assert.equal(strandedJobId(new Error('boom')), undefined);
    assert.equal(
      strandedJobId(Object.assign(new Error('x'), { code: ErrorCode.JOB_STORE_FAILED })),
      undefined,
    );
  });

  it('tries again while the store fails, and forgets a job once it is recorded', async () => {
    let down = 2;
    const tried: string[] = [];
    const changes = new Changes();
    const stranded = new StrandedJobs(
      async (jobId) => {
        tried.push(jobId);
        changes.changed();
        if (down > 0) {
          down -= 1;
          throw Object.assign(new Error('lost'), { code: 'ECONNRESET' });
        }
      },
      () => assert.fail('nothing to warn'),
      quick,
    );
    stranded.add(lost('j1'));
    stranded.add(lost('j1'));
    stranded.add(new Error('not a store failure'));
    await changes.until(() => tried.length >= 3, { what: 'a third try' });
    // stop() waits for the pass under way: the third try succeeded, so nothing is left.
    assert.deepEqual(await stranded.stop(), []);
    assert.deepEqual(tried, ['j1', 'j1', 'j1']);
  });

  it('reports a job it cannot settle for another reason, and keeps nothing after stop', async () => {
    const warned: string[] = [];
    const changes = new Changes();
    const stranded = new StrandedJobs(
      () => Promise.reject(new Error('plan gone')),
      (line) => {
        warned.push(line);
        changes.changed();
      },
      quick,
    );
    stranded.add(lost('j2'));
    await changes.until(() => warned.length > 0, { what: 'the warning' });
    assert.deepEqual(await stranded.stop(), [], 'a job reported is not kept');
    assert.equal(warned.length, 1);
    assert.match(warned[0] as string, /job j2 .*plan gone.*recovery at the next start/);
    stranded.add(lost('j3'));
    assert.deepEqual(stranded.ids, []);
  });
});
