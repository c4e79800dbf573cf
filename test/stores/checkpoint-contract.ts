// The checkpoint half of the durable store contract (docs/api.md, "Store checkpoints" and
// "runtime.verifyStore"): once events are sealed, deleting a job, truncating its events (its
// status set back), restoring an older copy of it, or reordering its events is reported by
// verifyStore, even when the job's own chain was recomputed so that verifyJob passes; a head
// kept elsewhere detects a rollback of the whole store.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { OperatorRuntime, createCapability, type ExecutionPlan } from '../../src/index.js';
import { chainHashes } from '../../src/jobs/event-chain.js';
import type { JobEvent } from '../../src/jobs/job.js';
import type { StoreVerification } from '../../src/jobs/verify-store.js';
import { uniqueName } from '../support/runtime-fixtures.js';
import type { StoreUnderTest } from './contract.js';

type Sql = NonNullable<StoreUnderTest['sql']>;
const JOB_SEQ = '(SELECT seq FROM {jobs} WHERE id = ?)';

const echo = uniqueName('checkpoint.echo');
const write = uniqueName('checkpoint.write');
const gate = uniqueName('checkpoint.gate');
/** Released by the test: a job that waits in its step while the test seals. */
let release: () => void = () => {};
let reached: () => void = () => {};
new OperatorRuntime().use({
  manifest: {
    name: uniqueName('checkpoint-module'),
    version: '1',
    capabilities: [echo, write, gate],
  },
  capabilities: [
    createCapability({
      name: echo,
      version: '1',
      description: 'its input',
      risk: 'read',
      execute: ({ input }) => input,
    }),
    createCapability({
      name: write,
      version: '1',
      description: 'denied',
      risk: 'write',
      execute: () => 1,
    }),
    createCapability({
      name: gate,
      version: '1',
      description: 'waits for the test',
      risk: 'read',
      execute: () =>
        new Promise<string>((resolve) => {
          release = () => resolve('released');
          reached();
        }),
    }),
  ],
});

const twoSteps: ExecutionPlan = {
  version: '1.0',
  goal: 'sealed',
  steps: [
    { id: 'a', capability: echo, input: { n: 1 } },
    { id: 'b', capability: echo, input: { n: 2 } },
  ],
};
const denied: ExecutionPlan = {
  version: '1.0',
  goal: 'denied',
  steps: [
    { id: 'r', capability: echo, input: 'read' },
    { id: 'w', capability: write, input: 'write' },
  ],
};

/** Rewrites a job's stored chain from its stored events, as someone without the audit key can. */
async function rechain(sql: Sql, option: string, jobId: string): Promise<void> {
  const rows = await sql(
    option,
    `SELECT position, event FROM {job_events} WHERE job_seq = ${JOB_SEQ} ORDER BY position`,
    [jobId],
  );
  const events = rows.map((row) => JSON.parse(String(row.event)) as JobEvent);
  const hashes = chainHashes('', events, undefined);
  for (const [index, row] of rows.entries())
    await sql(
      option,
      `UPDATE {job_events} SET hash = ? WHERE job_seq = ${JOB_SEQ} AND position = ?`,
      [hashes[index], jobId, row.position],
    );
}

export function runCheckpointContract(store: StoreUnderTest): void {
  const sql = store.sql as Sql;
  const runtimes: OperatorRuntime[] = [];
  after(async () => {
    for (const runtime of runtimes) await runtime.close();
  });
  const open = (option: string, auditKey: string | undefined) => {
    const runtime = new OperatorRuntime({
      store: option,
      authorizer: {
        authorize: ({ capability }) =>
          capability.risk === 'write'
            ? { decision: 'deny', reason: 'no writes' }
            : { decision: 'allow' },
      },
      ...(auditKey === undefined ? {} : { auditKey }),
    });
    runtimes.push(runtime);
    return runtime;
  };
  /** A store with a finished and a denied job, sealed (closing seals), and a runtime on it. */
  const sealedStore = async (auditKey: string | undefined) => {
    const option = await store.freshStoreOption();
    const first = open(option, auditKey);
    const done = await first.executePlan(twoSteps);
    const refused = await first.executePlan(denied);
    assert.equal(refused.status, 'failed');
    await first.close();
    return { option, done, refused, runtime: open(option, auditKey) };
  };
  const reported = (verification: StoreVerification, jobId: string, pattern: RegExp) => {
    assert.equal(verification.ok, false, 'verifyStore reports the change');
    assert.ok(
      verification.problems.some(
        (problem) => problem.jobId === jobId && pattern.test(problem.reason),
      ),
      `a problem for ${jobId} matching ${String(pattern)}: ${JSON.stringify(verification.problems)}`,
    );
  };

  for (const auditKey of [undefined, 'checkpoint audit key']) {
    const keyed = auditKey === undefined ? 'plain' : 'keyed';
    describe(`${store.name} store: checkpoints (${keyed})`, () => {
      it('seals committed events into a chain of checkpoints and verifies an untouched store', async () => {
        const { runtime, done, refused } = await sealedStore(auditKey);
        const verification = await runtime.verifyStore();
        assert.deepEqual(verification.problems, []);
        assert.equal(verification.ok, true);
        assert.equal(verification.jobs, 2);
        assert.equal(verification.unsealed, 0);
        assert.equal(verification.sealedEvents, done.events.length + refused.events.length);
        assert.equal(verification.head?.seq, verification.checkpoints);
        assert.match(
          String(verification.head?.hash),
          auditKey === undefined ? /^sha256:[0-9a-f]{64}$/ : /^hmac-sha256:[0-9a-f]{64}$/,
        );
      });

      it('reports a whole job deleted', async () => {
        const { runtime, option, done } = await sealedStore(auditKey);
        for (const table of ['job_events', 'job_steps'])
          await sql(option, `DELETE FROM {${table}} WHERE job_seq = ${JOB_SEQ}`, [done.id]);
        await sql(option, 'DELETE FROM {jobs} WHERE id = ?', [done.id]);
        reported(await runtime.verifyStore(), done.id, /is gone: checkpoint \d+ sealed/);
      });

      it("reports a denial truncated away, its job's status set back, where verifyJob is fooled", async () => {
        const { runtime, option, refused } = await sealedStore(auditKey);
        const count = refused.events.length;
        // The denial and the job's failure: its last two events.
        await sql(option, `DELETE FROM {job_events} WHERE job_seq = ${JOB_SEQ} AND position >= ?`, [
          refused.id,
          count - 2,
        ]);
        await sql(
          option,
          `UPDATE {job_steps} SET status = 'pending', state = '{}', decision = NULL WHERE job_seq = ${JOB_SEQ} AND position = 1`,
          [refused.id],
        );
        await sql(option, "UPDATE {jobs} SET status = 'executing', state = '{}' WHERE id = ?", [
          refused.id,
        ]);
        if (auditKey === undefined) {
          // What the issue found: the job's own chain still holds, so verifyJob passes.
          assert.equal((await runtime.verifyJob(refused.id))?.ok, true);
        }
        reported(await runtime.verifyStore(), refused.id, /has \d+ events, checkpoint \d+ sealed/);
      });

      it('reports events reordered, even with the chain recomputed', async () => {
        const { runtime, option, done } = await sealedStore(auditKey);
        const move = (from: number, to: number) =>
          sql(
            option,
            `UPDATE {job_events} SET position = ? WHERE job_seq = ${JOB_SEQ} AND position = ?`,
            [to, done.id, from],
          );
        await move(3, -1);
        await move(4, 3);
        await move(-1, 4);
        if (auditKey === undefined) await rechain(sql, option, done.id);
        reported(await runtime.verifyStore(), done.id, /./);
      });

      it('reports an older copy of a job restored', async () => {
        const option = await store.freshStoreOption();
        const writer = open(option, auditKey);
        const reachedGate = new Promise<void>((resolve) => {
          reached = resolve;
        });
        const running = writer.executePlan({
          version: '1.0',
          goal: 'restored',
          steps: [
            { id: 'g', capability: gate },
            { id: 'w', capability: write, input: 'x' },
          ],
        });
        await reachedGate;
        const [waiting] = await writer.listJobs({ status: 'executing' });
        assert.ok(waiting !== undefined);
        // exportJob seals first: the job as it is now is sealed.
        await writer.exportJob(waiting.id);
        const copy = {
          job: await sql(option, 'SELECT status, updated_at, state FROM {jobs} WHERE id = ?', [
            waiting.id,
          ]),
          steps: await sql(
            option,
            `SELECT position, status, state, decision FROM {job_steps} WHERE job_seq = ${JOB_SEQ}`,
            [waiting.id],
          ),
          events: await sql(
            option,
            `SELECT position, event, hash FROM {job_events} WHERE job_seq = ${JOB_SEQ}`,
            [waiting.id],
          ),
        };
        release();
        const finished = await running;
        assert.equal(finished.status, 'failed', 'its write was denied');
        await writer.close();
        // The older copy put back: rows as they were when first sealed.
        await sql(option, `DELETE FROM {job_events} WHERE job_seq = ${JOB_SEQ}`, [waiting.id]);
        for (const row of copy.events)
          await sql(
            option,
            `INSERT INTO {job_events} (job_seq, position, event, hash) VALUES (${JOB_SEQ}, ?, ?, ?)`,
            [waiting.id, row.position, row.event, row.hash],
          );
        for (const row of copy.steps)
          await sql(
            option,
            `UPDATE {job_steps} SET status = ?, state = ?, decision = ? WHERE job_seq = ${JOB_SEQ} AND position = ?`,
            [row.status, row.state, row.decision, waiting.id, row.position],
          );
        const [job] = copy.job;
        await sql(option, 'UPDATE {jobs} SET status = ?, updated_at = ?, state = ? WHERE id = ?', [
          job?.status,
          job?.updated_at,
          job?.state,
          waiting.id,
        ]);
        const runtime = open(option, auditKey);
        assert.equal(
          (await runtime.verifyJob(waiting.id))?.ok,
          true,
          'the copy is consistent in itself',
        );
        reported(await runtime.verifyStore(), waiting.id, /has \d+ events, checkpoint \d+ sealed/);
      });

      it('detects a rollback of the whole store with a head kept elsewhere (since)', async () => {
        const { runtime, option } = await sealedStore(auditKey);
        const early = (await runtime.verifyStore()).head;
        assert.ok(early !== undefined);
        const later = await runtime.executePlan(twoSteps);
        await runtime.close();
        const again = open(option, auditKey);
        const kept = (await again.verifyStore()).head;
        assert.ok(kept !== undefined && kept.seq > early.seq);
        assert.equal((await again.verifyStore({ since: `${early.seq}:${early.hash}` })).ok, true);
        // Roll everything back to the early head, consistently.
        await sql(option, 'DELETE FROM {checkpoint_entries} WHERE checkpoint > ?', [early.seq]);
        await sql(option, 'DELETE FROM {checkpoints} WHERE seq > ?', [early.seq]);
        for (const table of ['job_events', 'job_steps'])
          await sql(option, `DELETE FROM {${table}} WHERE job_seq = ${JOB_SEQ}`, [later.id]);
        await sql(option, 'DELETE FROM {jobs} WHERE id = ?', [later.id]);
        assert.equal((await again.verifyStore()).ok, true, 'consistent in itself');
        const since = await again.verifyStore({ since: `${kept.seq}:${kept.hash}` });
        assert.equal(since.ok, false);
        assert.match(since.problems[0]?.reason ?? '', /is not in the store.*rolled back/);
      });
    });
  }
}
