// The scan half of the durable store contract (docs/api.md, "Stores": `SealScanStore`):
// `scanSeals(page)` reads the jobs and the checkpoints' entries a page at a time, each as
// `readSeals` and `readChain` read them, and `verifyStore` over the pages finds every problem the
// whole read finds, with changes on both sides of page boundaries.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { OperatorRuntime, type ExecutionPlan } from '../../src/index.js';
import type {
  JobStore,
  ScannedEntry,
  ScannedJob,
  SealedEntry,
  SealScanStore,
} from '../../src/jobs/job-store.js';
import { verifyScan, verifySeals } from '../../src/record/verify-store.js';
import { DENY_WRITES, registerShared, suiteRuntimes } from '../support/store-fixtures.js';
import type { StoreUnderTest } from './contract.js';

type Sql = NonNullable<StoreUnderTest['sql']>;
const JOB_SEQ = '(SELECT seq FROM {jobs} WHERE id = ?)';

const { echo, write } = registerShared('scan', {
  echo: { description: 'its input', execute: ({ input }) => input },
  write: { description: 'denied', risk: 'write', execute: () => 1 },
});

/** Job `index` of a store: two steps, every third one denied at its second step. */
const planOf = (index: number): ExecutionPlan => ({
  version: '1.0',
  goal: `scan ${index}`,
  steps: [
    { id: 'a', capability: echo, input: { n: index } },
    { id: 'b', capability: index % 3 === 2 ? write : echo, input: { n: index + 1 } },
  ],
});

async function collect<T>(pages: AsyncIterable<readonly T[]> | Iterable<readonly T[]>) {
  const read: (readonly T[])[] = [];
  for await (const page of pages) read.push(page);
  return read;
}

export function runScanContract(store: StoreUnderTest): void {
  const sql = store.sql as Sql;
  const reopen = store.reopen as (option: string) => JobStore & SealScanStore;
  const { keep } = suiteRuntimes();

  /** A store of 12 jobs sealed by two checkpoints (each runtime seals when it closes). */
  const twelveJobs = async () => {
    const option = await store.freshStoreOption();
    const ids: string[] = [];
    for (const half of [0, 6]) {
      const runtime = keep(new OperatorRuntime({ store: option, authorizer: DENY_WRITES }));
      for (let index = half; index < half + 6; index++)
        ids.push((await runtime.executePlan(planOf(index))).id);
      await runtime.close();
    }
    return { option, ids };
  };

  describe(`${store.name} store: verifyStore a page at a time (scanSeals)`, () => {
    it('reads every job and every entry in pages, each as readSeals and readChain read it', async () => {
      const { option, ids } = await twelveJobs();
      const direct = reopen(option);
      try {
        const seals = await direct.readSeals();
        assert.deepEqual(seals.jobIds, ids);
        assert.ok(seals.entries.length > 10, 'entries on more than one page of ten');
        for (const page of [1, 5]) {
          const scan = await direct.scanSeals(page);
          assert.equal(scan.jobs, 12);
          assert.deepEqual(scan.checkpoints, seals.checkpoints);
          assert.equal(scan.unsealed, seals.unsealed);
          assert.deepEqual(scan.ledger, seals.ledger);
          assert.deepEqual(scan.approvals, seals.approvals);
          const pages = await collect<ScannedJob>(scan.chains());
          assert.ok(pages.every((read) => read.length >= 1 && read.length <= page));
          const jobs = pages.flat();
          assert.deepEqual(
            jobs.map((job) => job.id),
            ids,
          );
          for (const job of jobs) {
            assert.deepEqual(job.chain, await direct.readChain(job.id), `${job.id} as readChain`);
            const sealed: SealedEntry[] = seals.entries.filter((entry) => entry.jobId === job.id);
            assert.deepEqual(job.sealed, sealed);
          }
          const entryPages = await collect<ScannedEntry>(scan.entries());
          assert.ok(entryPages.every((read) => read.length >= 1 && read.length <= page * 10));
          assert.deepEqual(
            entryPages.flat(),
            seals.entries.map((entry) => ({ ...entry, stored: true })),
          );
        }
      } finally {
        await direct.close();
      }
    });

    it('finds every problem the whole read finds, changes on both sides of page boundaries', async () => {
      const { option, ids } = await twelveJobs();
      const [, , , edited, gone, , , unreadable, , resealed, truncated] = ids as string[];
      // An event edited (a record problem), a job deleted whole (gone), a step that is not JSON
      // any more (unreadable), an entry's hash changed (its checkpoint's root, and the sealed
      // event), the last event of a job removed (fewer events than sealed).
      await sql(
        option,
        `UPDATE {job_events} SET event = replace(event, 'stepCount', 'stepsCount') WHERE job_seq = ${JOB_SEQ}`,
        [edited],
      );
      for (const table of ['job_events', 'job_steps'])
        await sql(option, `DELETE FROM {${table}} WHERE job_seq = ${JOB_SEQ}`, [gone]);
      await sql(option, 'DELETE FROM {jobs} WHERE id = ?', [gone]);
      await sql(
        option,
        `UPDATE {job_steps} SET state = 'not json' WHERE position = 1 AND job_seq = ${JOB_SEQ}`,
        [unreadable],
      );
      await sql(option, "UPDATE {checkpoint_entries} SET hash = 'sha256:00' WHERE job_id = ?", [
        resealed,
      ]);
      await sql(
        option,
        `DELETE FROM {job_events} WHERE job_seq = ${JOB_SEQ} AND position = (SELECT max(position) FROM {job_events} WHERE job_seq = ${JOB_SEQ})`,
        [truncated, truncated],
      );

      const direct = reopen(option);
      try {
        const whole = await verifySeals(
          await direct.readSeals(),
          async (id) => direct.readChain(id),
          undefined,
        );
        for (const [jobId, kind] of [
          [edited, 'record'],
          [gone, 'gone'],
          [unreadable, 'record'],
          [resealed, 'sealed'],
          [truncated, 'sealed'],
        ] as const) {
          assert.ok(
            whole.problems.some((problem) => problem.jobId === jobId && problem.kind === kind),
            `${kind} for ${jobId}: ${JSON.stringify(whole.problems)}`,
          );
        }
        assert.ok(whole.problems.some((problem) => problem.kind === 'checkpoint'));
        for (const page of [1, 2, 4])
          assert.deepEqual(await verifyScan(await direct.scanSeals(page), undefined), whole);
        const runtime = keep(new OperatorRuntime({ store: option, recover: false }));
        assert.deepEqual(await runtime.verifyStore(), whole);
      } finally {
        await direct.close();
      }
    });
  });
}
