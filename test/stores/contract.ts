// STYLE.md rule 18: one contract suite for every store. Each store's test file only calls
// runJobStoreContract; the runtime drives the store through its public `store` option.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { OperatorRuntime, createCapability, type Job } from '../../src/index.js';
import type { JobStore } from '../../src/jobs/job-store.js';
import { uniqueName } from '../support/runtime-fixtures.js';

export interface StoreUnderTest {
  readonly name: string;
  /** A `store` option naming a fresh, empty store. */
  readonly freshStoreOption: () => string | Promise<string>;
  /** Opens the store named by an option again, directly (a second connection, or a restart). */
  readonly reopen?: (option: string) => JobStore;
}

export function runJobStoreContract(store: StoreUnderTest): void {
  const runtimes: OperatorRuntime[] = [];
  const open = async () => {
    const option = await store.freshStoreOption();
    const runtime = new OperatorRuntime({
      store: option,
      authorizer: {
        authorize: ({ capability }) =>
          capability.risk === 'write'
            ? { decision: 'deny', reason: 'no writes' }
            : { decision: 'allow' },
      },
    });
    runtimes.push(runtime);
    return { runtime, option };
  };
  after(async () => {
    for (const runtime of runtimes) await runtime.close();
  });

  const read = uniqueName('store.read');
  const write = uniqueName('store.write');
  const odd = uniqueName('store.odd');
  const boom = uniqueName('store.boom');
  new OperatorRuntime().use({
    manifest: {
      name: uniqueName('store-module'),
      version: '1',
      capabilities: [read, write, odd, boom],
    },
    capabilities: [
      createCapability({
        name: read,
        version: '1',
        description: 'd',
        risk: 'read',
        execute: ({ input }) => ({ echoed: input }),
      }),
      createCapability({
        name: write,
        version: '1',
        description: 'd',
        risk: 'write',
        execute: () => 'written',
      }),
      createCapability({
        name: odd,
        version: '1',
        description: 'returns values JSON cannot hold',
        risk: 'read',
        execute: () => {
          const cyclic: Record<string, unknown> = { name: 'loop' };
          cyclic.self = cyclic;
          return {
            big: 10n,
            fn: () => 1,
            list: [undefined, 1],
            when: new Date(0),
            map: new Map([['k', 'v']]),
            cyclic,
            nan: NaN,
          };
        },
      }),
      createCapability({
        name: boom,
        version: '1',
        description: 'd',
        risk: 'read',
        execute: () => {
          throw new Error('boom');
        },
      }),
    ],
  });

  const plan = (goal: string, ...capabilities: string[]) => ({
    version: '1.0' as const,
    goal,
    steps: capabilities.map((capability, index) => ({
      id: `s${index}`,
      capability,
      input: { n: index },
    })),
  });

  describe(`${store.name} store contract`, () => {
    it('stores a completed job and gives it back with its steps, result and events in order', async () => {
      const { runtime } = await open();
      const job = await runtime.executePlan({
        ...plan('two steps', read, read),
        id: 'plan-1',
        metadata: { team: 'ops' },
      });
      const stored = (await runtime.getJob(job.id)) as Job;
      assert.equal(stored.id, job.id);
      assert.equal(stored.status, 'completed');
      assert.equal(stored.outcome, 'success');
      assert.equal(stored.goal, 'two steps');
      assert.equal(stored.planId, 'plan-1');
      assert.deepEqual(stored.metadata, { team: 'ops' });
      assert.deepEqual(stored.result, [{ echoed: { n: 0 } }, { echoed: { n: 1 } }]);
      assert.deepEqual(
        stored.steps.map((step) => [step.id, step.capability, step.status]),
        [
          ['s0', read, 'completed'],
          ['s1', read, 'completed'],
        ],
      );
      assert.deepEqual(stored.steps[0]?.input, { n: 0 });
      assert.equal(typeof stored.steps[0]?.startedAt, 'string');
      assert.deepEqual(
        stored.events.map((event) => event.type),
        job.events.map((event) => event.type),
      );
      assert.deepEqual(
        stored.events.map((event) => event.id),
        job.events.map((event) => event.id),
      );
      assert.deepEqual(stored.events[2]?.data, { stepId: 's0', capability: read });
      assert.equal(stored.createdAt, job.createdAt);
      assert.equal(stored.completedAt, job.completedAt);
    });

    it('records a denied job as failed with the denied step and the skipped ones', async () => {
      const { runtime } = await open();
      const job = await runtime.executePlan(plan('denied', read, write, read));
      const stored = (await runtime.getJob(job.id)) as Job;
      assert.equal(stored.status, 'failed');
      assert.equal(stored.outcome, 'failed');
      assert.equal(stored.error, 'no writes');
      assert.deepEqual(
        stored.steps.map((step) => step.status),
        ['completed', 'failed', 'skipped'],
      );
      assert.equal(stored.steps[1]?.error, 'no writes');
      assert.deepEqual(stored.events.map((event) => event.type).slice(-2), [
        'capability.denied',
        'job.failed',
      ]);
    });

    it('records a failing capability with its error', async () => {
      const { runtime } = await open();
      const job = await runtime.executePlan(plan('fails', boom));
      const stored = (await runtime.getJob(job.id)) as Job;
      assert.equal(stored.error, 'boom');
      assert.deepEqual(
        stored.events.map((event) => event.type),
        [
          'job.created',
          'execution.started',
          'capability.started',
          'capability.failed',
          'job.failed',
        ],
      );
    });

    it('shows a job cut off mid-step as executing with the step running', async () => {
      const { runtime } = await open();
      let release: () => void = () => {};
      const gate = new Promise<void>((resolve) => (release = resolve));
      const slow = uniqueName('store.slow');
      runtime.use({
        manifest: { name: uniqueName('slow-module'), version: '1', capabilities: [slow] },
        capabilities: [
          createCapability({
            name: slow,
            version: '1',
            description: 'd',
            risk: 'read',
            execute: () => gate,
          }),
        ],
      });
      const running = runtime.executePlan(plan('in flight', slow));
      await new Promise((resolve) => setTimeout(resolve, 20));
      const [current] = await runtime.listJobs({ goal: 'in flight' });
      assert.equal(current?.status, 'executing');
      assert.equal(current?.steps[0]?.status, 'running');
      assert.equal(current?.events.at(-1)?.type, 'capability.started');
      release();
      assert.equal((await running).status, 'completed');
      assert.equal((await runtime.getJob((await running).id))?.status, 'completed');
    });

    it('lists newest first, filtered by status, capability and goal, limited', async () => {
      const { runtime } = await open();
      const first = await runtime.executePlan(plan('alpha', read));
      const second = await runtime.executePlan(plan('beta', write));
      const third = await runtime.executePlan(plan('alpha', read, read));
      const ids = (jobs: Job[]) => jobs.map((job) => job.id);
      assert.deepEqual(ids(await runtime.listJobs()), [third.id, second.id, first.id]);
      assert.deepEqual(ids(await runtime.listJobs({ status: 'failed' })), [second.id]);
      assert.deepEqual(ids(await runtime.listJobs({ status: 'completed', goal: 'alpha' })), [
        third.id,
        first.id,
      ]);
      assert.deepEqual(ids(await runtime.listJobs({ capability: write })), [second.id]);
      assert.deepEqual(ids(await runtime.listJobs({ capability: uniqueName('none') })), []);
      assert.deepEqual(ids(await runtime.listJobs({ limit: 1 })), [third.id]);
      assert.deepEqual(ids(await runtime.listJobs({ limit: 0 })), []);
      assert.equal((await runtime.listJobs({ limit: 50 })).length, 3);
      assert.equal(await runtime.getJob('no-such-job'), undefined);
    });

    it('records jobs run concurrently by one runtime completely, each event once and in order', async () => {
      const { runtime } = await open();
      const jobs = await Promise.all(
        Array.from({ length: 20 }, (_, index) =>
          runtime.executePlan(plan(`concurrent ${index}`, read, index % 2 === 0 ? read : write)),
        ),
      );
      for (const job of jobs) {
        const stored = (await runtime.getJob(job.id)) as Job;
        assert.equal(stored.status, job.status);
        assert.deepEqual(
          stored.events.map((event) => event.id),
          job.events.map((_, index) => `${job.id}:${index + 1}`),
        );
        assert.deepEqual(
          stored.steps.map((step) => step.status),
          job.steps.map((step) => step.status),
        );
      }
      assert.equal((await runtime.listJobs()).length, 20);
    });

    it('never crashes on values JSON cannot hold', async () => {
      const { runtime } = await open();
      const cyclicInput: Record<string, unknown> = { n: 1 };
      cyclicInput.self = cyclicInput;
      const job = await runtime.executePlan({
        version: '1.0',
        goal: 'odd values',
        metadata: { big: 1n },
        steps: [
          { id: 'odd', capability: odd },
          { id: 'echo', capability: read, input: cyclicInput },
        ],
      });
      assert.equal(job.status, 'completed');
      const stored = (await runtime.getJob(job.id)) as Job;
      assert.equal(stored.status, 'completed');
      assert.ok(stored.steps[0]?.result !== undefined);
    });

    if (store.reopen !== undefined) {
      const reopen = store.reopen;
      it('keeps every job across a reopen (durable)', async () => {
        const { runtime, option } = await open();
        const job = await runtime.executePlan(plan('durable', read, write));
        await runtime.close();
        const again = reopen(option);
        try {
          const stored = (await again.get(job.id)) as Job;
          assert.equal(stored.status, 'failed');
          assert.deepEqual(
            stored.steps.map((step) => step.status),
            ['completed', 'failed'],
          );
          assert.equal(stored.events.length, job.events.length);
        } finally {
          await again.close();
        }
      });
    }
  });
}
