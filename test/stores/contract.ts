// docs/decisions.md, "House rules": one contract suite for every store. Each store's test file only calls
// runJobStoreContract; the runtime drives the store through its public `store` option.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import {
  OperatorRuntime,
  createCapability,
  type ExecutePlanOptions,
  type ExecutionPlan,
  type Job,
} from '../../src/index.js';
import type { JobStore } from '../../src/jobs/job-store.js';
import type { JobStep } from '../../src/jobs/job.js';
import {
  completeJob,
  createJob,
  endStep,
  joinChanges,
  startStep,
  type Decided,
} from '../../src/jobs/transitions.js';
import { digestRecorded, recordValue } from '../../src/jobs/recorded-value.js';
import { uniqueName } from '../support/runtime-fixtures.js';
import { DENY_WRITES, registerShared, suiteRuntimes } from '../support/store-fixtures.js';
import { runApprovalContract } from './approvals-contract.js';
import { runApprovalEditsContract } from './approval-edits-contract.js';
import { runPlanWarrantContract } from './plan-warrant-contract.js';

export interface StoreUnderTest {
  readonly name: string;
  /** A `store` option naming a fresh, empty store. */
  readonly freshStoreOption: () => string | Promise<string>;
  /** Opens the store named by an option again, directly (a second connection, or a restart). */
  readonly reopen?: (option: string) => JobStore;
  /**
   * Runs SQL on the store's database directly, as someone with access to it would: `{jobs}`,
   * `{job_steps}`, `{job_events}` and `{schema_version}` name its tables, `?` its parameters.
   * Durable stores only.
   */
  readonly sql?: (
    option: string,
    text: string,
    values?: unknown[],
  ) => Promise<Record<string, unknown>[]>;
}

/** Strings PostgreSQL or SQLite text cannot hold as such: lone surrogates and U+0000. */
const ODD_TEXT = 'lone \ud800 and \udfff, nul \u0000, pair \u{1F600}, sep \u2028, "q" \\';

/**
 * A job with what differs between two runs of one plan replaced: the job id (also in event ids),
 * and every timestamp (kept as present or absent). Everything else is compared as it is.
 */
export function comparable(job: Job): unknown {
  const time = (value: string | undefined) => (value === undefined ? 'absent' : 'time');
  const { id, createdAt, updatedAt, startedAt, completedAt, steps, events, ...rest } = job;
  return {
    ...rest,
    times: [createdAt, updatedAt, startedAt, completedAt].map(time),
    steps: steps.map(
      ({ createdAt: made, startedAt: began, completedAt: ended, decision, ...step }) => ({
        ...step,
        times: [made, began, ended].map(time),
        decision:
          decision === undefined ? 'absent' : { ...decision, decidedAt: time(decision.decidedAt) },
      }),
    ),
    events: events.map(({ id: eventId, jobId, timestamp, ...event }) => ({
      ...event,
      // The creation digest covers each step's creation time; a decision's time differs too.
      ...(event.data === undefined
        ? {}
        : {
            data: {
              ...event.data,
              ...('record' in event.data && { record: 'digest' }),
              ...('decidedAt' in event.data && { decidedAt: 'time' }),
            },
          }),
      id: eventId.replace(id, '<job>'),
      jobId: jobId === id ? '<job>' : jobId,
      timestamp: time(timestamp),
    })),
  };
}

/** An allow decision on an input, as the executor makes it. */
function allowed(at: string, input: unknown): Decided {
  return {
    outcome: 'allow',
    reason: undefined,
    authorizer: undefined,
    capabilityVersion: '1',
    at,
    input,
    recorded: recordValue(input, 'input'),
    resolved: false,
  };
}

export function runJobStoreContract(store: StoreUnderTest): void {
  const { keep } = suiteRuntimes();
  const authorizer = DENY_WRITES;
  const open = async () => {
    const option = await store.freshStoreOption();
    return { runtime: keep(new OperatorRuntime({ store: option, authorizer })), option };
  };

  const { read, write, odd, boom, strange, hostile, make, mutate, bump } = registerShared('store', {
    make: {
      description: 'returns a fresh object',
      execute: () => ({ list: [1], nested: { n: 1 } }),
    },
    mutate: {
      description: 'changes the object it is handed (an earlier result) in place',
      execute: ({ input }) => {
        const { target } = input as { target: { list: number[]; nested: { n: number } } };
        target.list.push(2);
        target.nested.n = 99;
        return 'mutated';
      },
    },
    bump: {
      description: 'changes its own input in place',
      execute: ({ input }) => {
        (input as { n: number }).n += 1;
        return 'bumped';
      },
    },
    strange: {
      name: `store.${ODD_TEXT}`,
      version: ODD_TEXT,
      description: 'a name, a version and a failure message no text column holds raw',
      execute: ({ input }) => {
        if ((input as { fail?: boolean } | undefined)?.fail === true)
          throw new Error(`failed: ${ODD_TEXT}`);
        return { [ODD_TEXT]: ODD_TEXT, input };
      },
    },
    hostile: {
      description: 'returns values recorded through toJSON, boxed primitives and the like',
      execute: () => {
        class Money {
          constructor(readonly cents: number) {}
          toJSON() {
            return `${this.cents / 100} EUR`;
          }
        }
        class Point {
          constructor(
            readonly x: number,
            readonly y: number,
          ) {}
        }
        const sparse: unknown[] = [1];
        sparse[3] = 'four';
        Object.assign(sparse, { named: 'dropped' });
        const cyclic: Record<string, unknown> = { big: 2n ** 70n };
        cyclic.self = cyclic;
        return {
          url: new URL('https://example.com/path?q=1'),
          number: new Number(5),
          string: new String('abc'),
          boolean: new Boolean(true),
          money: new Money(1250),
          point: new Point(1, -0),
          proxy: new Proxy({ hidden: ODD_TEXT }, {}),
          sparse,
          when: new Date(86_400_000),
          cyclic,
        };
      },
    },
    read: {
      execute: ({ input }) => ({ echoed: input }),
    },
    write: {
      risk: 'write',
      execute: () => 'written',
    },
    odd: {
      description: 'returns values JSON cannot hold',
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
    },
    boom: {
      execute: () => {
        throw new Error('boom');
      },
    },
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

  runApprovalContract(store);
  runApprovalEditsContract(store);
  runPlanWarrantContract(store);

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
      assert.deepEqual(stored.events[2]?.data, {
        stepId: 's0',
        capability: read,
        inputDigest: stored.steps[0]?.decision?.inputDigest,
        capabilityVersion: '1',
      });
      assert.match(stored.steps[0]?.decision?.inputDigest ?? '', /^sha256:[0-9a-f]{64}$/);
      assert.equal(stored.createdAt, job.createdAt);
      assert.equal(stored.completedAt, job.completedAt);
    });

    it('hands out snapshots: changing what getJob or listJobs returned changes nothing stored', async () => {
      const { runtime } = await open();
      const job = await runtime.executePlan({
        ...plan('snapshot', read),
        metadata: { team: 'ops' },
      });
      const before = structuredClone(await runtime.getJob(job.id));
      const vandalize = (record: Job | undefined) => {
        const attempts: (() => void)[] = [
          () => ((record as { status: string }).status = 'failed'),
          () => ((record as { goal: string }).goal = 'changed'),
          () => ((record?.metadata as Record<string, unknown>).team = 'changed'),
          () => ((record?.steps[0] as { status: string }).status = 'failed'),
          () => ((record?.steps[0]?.input as Record<string, unknown>).n = 99),
          () => record?.steps.pop(),
          () => record?.events.pop(),
          () => ((record?.result as unknown[])[0] = 'changed'),
        ];
        for (const attempt of attempts) {
          try {
            attempt();
          } catch {
            // A frozen record refuses the change: as good as a copy.
          }
        }
      };
      vandalize(await runtime.getJob(job.id));
      vandalize((await runtime.listJobs({ limit: 1 }))[0]);
      assert.deepEqual(await runtime.getJob(job.id), before);
      assert.deepEqual((await runtime.listJobs({ limit: 1 }))[0], before);
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
      let entered: () => void = () => {};
      const started = new Promise<void>((resolve) => (entered = resolve));
      const slow = uniqueName('store.slow');
      runtime.use({
        manifest: { name: uniqueName('slow-module'), version: '1', capabilities: [slow] },
        capabilities: [
          createCapability({
            name: slow,
            version: '1',
            description: 'd',
            risk: 'read',
            execute: () => {
              entered();
              return gate;
            },
          }),
        ],
      });
      const running = runtime.executePlan(plan('in flight', slow));
      // The capability runs only once its "started" record is written.
      await started;
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

    it('keeps every string exactly: lone surrogates and U+0000 in goal, names, ids, values and errors', async () => {
      const { runtime } = await open();
      const done = await runtime.executePlan({
        version: '1.0',
        goal: `goal ${ODD_TEXT}`,
        id: `plan ${ODD_TEXT}`,
        idempotencyKey: ODD_TEXT,
        metadata: { [ODD_TEXT]: [ODD_TEXT] },
        steps: [
          {
            id: `step ${ODD_TEXT}`,
            capability: strange,
            capabilityVersion: ODD_TEXT,
            reason: ODD_TEXT,
            idempotencyKey: ODD_TEXT,
            input: { text: ODD_TEXT },
          },
        ],
      });
      const failed = await runtime.executePlan({
        version: '1.0',
        goal: `goal ${ODD_TEXT}`,
        steps: [{ id: ODD_TEXT, capability: strange, input: { fail: true } }],
      });
      assert.equal(done.status, 'completed');
      assert.equal(failed.status, 'failed');
      const stored = (await runtime.getJob(done.id)) as Job;
      assert.equal(stored.goal, `goal ${ODD_TEXT}`);
      assert.equal(stored.planId, `plan ${ODD_TEXT}`);
      assert.equal(stored.idempotencyKey, ODD_TEXT);
      assert.deepEqual(stored.metadata, { [ODD_TEXT]: [ODD_TEXT] });
      const [step] = stored.steps;
      assert.equal(step?.id, `step ${ODD_TEXT}`);
      assert.equal(step?.capability, strange);
      assert.equal(step?.capabilityVersion, ODD_TEXT);
      assert.equal(step?.reason, ODD_TEXT);
      assert.deepEqual(step?.input, { text: ODD_TEXT });
      assert.deepEqual(step?.result, { [ODD_TEXT]: ODD_TEXT, input: { text: ODD_TEXT } });
      assert.equal(stored.events[0]?.data?.goal, `goal ${ODD_TEXT}`);
      assert.equal(stored.events[2]?.data?.capability, strange);
      const storedFailure = (await runtime.getJob(failed.id)) as Job;
      assert.equal(storedFailure.error, `failed: ${ODD_TEXT}`);
      assert.equal(storedFailure.steps[0]?.id, ODD_TEXT);
      const ids = (jobs: Job[]) => jobs.map((job) => job.id);
      assert.deepEqual(ids(await runtime.listJobs({ goal: `goal ${ODD_TEXT}` })), [
        failed.id,
        done.id,
      ]);
      assert.deepEqual(ids(await runtime.listJobs({ capability: strange })), [failed.id, done.id]);
      assert.deepEqual(
        ids(await runtime.listJobs({ capability: strange.replace('\ud800', '\ufffd') })),
        [],
        'a U+FFFD spelling is another name',
      );
    });

    it('records what JSON.stringify records for toJSON values, boxed primitives, proxies and holes', async () => {
      const { runtime } = await open();
      const job = await runtime.executePlan({
        version: '1.0',
        steps: [
          { id: 'h', capability: hostile, input: { url: new URL('https://example.com/in') } },
        ],
        metadata: { boxed: new String('meta') },
      });
      assert.equal(job.status, 'completed');
      // Every store, the memory store included, keeps the values as recorded.
      const recorded = (await runtime.getJob(job.id)) as Job;
      assert.deepEqual(recorded.steps[0]?.result, {
        url: 'https://example.com/path?q=1',
        number: 5,
        string: 'abc',
        boolean: true,
        money: '12.5 EUR',
        point: { x: 1, y: 0 },
        proxy: { hidden: ODD_TEXT },
        sparse: [1, null, null, 'four'],
        when: '1970-01-02T00:00:00.000Z',
        cyclic: { big: '1180591620717411303424', self: '[Circular]' },
      });
      assert.deepEqual(recorded.steps[0]?.input, { url: 'https://example.com/in' });
      assert.deepEqual(recorded.metadata, { boxed: 'meta' });
    });

    it('returns the record the memory store returns for the same plans (ids and times aside)', async () => {
      const { runtime } = await open();
      const reference = new OperatorRuntime({ store: 'memory', authorizer });
      keep(reference);
      const shared = { n: 1 };
      const plans: [ExecutionPlan, ExecutePlanOptions?][] = [
        [
          {
            version: '1.0',
            id: 'compare',
            goal: 'compare two steps',
            idempotencyKey: 'k',
            metadata: { team: 'ops', tags: ['a', 'b'], nested: { n: 1.5, yes: true, none: null } },
            steps: [
              { id: 'first', capability: read, input: { n: 1 }, reason: 'why' },
              {
                id: 'second',
                capability: read,
                capabilityVersion: '1',
                idempotencyKey: 's',
                input: { from: { $ref: 'steps.first.result.echoed' }, list: [1, 'two', null] },
              },
            ],
          },
          { caller: { id: 'alice', scopes: ['jobs:read'], metadata: { team: 'ops' } } },
        ],
        [{ version: '1.0', steps: [{ id: 's', capability: strange, input: { text: ODD_TEXT } }] }],
        [
          {
            version: '1.0',
            goal: ODD_TEXT,
            steps: [{ id: 'f', capability: strange, input: { fail: true } }],
          },
        ],
        [plan('denied', read, write, read)],
        [plan('fails', boom, read)],
        // Values JSON cannot hold as such, recorded the same way by every store
        // (docs/guide/stores.md, "Values JSON cannot hold").
        [
          {
            version: '1.0',
            metadata: { big: 1n, url: new URL('https://example.com/m') },
            steps: [
              { id: 'h', capability: hostile, input: { when: new Date(0), n: new Number(1) } },
              { id: 'o', capability: odd, input: { fn: () => 1, list: [undefined, NaN] } },
            ],
          },
        ],
        // A result mutated after its step ended, by the next step that was handed it.
        [
          {
            version: '1.0',
            goal: 'mutated later',
            steps: [
              { id: 'made', capability: make },
              {
                id: 'changed',
                capability: mutate,
                input: { target: { $ref: 'steps.made.result' } },
              },
            ],
          },
        ],
        // One input object shared by two steps, changed by the first before the second runs.
        [
          {
            version: '1.0',
            goal: 'shared input',
            steps: [
              { id: 'bumped', capability: bump, input: shared },
              { id: 'after', capability: read, input: shared },
            ],
          },
        ],
      ];
      for (const [submitted, options] of plans) {
        shared.n = 1;
        const expected = await reference.executePlan(submitted, options);
        shared.n = 1;
        const job = await runtime.executePlan(submitted, options);
        assert.equal(job.status, expected.status, submitted.goal);
        assert.deepEqual(
          comparable((await runtime.getJob(job.id)) as Job),
          comparable((await reference.getJob(expected.id)) as Job),
          submitted.goal,
        );
      }
    });

    it('keeps snapshots: what a value was when its step ended, whatever happens to it afterwards', async () => {
      const { runtime } = await open();
      const job = await runtime.executePlan(
        {
          version: '1.0',
          goal: 'snapshots',
          steps: [
            { id: 'made', capability: make },
            { id: 'changed', capability: mutate, input: { target: { $ref: 'steps.made.result' } } },
          ],
        },
        { caller: { id: 'bob', metadata: { level: 1 } } },
      );
      // The job returned is the live one: the next step changed the first result in place.
      assert.deepEqual(job.steps[0]?.result, { list: [1, 2], nested: { n: 99 } });
      // Anyone changing the returned values afterwards changes nothing recorded either.
      (job.result as unknown[]).push('after');
      (job.steps[1]?.resolvedInput as { target: unknown }).target = 'replaced';
      const stored = (await runtime.getJob(job.id)) as Job;
      const original = { list: [1], nested: { n: 1 } };
      assert.deepEqual(stored.steps[0]?.result, original);
      assert.deepEqual(stored.steps[1]?.resolvedInput, { target: original });
      assert.deepEqual(stored.result, [original, 'mutated']);
      assert.deepEqual(stored.caller, { id: 'bob', metadata: { level: 1 } });
      assert.equal(
        stored.events.find((event) => event.type === 'capability.completed')?.data?.resultDigest,
        digestRecorded(original),
      );
      const shared = { n: 1 };
      const sharing = (await runtime.getJob(
        (
          await runtime.executePlan({
            version: '1.0',
            steps: [
              { id: 'bumped', capability: bump, input: shared },
              { id: 'after', capability: read, input: shared },
            ],
          })
        ).id,
      )) as Job;
      // The second step's input was changed by the first after it was recorded: the input as
      // authorized is kept apart, and the decision digests that.
      assert.deepEqual(sharing.steps[1]?.input, { n: 1 });
      assert.deepEqual(sharing.steps[1]?.resolvedInput, { n: 2 });
      assert.equal(sharing.steps[1]?.decision?.inputDigest, digestRecorded({ n: 2 }));
      assert.equal('resolvedInput' in (sharing.steps[0] as JobStep), false);
    });

    if (store.reopen !== undefined) {
      const reopen = store.reopen;
      it('writes exactly the change it is given: a step the change does not name keeps its record', async () => {
        const { runtime, option } = await open();
        await runtime.listJobs();
        const direct = reopen(option);
        try {
          const at = new Date().toISOString();
          const { running, change } = createJob(
            {
              id: undefined,
              goal: 'exact',
              metadata: undefined,
              idempotencyKey: undefined,
              steps: ['a', 'b'].map((id) => ({
                id,
                capability: { name: read },
                capabilityVersion: undefined,
                input: { id },
                reason: undefined,
                idempotencyKey: undefined,
              })),
            },
            undefined,
            randomUUID(),
            at,
          );
          const job = running.record;
          assert.deepEqual(change.steps, [0, 1]);
          await direct.create(job);
          await direct.update(job, startStep(running, 0, at, allowed(at, { id: 'a' })));
          const ended = joinChanges(
            endStep(running, 0, at, { status: 'completed', result: 'r' }),
            completeJob(running, at),
          );
          // Changed on the record but named by no change: not the store's to write, even when
          // the job ends with this change.
          (job.steps[1] as JobStep).status = 'skipped';
          await direct.update(job, ended);
          const stored = (await direct.get(job.id)) as Job;
          assert.equal(stored.status, 'completed');
          assert.deepEqual(
            stored.steps.map((step) => step.status),
            ['completed', 'pending'],
          );
          assert.deepEqual(
            stored.events.map((event) => event.type),
            [
              'job.created',
              'execution.started',
              'capability.started',
              'capability.completed',
              'job.completed',
            ],
          );
        } finally {
          await direct.close();
        }
      });

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
