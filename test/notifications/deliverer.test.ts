// Notifications end to end (docs/api.md, "Notifications"): a runtime on a SQLite store (and the
// memory store, and a PostgreSQL store on a real server, test/support/postgres.ts) writes its
// outbox with the events, and its deliverer POSTs them to a local receiver that verifies each
// with the `standardwebhooks` library.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { OperatorRuntime } from '../../src/index.js';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';
import { planOf, register, withRuntime } from '../support/runtime-fixtures.js';
import { waitFor, within } from '../support/wait.js';
import {
  newSecret,
  startReceiver,
  startSilentReceiver,
  type Receiver,
} from '../support/webhook-receiver.js';
import { stepRequests } from '../support/step-requests.js';

const directory = mkdtempSync(join(tmpdir(), 'warrant-notify-'));
after(() => rmSync(directory, { recursive: true, force: true }));
let files = 0;
const sqlite = () => `sqlite:${join(directory, `jobs-${++files}.db`)}`;
let server: TestPostgres | undefined;
after(async () => {
  await server?.stop();
});
/** A new database on the test server, started on first use. */
const postgres = async (): Promise<string> => {
  server ??= await startTestPostgres();
  return server.createDatabase();
};

const approvals = { approver: { canApprove: () => true } };
const FAST = { initialDelayMs: 20, maxDelayMs: 100, pollMs: 20, timeoutMs: 2_000 };

/** Approves the step waiting in `jobId`. */
async function approve(runtime: OperatorRuntime, jobId: string, decision: 'approve' | 'reject') {
  const [request] = stepRequests(await runtime.listApprovals({ jobId }));
  assert.ok(request, 'a pending request');
  return runtime.decideApproval({
    jobId,
    stepId: request.stepId,
    inputDigest: request.inputDigest,
    // Approvals stay in the job's tenant (docs/api.md, "Reading and tenants").
    approver: { id: 'bob', tenant: 'acme' },
    decision,
  });
}

const ALICE = { id: 'alice', tenant: 'acme', scopes: ['secret-scope-SENSITIVE'] };

/** Runs one job of each ending: approved and completed, rejected, failed, cancelled. */
async function everyEnding(runtime: OperatorRuntime): Promise<string[]> {
  const [write, broken] = register(
    runtime,
    { risk: 'write', execute: () => ({ token: 'result-SENSITIVE' }) },
    {
      risk: 'read',
      execute: () => {
        throw new Error('failure-SENSITIVE');
      },
    },
  ) as [string, string];
  const input = { password: 'input-SENSITIVE' };
  const approved = await runtime.executePlan(planOf({ id: 'w', capability: write, input }), {
    caller: ALICE,
  });
  assert.equal((await approve(runtime, approved.id, 'approve')).status, 'completed');
  const rejected = await runtime.executePlan(planOf({ id: 'w', capability: write, input }), {
    caller: ALICE,
  });
  assert.equal((await approve(runtime, rejected.id, 'reject')).status, 'failed');
  const failed = await runtime.executePlan(planOf({ id: 'b', capability: broken, input }), {
    caller: ALICE,
  });
  assert.equal(failed.status, 'failed');
  const cancelled = await runtime.executePlan(planOf({ id: 'w', capability: write, input }), {
    caller: ALICE,
  });
  assert.equal((await runtime.cancelJob(cancelled.id, { caller: ALICE }))?.status, 'cancelled');
  return [approved.id, rejected.id, failed.id, cancelled.id];
}

const EXPECTED: Record<number, string[]> = {
  0: ['approval.requested', 'approval.granted', 'job.completed'],
  1: ['approval.requested', 'approval.rejected', 'job.failed'],
  2: ['job.failed'],
  3: ['approval.requested', 'job.cancelled'],
};
const TOTAL = Object.values(EXPECTED).flat().length;

/** The types each job's deliveries had, in the order received, counting each delivery id once. */
function typesByJob(receiver: Receiver, jobs: readonly string[]): string[][] {
  const seen = new Set<string>();
  const byJob = jobs.map(() => [] as string[]);
  for (const delivery of receiver.deliveries) {
    if (seen.has(delivery.id)) continue;
    seen.add(delivery.id);
    byJob[jobs.indexOf(delivery.payload.jobId as string)]?.push(delivery.payload.type as string);
  }
  return byJob;
}

for (const kind of ['sqlite', 'memory', 'postgres'] as const) {
  describe(`notifications on the ${kind} store`, () => {
    const store = async () =>
      kind === 'sqlite' ? sqlite() : kind === 'postgres' ? await postgres() : 'memory';

    it('delivers every event type once per delivery id, each signature verifying, with nothing sensitive in a body', async () => {
      const secret = newSecret();
      const receiver = await startReceiver(secret);
      const jobs = await withRuntime(
        {
          store: await store(),
          approvals,
          notifications: [{ url: receiver.url, secret, allowPrivate: true }],
          notificationDelivery: FAST,
        },
        async (runtime) => {
          const ids = await everyEnding(runtime);
          await receiver.until(() => receiver.deliveries.length >= TOTAL);
          return ids;
        },
      );
      assert.equal(
        receiver.deliveries.length,
        TOTAL,
        'no delivery twice when the receiver answers',
      );
      for (const delivery of receiver.deliveries) {
        assert.equal(delivery.verified, true, `${delivery.id} verifies`);
        assert.match(delivery.id, /^msg_[0-9a-f]{32}$/);
        assert.doesNotMatch(delivery.body, /SENSITIVE/);
        assert.deepEqual(
          Object.keys(delivery.payload).filter((key) => key !== 'stepId'),
          ['type', 'jobId', 'at', 'data'],
        );
      }
      assert.deepEqual(typesByJob(receiver, jobs), Object.values(EXPECTED));
      const requested = receiver.deliveries.find((d) => d.payload.type === 'approval.requested');
      assert.equal(requested?.payload.stepId, 'w');
      assert.match(
        (requested?.payload.data as { inputDigest: string }).inputDigest,
        /^sha256:[0-9a-f]{64}$/,
      );
      assert.equal((requested?.payload.data as { callerId: string }).callerId, 'alice');
    });

    it('a receiver down for a while then up gets everything, in order per job', async () => {
      const secret = newSecret();
      const receiver = await startReceiver(secret);
      await receiver.down();
      await withRuntime(
        {
          store: await store(),
          approvals,
          notifications: [{ url: receiver.url, secret, allowPrivate: true }],
          notificationDelivery: FAST,
        },
        async (runtime) => {
          const jobs = await everyEnding(runtime);
          // Attempts fail while it is down: a row is tried a second time.
          await waitFor(
            async () => (await runtime.listNotifications()).some((row) => row.attempts >= 2),
            { what: 'a second attempt at a row while the receiver is down' },
          );
          const rows = await runtime.listNotifications();
          assert.ok(rows.length >= 4, 'pending while the receiver is down');
          await receiver.up();
          await receiver.until(() => new Set(receiver.deliveries.map((d) => d.id)).size >= TOTAL);
          assert.deepEqual(typesByJob(receiver, jobs), Object.values(EXPECTED));
          assert.ok(receiver.deliveries.every((delivery) => delivery.verified));
          await receiver.until(() => true);
          // Delivered rows leave the outbox.
          await waitFor(async () => (await runtime.listNotifications()).length === 0, {
            what: 'the delivered rows to leave the outbox',
          });
        },
      );
    });

    it('a receiver that never answers delays only its own rows and no job: another gets all of its own meanwhile', async () => {
      const secret = newSecret();
      const healthy = await startReceiver(secret);
      const silent = await startSilentReceiver();
      const runtime = new OperatorRuntime({
        store: await store(),
        notifications: [
          // Listed first, written first: its rows are the oldest of every claim.
          { url: silent.url, secret, events: ['job.completed'], allowPrivate: true },
          { url: healthy.url, secret, events: ['job.completed'], allowPrivate: true },
        ],
        // Longer than the test: a request to the silent receiver never ends by itself here.
        notificationDelivery: { ...FAST, timeoutMs: 600_000 },
      });
      try {
        const [cap] = register(runtime, { execute: () => 1 }) as [string];
        const jobs = new Set<string>();
        // No job waits for its notifications: all 30 complete while the silent receiver answers
        // none of its requests (bounded, so that a job held by one fails here, naming it).
        await within(
          (async () => {
            for (let index = 0; index < 30; index++)
              jobs.add((await runtime.executePlan(planOf({ id: 'a', capability: cap }))).id);
          })(),
          { timeoutMs: 60_000, what: '30 jobs to complete beside a receiver that never answers' },
        );
        await healthy.until(
          () => new Set(healthy.deliveries.map((d) => d.payload.jobId)).size >= jobs.size,
        );
        assert.deepEqual(new Set(healthy.deliveries.map((d) => d.payload.jobId)), jobs);
        assert.ok(healthy.deliveries.every((d) => d.verified));
        // ...while the silent receiver still holds requests it never answered.
        assert.ok(silent.open() > 0, 'the silent receiver holds open requests');
        const silentRows = (await runtime.listNotifications({ limit: 1000 })).filter((row) =>
          row.destination.startsWith(`${new URL(silent.url).origin}#`),
        );
        assert.deepEqual(new Set(silentRows.map((row) => row.jobId)), jobs);
        assert.ok(
          silentRows.every((row) => row.status === 'pending'),
          "the silent receiver's rows are all still due",
        );
      } finally {
        // Its requests fail now, so the runtime's last pass ends at once.
        await silent.stop();
        await runtime.close();
      }
    });

    it('a receiver that always fails: marked failed after the last attempt, each job completed beside it', async () => {
      const secret = newSecret();
      const failing = await startReceiver(secret);
      failing.status = 500;
      const hanging = await startReceiver(secret);
      hanging.hang = true;
      const delivery = { ...FAST, attempts: 3, timeoutMs: 300 };
      const notified = new OperatorRuntime({
        store: await store(),
        notifications: [
          { url: failing.url, secret, allowPrivate: true },
          { url: hanging.url, secret, allowPrivate: true },
        ],
        notificationDelivery: delivery,
      });
      try {
        // That no job waits for its notifications is shown beside a receiver that never answers
        // (the test above): here, each job completes whatever its deliveries meet.
        const [cap] = register(notified, { execute: () => 1 }) as [string];
        for (let round = 0; round < 30; round++) {
          const job = await notified.executePlan(planOf({ id: 'a', capability: cap }));
          assert.equal(job.status, 'completed');
        }
        await failing.until(() => failing.deliveries.length >= 30 * 3, 30_000);
        const rows = await waitFor(
          async () => {
            const listed = await notified.listNotifications({ limit: 1000 });
            return listed.filter((row) => row.status === 'failed').length >= 60 && listed;
          },
          { timeoutMs: 30_000, what: '60 rows marked failed' },
        );
        assert.equal(rows.length, 60);
        for (const row of rows) {
          assert.equal(row.status, 'failed');
          assert.equal(row.attempts, 3);
          assert.match(row.error ?? '', /^attempt 3: (HTTP 500|no answer within 300 ms)$/);
        }
        // Each notification was tried exactly three times, under one webhook-id.
        const attemptsById = new Map<string, number>();
        for (const d of failing.deliveries)
          attemptsById.set(d.id, (attemptsById.get(d.id) ?? 0) + 1);
        assert.deepEqual(new Set(attemptsById.values()), new Set([3]));
      } finally {
        await notified.close();
      }
    });
  });
}

// docs/api.md, "Notifications": a destination's host is resolved and held to the address rule;
// an internal address needs the destination's allowPrivate.
describe('notifications: internal destinations need allowPrivate', () => {
  it('posts nothing to a loopback address, by number or by name, and marks the row failed with EFFECT_REFUSED', async () => {
    const secret = newSecret();
    const receiver = await startReceiver(secret);
    const byName = receiver.url.replace('127.0.0.1', 'localhost');
    await withRuntime(
      {
        store: sqlite(),
        notifications: [
          { url: receiver.url, secret, events: ['job.completed'] },
          { url: byName, secret, events: ['job.completed'] },
        ],
        notificationDelivery: { ...FAST, attempts: 1 },
      },
      async (runtime) => {
        const [cap] = register(runtime, { execute: () => 1 }) as [string];
        await runtime.executePlan(planOf({ id: 'a', capability: cap }));
        const rows = await waitFor(
          async () => {
            const listed = await runtime.listNotifications();
            return listed.filter((row) => row.status === 'failed').length === 2 && listed;
          },
          { what: 'both rows marked failed' },
        );
        const errors = rows.map((row) => row.error ?? '').sort();
        assert.match(
          errors[0] as string,
          /^attempt 1: EFFECT_REFUSED: 127\.0\.0\.1 is a loopback address; internal addresses are refused unless allowed \(the destination's allowPrivate\)$/,
        );
        assert.match(
          errors[1] as string,
          /^attempt 1: EFFECT_REFUSED: localhost resolved to (127\.0\.0\.1|::1), which is a loopback address/,
        );
      },
    );
    assert.equal(receiver.deliveries.length, 0);
  });
});

describe('notifications: the outbox is bounded per destination', () => {
  it('drops the oldest pending notification beyond maxPending, with a record of it', async () => {
    const secret = newSecret();
    const receiver = await startReceiver(secret);
    await receiver.down();
    await withRuntime(
      {
        store: sqlite(),
        notifications: [
          { url: receiver.url, secret, events: ['job.completed'], allowPrivate: true },
        ],
        notificationDelivery: { ...FAST, initialDelayMs: 60_000, maxPending: 3 },
      },
      async (runtime) => {
        const [cap] = register(runtime, { execute: () => 1 }) as [string];
        const jobs: string[] = [];
        for (let index = 0; index < 5; index++)
          jobs.push((await runtime.executePlan(planOf({ id: 'a', capability: cap }))).id);
        const rows = await runtime.listNotifications();
        assert.deepEqual(
          rows.map((row) => [row.jobId, row.status]),
          jobs.map((id, index) => [id, index < 2 ? 'dropped' : 'pending']),
        );
        assert.match(rows[0]?.error ?? '', /more than 3 notifications pending/);
      },
    );
  });

  it('writes no outbox table and nothing to deliver without notifications', async () => {
    const store = sqlite();
    await withRuntime({ store }, async (runtime) => {
      const [cap] = register(runtime, { execute: () => 1 }) as [string];
      await runtime.executePlan(planOf({ id: 'a', capability: cap }));
      assert.deepEqual(await runtime.listNotifications(), []);
    });
    const { default: Database } = await import('better-sqlite3');
    const db = new Database(store.slice('sqlite:'.length), { readonly: true });
    try {
      const table = db
        .prepare("SELECT name FROM sqlite_master WHERE name = 'notification_outbox'")
        .get();
      assert.equal(table, undefined);
    } finally {
      db.close();
    }
  });
});
