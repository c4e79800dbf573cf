// The checkpoint half of the durable store contract (docs/api.md, "Store checkpoints" and
// "runtime.verifyStore"): once events are sealed, deleting a job, truncating its events (its
// status set back), restoring an older copy of it, or reordering its events is reported by
// verifyStore, even when the job's own chain was recomputed so that verifyJob passes; a head
// kept elsewhere detects a rollback of the whole store.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { OperatorRuntime, verifyEvidence, type ExecutionPlan } from '../../src/index.js';
import { chainHashes } from '../../src/record/event-chain.js';
import type { JobEvent } from '../../src/jobs/job.js';
import type { StoreVerification } from '../../src/record/verify-store.js';
import { DENY_WRITES, registerShared, suiteRuntimes } from '../support/store-fixtures.js';
import { within } from '../support/wait.js';
import type { StoreUnderTest } from './contract.js';

type Sql = NonNullable<StoreUnderTest['sql']>;
const JOB_SEQ = '(SELECT seq FROM {jobs} WHERE id = ?)';

/** Released by the test: a job that waits in its step while the test seals. */
let release: () => void = () => {};
let reached: () => void = () => {};
const { echo, write, gate } = registerShared('checkpoint', {
  echo: { description: 'its input', execute: ({ input }) => input },
  write: { description: 'denied', risk: 'write', execute: () => 1 },
  gate: {
    description: 'waits for the test',
    execute: () =>
      new Promise<string>((resolve) => {
        release = () => resolve('released');
        reached();
      }),
  },
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

/**
 * The attack of issue 45, as someone who can write the database but has no audit key: a job's
 * rows copied under a new id, its goal and its second step's result edited, its events' hashes
 * left NULL (as if written before the chain).
 */
async function forgeCopy(sql: Sql, option: string, sourceId: string, forgedId: string) {
  const forgedSeq = '(SELECT seq FROM {jobs} WHERE id = CAST(? AS TEXT))';
  await sql(
    option,
    `INSERT INTO {jobs} (id, status, goal, created_at, updated_at, fixed, state)
     SELECT CAST(? AS TEXT), status, CAST(? AS TEXT), created_at, updated_at, fixed,
       replace(state, '"n":2', '"n":9') FROM {jobs} WHERE id = ?`,
    [forgedId, JSON.stringify('forged'), sourceId],
  );
  await sql(
    option,
    `INSERT INTO {job_steps} (job_seq, position, capability, status, fixed, state, decision)
     SELECT ${forgedSeq}, position, capability, status, fixed, replace(state, '"n":2', '"n":9'),
       decision FROM {job_steps} WHERE job_seq = ${JOB_SEQ}`,
    [forgedId, sourceId],
  );
  await sql(
    option,
    `INSERT INTO {job_events} (job_seq, position, event, hash)
     SELECT ${forgedSeq}, position, replace(event, CAST(? AS TEXT), CAST(? AS TEXT)), NULL
     FROM {job_events} WHERE job_seq = ${JOB_SEQ}`,
    [forgedId, sourceId, forgedId, sourceId],
  );
}

export function runCheckpointContract(store: StoreUnderTest): void {
  const sql = store.sql as Sql;
  const { keep } = suiteRuntimes();
  const open = (option: string, auditKey: string | undefined) =>
    keep(
      new OperatorRuntime({
        store: option,
        authorizer: DENY_WRITES,
        // Writers and auditors of tampered rows: a restored copy is read, never taken up.
        recover: false,
        ...(auditKey === undefined ? {} : { auditKey }),
      }),
    );
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
        await within(reachedGate, { what: 'the job to reach its gate step' });
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

      it('reports a job copied under a new id with no hashes, sealed or not (issue 45)', async () => {
        const { runtime, option, done } = await sealedStore(auditKey);
        const forged = `${done.id}-copy`;
        await forgeCopy(sql, option, done.id, forged);
        const copy = await runtime.getJob(forged);
        assert.equal(copy?.goal, 'forged');
        assert.deepEqual(copy?.steps[1]?.result, { n: 9 });
        const unsealed = await runtime.verifyStore();
        reported(
          unsealed,
          forged,
          /^no chain: its events carry no hash, and it was not recorded before the chain/,
        );
        assert.equal(unsealed.unchained, 0);
        assert.deepEqual(
          unsealed.problems.map((problem) => [problem.kind, problem.jobId]),
          [['record', forged]],
        );
        // Sealing never skips it (export seals first): sealed as having no hash, and reported so.
        const bundle = await runtime.exportJob(forged);
        const evidence = verifyEvidence(bundle, auditKey === undefined ? {} : { auditKey });
        assert.equal(evidence.ok, false, 'its evidence does not verify');
        const sealed = await runtime.verifyStore();
        reported(sealed, forged, /had no chain hash when checkpoint \d+ sealed it/);
        assert.equal(sealed.unchained, 0);
        // Removed again, it is gone from what a checkpoint sealed.
        for (const table of ['job_events', 'job_steps'])
          await sql(option, `DELETE FROM {${table}} WHERE job_seq = ${JOB_SEQ}`, [forged]);
        await sql(option, 'DELETE FROM {jobs} WHERE id = ?', [forged]);
        reported(await runtime.verifyStore(), forged, /is gone: checkpoint \d+ sealed/);
      });

      it('counts the jobs of a store migrated from version 2 apart, and reports a copy of one', async () => {
        const { option, done, runtime: idle } = await sealedStore(auditKey);
        await idle.close();
        // What version 2 had: no checkpoints, no decision column, no hash column.
        await sql(
          option,
          store.name === 'sqlite'
            ? 'DROP TRIGGER job_events_unsealed'
            : 'DROP TRIGGER warrant_job_events_unsealed ON warrant_job_events',
        );
        for (const table of [
          'checkpoint_entries',
          'checkpoint_approvals',
          'checkpoints',
          'checkpoint_unsealed',
          'chain_origin',
        ])
          await sql(option, `DROP TABLE IF EXISTS {${table}}`);
        await sql(option, 'ALTER TABLE {job_steps} DROP COLUMN decision');
        await sql(option, 'ALTER TABLE {job_events} DROP COLUMN hash');
        await sql(option, 'UPDATE {schema_version} SET version = 2');
        const runtime = open(option, auditKey);
        const migrated = await runtime.verifyStore();
        assert.deepEqual(migrated.problems, []);
        assert.equal(migrated.ok, true);
        assert.equal(migrated.unchained, 2, 'both jobs recorded before the chain');
        assert.equal(migrated.jobs, 2);
        // New jobs are chained and sealed; the old ones stay apart.
        const fresh = await runtime.executePlan(twoSteps);
        assert.equal((await runtime.exportJob(fresh.id)) !== undefined, true);
        const later = await runtime.verifyStore();
        assert.deepEqual(later.problems, []);
        assert.equal(later.unchained, 2);
        // A copy of an old job, as unchained as it is, was not there when the chain began.
        await forgeCopy(sql, option, done.id, `${done.id}-copy`);
        const copied = await runtime.verifyStore();
        reported(copied, `${done.id}-copy`, /^no chain: .*not recorded before the chain/);
        assert.equal(copied.unchained, 2);
        // Events without a hash added to an old job are reported too.
        await sql(
          option,
          `INSERT INTO {job_events} (job_seq, position, event, hash)
           SELECT job_seq, position + 1, event, NULL FROM {job_events}
           WHERE job_seq = ${JOB_SEQ} ORDER BY position DESC LIMIT 1`,
          [done.id],
        );
        reported(
          await runtime.verifyStore(),
          done.id,
          /^no chain, and events the store's chain origin \(checkpoint \d+\) did not seal/,
        );
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
