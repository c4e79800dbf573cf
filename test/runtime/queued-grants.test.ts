// Jobs an approval put back on the queue (docs/api.md, "Workers"; issue 47 item 3): a grant
// written with `queued` leaves the job `queued` with `approval.granted { queued: true }`, under a
// queue entry of its own; on a real SQLite file whose writer then closed, a runtime opened on
// it takes the job up from the approved step with the recorded grant: the step before it is
// not invoked again, the approved write runs once without a new request, the job completes
// with its first `startedAt`, and its record verifies.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import {
  OperatorRuntime,
  type ExecutePlanOptions,
  type ExecutionPlan,
  type Job,
} from '../../src/index.js';
import { isoNow } from '../../src/jobs/clock.js';
import { recordValue } from '../../src/jobs/recorded-value.js';
import { grantApproval, grantPlanApproval } from '../../src/jobs/transitions.js';
import { lastPlanRequest } from '../../src/jobs/plan-grant.js';
import { queuedResume, queueEntryId } from '../../src/runtime/queued-grants.js';
import { SqliteJobStore } from '../../src/stores/sqlite/sqlite-store.js';
import { register } from '../support/runtime-fixtures.js';

const directory = mkdtempSync(join(tmpdir(), 'warrant-queued-grants-'));
after(() => rmSync(directory, { recursive: true, force: true }));

/** Every invocation of the test's capabilities, in order: `<stepId>`. */
const invoked: string[] = [];
/** The inputs the write was invoked with. */
const written: unknown[] = [];
const approvals = { approver: { canApprove: () => true } };
const [note, write] = register(
  new OperatorRuntime(),
  {
    execute: ({ context }) => {
      invoked.push(context.stepId);
      return { noted: true };
    },
  },
  {
    risk: 'write',
    execute: ({ input, context }) => {
      invoked.push(context.stepId);
      written.push(input);
      return { written: true };
    },
  },
) as [string, string];

const plan: ExecutionPlan = {
  version: '1.0',
  goal: 'a note, then an approved write',
  steps: [
    { id: 'note', capability: note, input: {} },
    { id: 'write', capability: write, input: {} },
  ],
};

/** The plan submitted on a SQLite file by a runtime that then closes: the job awaiting approval. */
async function waitingOn(file: string, options: ExecutePlanOptions = {}): Promise<Job> {
  const first = new OperatorRuntime({ store: `sqlite:${file}`, approvals });
  try {
    return await first.executePlan(plan, { caller: { id: 'alice' }, ...options });
  } finally {
    await first.close();
  }
}

/**
 * A grant written by the store of a runtime with a queue engine, which then closes (its
 * process's owner record removed: its queued jobs are anyone's to take up); `check` reads the
 * stored job.
 */
async function grantQueued(
  file: string,
  jobId: string,
  grant: (running: { record: Job; job: Job }) => Parameters<SqliteJobStore['update']>[1],
  check: (stored: Job) => void,
): Promise<void> {
  const store = new SqliteJobStore(file);
  try {
    const record = (await store.get(jobId)) as Job;
    await store.update(record, grant({ record, job: structuredClone(record) }));
    check((await store.get(jobId)) as Job);
  } finally {
    store.close();
  }
}

/** The job as a new runtime on the file ends it, verified intact; `check` reads it first. */
async function takenUp(file: string, jobId: string, check: (done: Job) => void): Promise<void> {
  const second = new OperatorRuntime({ store: `sqlite:${file}`, approvals });
  try {
    const done = await second.waitForJob(jobId, { timeoutMs: 20_000 });
    assert.equal(done?.status, 'completed', JSON.stringify(done?.events));
    check(done);
    assert.equal((await second.verifyJob(jobId))?.ok, true);
  } finally {
    await second.close();
  }
}

describe('jobs an approval put back on the queue', () => {
  it('a job as submitted starts from its first step under its own id', async () => {
    const runtime = new OperatorRuntime();
    try {
      const { jobId } = await runtime.submitPlan(plan);
      const job = (await runtime.getJob(jobId)) as Job;
      assert.equal(queuedResume(job), undefined);
      assert.equal(queueEntryId(job), jobId);
      await runtime.waitForJob(jobId, { timeoutMs: 20_000 });
    } finally {
      await runtime.close();
    }
  });

  it('a granted job recorded queued goes on from the approved step, with its grant, on the runtime that takes it up', async () => {
    const file = join(directory, 'jobs.db');
    invoked.length = 0;
    const waiting = await waitingOn(file);
    assert.equal(waiting.status, 'awaiting_approval');
    assert.deepEqual(invoked, ['note']);

    await grantQueued(
      file,
      waiting.id,
      (running) => grantApproval(running, 1, isoNow(), 'bob', undefined, true),
      (stored) => {
        assert.equal(stored.status, 'queued');
        assert.deepEqual(stored.events.at(-1)?.data, {
          stepId: 'write',
          approver: 'bob',
          queued: true,
        });
        assert.equal(queueEntryId(stored), `${waiting.id}:granted:${stored.events.length - 1}`);
        const resume = queuedResume(stored);
        assert.equal(resume?.from, 1);
        assert.deepEqual(resume.results, [{ noted: true }]);
        assert.equal(resume.approval.grant.approver.id, 'bob');
        assert.equal(resume.approval.grant.inputDigest, waiting.steps[1]?.decision?.inputDigest);
        assert.equal(resume.approval.capabilityVersion, '1.0.0');
      },
    );

    await takenUp(file, waiting.id, (done) => {
      assert.deepEqual(invoked, ['note', 'write']);
      assert.equal(done.startedAt, waiting.startedAt);
      assert.equal(
        done.events.filter((event) => event.type === 'approval.requested').length,
        1,
        'the grant was given to the decision: no second request',
      );
    });
  });

  it('a plan grant recorded queued starts the plan from its first step, each step under the grant', async () => {
    const file = join(directory, 'plan-jobs.db');
    invoked.length = 0;
    const waiting = await waitingOn(file, { approval: 'plan' });
    assert.equal(waiting.status, 'awaiting_approval');
    assert.deepEqual(invoked, [], 'nothing runs before the plan is approved');

    // The plan grant of a runtime with a queue engine (docs/api.md, "Plan warrants").
    await grantQueued(
      file,
      waiting.id,
      (running) => {
        const planDigest = lastPlanRequest(running.record)?.planDigest as string;
        const at = isoNow();
        const until = new Date(Date.parse(at) + 60_000).toISOString();
        return grantPlanApproval(running, at, 'bob', planDigest, until, undefined, true);
      },
      (stored) => {
        assert.equal(stored.status, 'queued');
        assert.equal(queueEntryId(stored), `${waiting.id}:granted:${stored.events.length - 1}`);
        assert.equal(queuedResume(stored), undefined, 'from the first step: nothing ran yet');
      },
    );

    await takenUp(file, waiting.id, (done) => {
      assert.deepEqual(invoked, ['note', 'write']);
      assert.equal(done.steps[1]?.decision?.approval?.kind, 'plan');
    });
  });

  it('a grant with edits put back on the queue runs the approved input on the runtime that takes it up (docs/api.md, "Approve with edits")', async () => {
    const file = join(directory, 'edited.db');
    invoked.length = 0;
    written.length = 0;
    const waiting = await waitingOn(file);
    const approved = { amount: 70 };
    const edit = { input: approved, recorded: recordValue(approved, 'input') };
    await grantQueued(
      file,
      waiting.id,
      (running) => grantApproval(running, 1, isoNow(), 'bob', undefined, true, edit),
      (stored) => {
        const resume = queuedResume(stored);
        assert.equal(resume?.approval.grant.inputDigest, edit.recorded.digest);
        assert.equal(resume.approval.grant.edited, true);
        assert.equal(resume.approval.grant.proposedDigest, waiting.steps[1]?.decision?.inputDigest);
        assert.deepEqual(resume.approval.input, approved);
      },
    );
    await takenUp(file, waiting.id, (done) => {
      assert.deepEqual(written, [approved]);
      assert.deepEqual(done.steps[1]?.resolvedInput, approved);
    });
  });
});
