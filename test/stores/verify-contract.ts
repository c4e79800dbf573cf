// The verification half of the store contract (docs/api.md, "runtime.verifyJob"): every store
// verifies its intact jobs; the durable ones keep the event chain, and a record edited in the
// database itself (a result, an input, an event, a deleted or reordered event) is reported.
import assert from 'node:assert/strict';
import { createHash, createHmac } from 'node:crypto';
import { describe, it } from 'node:test';
import {
  OperatorRuntime,
  verifyEvidence,
  type EvidenceBundle,
  type ExecutionAuthorizer,
  type ExecutionPlan,
  type Job,
  type JobVerification,
} from '../../src/index.js';
import { POSTGRES_SCHEMA_VERSION } from '../../src/stores/postgres/postgres-store.js';
import { SQLITE_SCHEMA_VERSION } from '../../src/stores/sqlite/sqlite-store.js';
import { verifyRecord } from '../../src/record/verify-record.js';
import { canonicalJson } from '../../src/json/canonical-json.js';
import { DENY_WRITES, registerShared, suiteRuntimes } from '../support/store-fixtures.js';
import type { StoreUnderTest } from './contract.js';

/** Reads a job's rows: {jobs}, {job_steps} and {job_events} name the store's tables. */
const JOB_SEQ = '(SELECT seq FROM {jobs} WHERE id = ?)';

type Broken = Extract<JobVerification, { ok: false }>;

export function runVerifyContract(store: StoreUnderTest): void {
  const { keep } = suiteRuntimes();
  const open = async (auditKey?: string, option?: string) => {
    const chosen = option ?? (await store.freshStoreOption());
    // A named authorizer: its name is recorded with each decision.
    const authorizer: ExecutionAuthorizer & { name: string } = {
      name: 'house rules',
      authorize: DENY_WRITES.authorize,
    };
    const runtime = keep(
      new OperatorRuntime({
        store: chosen,
        authorizer,
        ...(auditKey === undefined ? {} : { auditKey }),
      }),
    );
    return { runtime, option: chosen };
  };

  const { make, echo, write, boom, prepared } = registerShared('verify', {
    make: { description: 'a result', execute: () => ({ amount: 10, to: 'alice' }) },
    echo: { description: 'its input', execute: ({ input }) => input },
    write: { risk: 'write', execute: () => 1 },
    boom: {
      execute: () => {
        throw new Error('boom');
      },
    },
    // docs/api.md, "Prepared effects": the effect is recorded with the decision.
    prepared: {
      prepare: (input) => ({ op: 'pay', to: (input as { to: string }).to }),
      execute: () => 'paid',
    },
  });

  /** Made, then echoed through a reference: a result, an input as authorized, five steps' events. */
  const referencing: ExecutionPlan = {
    version: '1.0',
    goal: 'verify me',
    steps: [
      { id: 'made', capability: make },
      {
        id: 'paid',
        capability: echo,
        input: { payment: { $ref: 'steps.made.result' }, note: 'x' },
      },
    ],
  };
  const others: ExecutionPlan[] = [
    {
      version: '1.0',
      steps: [
        { id: 'w', capability: write, input: { to: 'x' } },
        { id: 'later', capability: echo },
      ],
    },
    { version: '1.0', steps: [{ id: 'b', capability: boom, input: [1, 2] }] },
    {
      version: '1.0',
      steps: [
        { id: 'a', capability: make },
        { id: 'bad', capability: echo, input: { $ref: 'steps.a.result.missing' } },
      ],
    },
  ];

  const broken = (verification: JobVerification | undefined): Broken => {
    assert.ok(verification !== undefined, 'a verification');
    assert.equal(verification.ok, false, 'reported broken');
    return verification as Broken;
  };

  describe(`${store.name} store: verifyJob`, () => {
    it('verifies intact jobs of every kind, and answers undefined for an unknown id', async () => {
      const { runtime } = await open();
      for (const plan of [referencing, ...others]) {
        const job = await runtime.executePlan(plan);
        assert.deepEqual(await runtime.verifyJob(job.id), { ok: true, events: job.events.length });
      }
      assert.equal(await runtime.verifyJob('no-such-job'), undefined);
    });

    if (store.sql === undefined) {
      it('checks the digests of what the memory store holds (it keeps no chain)', async () => {
        const { runtime } = await open();
        const job = await runtime.executePlan(referencing);
        const stored = (await runtime.getJob(job.id)) as Job;
        // getJob hands out a frozen snapshot (docs/api.md, "runtime.getJob"): a reader cannot
        // change what the store holds, so the record stays intact.
        assert.throws(() => {
          (stored.steps[0]?.result as { amount: number }).amount = 1_000;
        }, TypeError);
        assert.deepEqual(await runtime.verifyJob(job.id), { ok: true, events: job.events.length });
        // What the store holds is still checked against its digests.
        const forged = structuredClone(stored);
        (forged.steps[0]?.result as { amount: number }).amount = 1_000;
        const failure = broken(verifyRecord(forged, undefined, undefined));
        assert.equal(failure.stepId, 'made');
        assert.match(failure.reason, /result of step made does not match its digest/);
      });
      return;
    }
    const sql = store.sql;

    it('stores each event with its chain hash: SHA-256 over the previous hash and the JCS of the event', async () => {
      const { runtime, option } = await open();
      const job = (await runtime.getJob((await runtime.executePlan(referencing)).id)) as Job;
      const rows = await sql(
        option,
        `SELECT hash FROM {job_events} WHERE job_seq = ${JOB_SEQ} ORDER BY position`,
        [job.id],
      );
      let previous = '';
      const expected = job.events.map((event) => {
        previous = `sha256:${createHash('sha256')
          .update(`${previous}\n${canonicalJson(event)}`)
          .digest('hex')}`;
        return previous;
      });
      assert.deepEqual(
        rows.map((row) => row.hash),
        expected,
      );
    });

    it('reports a result edited in the database', async () => {
      const { runtime, option } = await open();
      const job = await runtime.executePlan(referencing);
      const [row] = await sql(
        option,
        `SELECT state FROM {job_steps} WHERE job_seq = ${JOB_SEQ} AND position = 0`,
        [job.id],
      );
      const state = JSON.parse(String(row?.state)) as { result: { amount: number } };
      state.result.amount = 1_000_000;
      await sql(
        option,
        `UPDATE {job_steps} SET state = ? WHERE job_seq = ${JOB_SEQ} AND position = 0`,
        [JSON.stringify(state), job.id],
      );
      assert.equal(
        ((await runtime.getJob(job.id))?.steps[0]?.result as { amount: number }).amount,
        1_000_000,
      );
      const failure = broken(await runtime.verifyJob(job.id));
      assert.equal(failure.stepId, 'made');
      assert.match(failure.reason, /^the result of step made does not match its digest/);
      assert.equal(failure.eventIndex, 3);
    });

    it('reports an effect edited in the database, in verifyJob and in its evidence bundle', async () => {
      const { runtime, option } = await open();
      const job = await runtime.executePlan({
        version: '1.0',
        steps: [{ id: 'pay', capability: prepared, input: { to: 'bob' } }],
      });
      assert.deepEqual(await runtime.verifyJob(job.id), { ok: true, events: job.events.length });
      const [row] = await sql(
        option,
        `SELECT decision FROM {job_steps} WHERE job_seq = ${JOB_SEQ} AND position = 0`,
        [job.id],
      );
      const decision = JSON.parse(String(row?.decision)) as { effect: { to: string } };
      assert.equal(decision.effect.to, 'bob');
      decision.effect.to = 'mallory';
      await sql(
        option,
        `UPDATE {job_steps} SET decision = ? WHERE job_seq = ${JOB_SEQ} AND position = 0`,
        [JSON.stringify(decision), job.id],
      );
      const failure = broken(await runtime.verifyJob(job.id));
      assert.equal(failure.stepId, 'pay');
      assert.match(failure.reason, /^the effect of step pay does not match its digest/);
      const bundle = (await runtime.exportJob(job.id)) as EvidenceBundle;
      assert.deepEqual(
        verifyEvidence(bundle).problems.map((problem) => problem.part),
        ['job'],
      );
      assert.match(
        verifyEvidence(bundle).problems[0]?.reason ?? '',
        /the effect of step pay does not match its digest/,
      );
    });

    it('reports an input as authorized, and an input as submitted, edited in the database', async () => {
      const { runtime, option } = await open();
      const job = await runtime.executePlan(referencing);
      const [row] = await sql(
        option,
        `SELECT decision FROM {job_steps} WHERE job_seq = ${JOB_SEQ} AND position = 1`,
        [job.id],
      );
      const decision = JSON.parse(String(row?.decision)) as { resolvedInput: { note: string } };
      decision.resolvedInput.note = 'edited';
      await sql(
        option,
        `UPDATE {job_steps} SET decision = ? WHERE job_seq = ${JOB_SEQ} AND position = 1`,
        [JSON.stringify(decision), job.id],
      );
      const failure = broken(await runtime.verifyJob(job.id));
      assert.equal(failure.stepId, 'paid');
      assert.match(failure.reason, /^the resolved input of step paid does not match its digest/);

      const other = await runtime.executePlan(others[1] as ExecutionPlan);
      await sql(
        option,
        `UPDATE {job_steps} SET fixed = replace(fixed, '[1,2]', '[1,3]') WHERE job_seq = ${JOB_SEQ}`,
        [other.id],
      );
      const input = broken(await runtime.verifyJob(other.id));
      assert.equal(input.stepId, 'b');
      assert.match(input.reason, /^the input of step b does not match its digest/);
    });

    it('reports an edited, a deleted and a reordered event at its place', async () => {
      const { runtime, option } = await open();
      const edited = await runtime.executePlan(referencing);
      await sql(
        option,
        `UPDATE {job_events} SET event = replace(event, 'verify me', 'something else') WHERE job_seq = ${JOB_SEQ} AND position = 0`,
        [edited.id],
      );
      const editedFailure = broken(await runtime.verifyJob(edited.id));
      assert.equal(editedFailure.eventIndex, 0);
      assert.match(editedFailure.reason, /^event 0 \(job.created\) does not match its hash/);

      const deleted = await runtime.executePlan(referencing);
      await sql(option, `DELETE FROM {job_events} WHERE job_seq = ${JOB_SEQ} AND position = 3`, [
        deleted.id,
      ]);
      const deletedFailure = broken(await runtime.verifyJob(deleted.id));
      assert.equal(deletedFailure.eventIndex, 3, 'the first event whose chain no longer holds');
      assert.equal(deletedFailure.stepId, 'paid');

      const reordered = await runtime.executePlan(referencing);
      const move = (from: number, to: number) =>
        sql(
          option,
          `UPDATE {job_events} SET position = ? WHERE job_seq = ${JOB_SEQ} AND position = ?`,
          [to, reordered.id, from],
        );
      await move(4, -1);
      await move(5, 4);
      await move(-1, 5);
      const reorderedFailure = broken(await runtime.verifyJob(reordered.id));
      assert.equal(reorderedFailure.eventIndex, 4);
    });

    it('reports a row edited into something that is not a record, without throwing', async () => {
      const { runtime, option } = await open();
      const job = await runtime.executePlan(referencing);
      await sql(
        option,
        `UPDATE {job_steps} SET state = ? WHERE job_seq = ${JOB_SEQ} AND position = 0`,
        ['{not json', job.id],
      );
      const failure = broken(await runtime.verifyJob(job.id));
      assert.match(failure.reason, /^the record cannot be read/);
    });

    it('keys the chain with the audit key: HMAC-SHA-256, verified only with that key', async () => {
      const key = 'an audit key, kept apart from the database';
      const { runtime, option } = await open(key);
      const job = await runtime.executePlan(referencing);
      const rows = await sql(
        option,
        `SELECT hash FROM {job_events} WHERE job_seq = ${JOB_SEQ} ORDER BY position`,
        [job.id],
      );
      const stored = (await runtime.getJob(job.id)) as Job;
      const first = createHmac('sha256', Buffer.from(key, 'utf8'))
        .update(`\n${canonicalJson(stored.events[0])}`)
        .digest('hex');
      assert.equal(rows[0]?.hash, `hmac-sha256:${first}`);
      assert.deepEqual(await runtime.verifyJob(job.id), { ok: true, events: job.events.length });
      await runtime.close();
      const keyless = (await open(undefined, option)).runtime;
      assert.match(broken(await keyless.verifyJob(job.id)).reason, /^the chain is keyed/);
      const otherKey = (await open('another key', option)).runtime;
      assert.equal(broken(await otherKey.verifyJob(job.id)).eventIndex, 0);
      // Someone without the key rewrites the chain as plain SHA-256 after an edit: refused.
      await sql(
        option,
        `UPDATE {job_events} SET hash = 'sha256:' || substr(hash, 13) WHERE job_seq = ${JOB_SEQ}`,
        [job.id],
      );
      const keyed = (await open(key, option)).runtime;
      assert.match(broken(await keyed.verifyJob(job.id)).reason, /^event 0 is not keyed/);
    });

    /**
     * Edits of what a reader sees, each made in the database itself; the chain (and its hashes)
     * left as they are. The job: a denied write by alice, its next step skipped.
     */
    const denied = others[0] as ExecutionPlan;
    const row = async (option: string, table: string, column: string, id: string, at?: number) => {
      const where =
        table === 'jobs'
          ? 'id = ?'
          : `job_seq = ${JOB_SEQ}${at === undefined ? '' : ' AND position = ?'}`;
      const values = at === undefined ? [id] : [id, at];
      const [found] = await sql(option, `SELECT ${column} FROM {${table}} WHERE ${where}`, values);
      return {
        value: JSON.parse(String(found?.[column])) as Record<string, unknown>,
        write: (value: unknown) =>
          sql(option, `UPDATE {${table}} SET ${column} = ? WHERE ${where}`, [
            typeof value === 'string' ? value : JSON.stringify(value),
            ...values,
          ]),
      };
    };
    const tampering: [string, (option: string, id: string) => Promise<unknown>, RegExp][] = [
      [
        'the caller id changed',
        async (option, id) => {
          const fixed = await row(option, 'jobs', 'fixed', id);
          (fixed.value.caller as { id: string }).id = 'mallory';
          await fixed.write(fixed.value);
        },
        /^the job's caller does not match its events/,
      ],
      [
        'the plan version changed',
        async (option, id) => {
          const fixed = await row(option, 'jobs', 'fixed', id);
          fixed.value.planVersion = '2.0';
          await fixed.write(fixed.value);
        },
        /^the job's plan version does not match its events/,
      ],
      [
        'the caller removed',
        async (option, id) => {
          const fixed = await row(option, 'jobs', 'fixed', id);
          delete fixed.value.caller;
          await fixed.write(fixed.value);
        },
        /^the job's caller does not match its events/,
      ],
      [
        'a decision outcome deny -> allow',
        async (option, id) => {
          const decision = await row(option, 'job_steps', 'decision', id, 0);
          (decision.value.decision as { outcome: string }).outcome = 'allow';
          await decision.write(decision.value);
        },
        /^the decision of step w does not match its events/,
      ],
      [
        "the decision's authorizer",
        async (option, id) => {
          const decision = await row(option, 'job_steps', 'decision', id, 0);
          (decision.value.decision as { authorizer: string }).authorizer = 'a lenient policy';
          await decision.write(decision.value);
        },
        /^the decision of step w does not match its events/,
      ],
      [
        "the decision's decidedAt",
        async (option, id) => {
          const decision = await row(option, 'job_steps', 'decision', id, 0);
          (decision.value.decision as { decidedAt: string }).decidedAt = '2020-01-01T00:00:00.000Z';
          await decision.write(decision.value);
        },
        /^the decision of step w does not match its events/,
      ],
      [
        'the job goal',
        async (option, id) => {
          await sql(option, 'UPDATE {jobs} SET goal = ? WHERE id = ?', [
            JSON.stringify('something harmless'),
            id,
          ]);
        },
        /^the job's goal does not match its events/,
      ],
      [
        'a step failed -> skipped, its error erased',
        async (option, id) => {
          const state = await row(option, 'job_steps', 'state', id, 0);
          delete state.value.error;
          await state.write(state.value);
          await sql(
            option,
            `UPDATE {job_steps} SET status = 'skipped' WHERE job_seq = ${JOB_SEQ} AND position = 0`,
            [id],
          );
        },
        /^step w is skipped but its events say failed/,
      ],
      [
        'the job error',
        async (option, id) => {
          const state = await row(option, 'jobs', 'state', id);
          state.value.error = 'the network was down';
          await state.write(state.value);
        },
        /^the job's error does not match its events/,
      ],
      [
        "a step's capability",
        async (option, id) => {
          await sql(
            option,
            `UPDATE {job_steps} SET capability = ? WHERE job_seq = ${JOB_SEQ} AND position = 1`,
            [JSON.stringify(make), id],
          );
        },
        /^the job's plan id, idempotency key, metadata or steps .* do not match its events/,
      ],
      [
        'two steps swapped',
        async (option, id) => {
          const move = (from: number, to: number) =>
            sql(
              option,
              `UPDATE {job_steps} SET position = ? WHERE job_seq = ${JOB_SEQ} AND position = ?`,
              [to, id, from],
            );
          await move(0, -1);
          await move(1, 0);
          await move(-1, 1);
        },
        /^the job's plan id, idempotency key, metadata or steps .* do not match its events/,
      ],
    ];
    it('reports an actor id of the caller\'s chain changed in the store (docs/api.md, "Callers: acting for someone")', async () => {
      const { runtime, option } = await open();
      const job = await runtime.executePlan(denied, {
        caller: { id: 'alice', actor: { id: 'assistant', actor: { id: 'planner' } } },
      });
      assert.deepEqual(await runtime.verifyJob(job.id), { ok: true, events: job.events.length });
      const fixed = await row(option, 'jobs', 'fixed', job.id);
      const caller = fixed.value.caller as { actor: { actor: { id: string } } };
      caller.actor.actor.id = 'mallory';
      await fixed.write(fixed.value);
      assert.match(
        broken(await runtime.verifyJob(job.id)).reason,
        /^the job's caller does not match its events/,
      );
    });

    for (const [edit, apply, reported] of tampering) {
      for (const key of [undefined, 'an audit key']) {
        it(`reports ${edit}${key === undefined ? '' : ', with an audit key'}`, async () => {
          const { runtime, option } = await open(key);
          const job = await runtime.executePlan(denied, {
            caller: { id: 'alice', roles: ['ops'] },
          });
          assert.deepEqual(await runtime.verifyJob(job.id), {
            ok: true,
            events: job.events.length,
          });
          await apply(option, job.id);
          assert.match(broken(await runtime.verifyJob(job.id)).reason, reported);
        });
      }
    }

    it('verifies a record written before its events carried every field, naming what it cannot prove', async () => {
      const { runtime, option } = await open();
      const job = await runtime.executePlan(denied, { caller: { id: 'alice' } });
      // What the previous version wrote: job.created with the goal alone, chained as such.
      const rows = await sql(
        option,
        `SELECT position, event FROM {job_events} WHERE job_seq = ${JOB_SEQ} ORDER BY position`,
        [job.id],
      );
      let previous = '';
      for (const stored of rows) {
        const event = JSON.parse(String(stored.event)) as Job['events'][number];
        const old =
          event.type === 'job.created' ? { ...event, data: { goal: event.data?.goal } } : event;
        previous = `sha256:${createHash('sha256')
          .update(`${previous}\n${canonicalJson(old)}`)
          .digest('hex')}`;
        await sql(
          option,
          `UPDATE {job_events} SET event = ?, hash = ? WHERE job_seq = ${JOB_SEQ} AND position = ?`,
          [JSON.stringify(old), previous, job.id, Number(stored.position)],
        );
      }
      const verification = await runtime.verifyJob(job.id);
      assert.equal(verification?.ok, true);
      assert.deepEqual(verification, {
        ok: true,
        events: job.events.length,
        unproven: [
          'caller',
          'metadata',
          'idempotencyKey',
          'planId',
          'job status and error',
          'step ids, order, capabilities and versions',
          'step statuses and errors',
          'decision outcome, reason, authorizer and decidedAt',
        ],
      });
      // The digests it had still hold: an edited input is still reported.
      await sql(
        option,
        `UPDATE {job_steps} SET fixed = replace(fixed, '"x"', '"y"') WHERE job_seq = ${JOB_SEQ} AND position = 0`,
        [job.id],
      );
      assert.match(
        broken(await runtime.verifyJob(job.id)).reason,
        /^the input of step w does not match its digest/,
      );
    });

    it('keeps a database written before the chain readable; its jobs verify as having no chain', async () => {
      const { runtime, option } = await open();
      const job = await runtime.executePlan(referencing);
      await runtime.close();
      // What version 2 had: no decision column, no hash column.
      await sql(option, 'ALTER TABLE {job_steps} DROP COLUMN decision');
      await sql(option, 'ALTER TABLE {job_events} DROP COLUMN hash');
      await sql(option, 'UPDATE {schema_version} SET version = 2');
      const again = (await open(undefined, option)).runtime;
      const stored = (await again.getJob(job.id)) as Job;
      assert.equal(stored.status, 'completed');
      assert.deepEqual(stored.steps[0]?.result, { amount: 10, to: 'alice' });
      assert.equal(stored.steps[1]?.decision, undefined);
      const failure = broken(await again.verifyJob(job.id));
      assert.match(failure.reason, /^no chain: recorded before tamper evidence/);
      const [version] = await sql(option, 'SELECT version FROM {schema_version}');
      assert.equal(
        Number(version?.version),
        store.name === 'sqlite' ? SQLITE_SCHEMA_VERSION : POSTGRES_SCHEMA_VERSION,
      );
      // New jobs in the migrated database are chained.
      const fresh = await again.executePlan(referencing);
      assert.deepEqual(await again.verifyJob(fresh.id), { ok: true, events: fresh.events.length });
    });
  });
}
