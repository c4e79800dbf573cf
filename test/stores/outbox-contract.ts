// The outbox contract every store with one passes (docs/api.md, "Notifications"): rows written
// with their change, claimed oldest first and one per job and destination at a time, leased,
// retried, failed, bounded.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { Job, JobEvent } from '../../src/jobs/job.js';
import type { JobStore, OutboxEntry, OutboxStore, OutboxWriter } from '../../src/jobs/job-store.js';

function jobOf(id: string): Job {
  const at = new Date().toISOString();
  return {
    id,
    goal: 'g',
    status: 'executing',
    createdAt: at,
    updatedAt: at,
    steps: [],
    events: [{ id: `${id}-0`, jobId: id, type: 'job.created', timestamp: at }],
  };
}

function event(job: Job, type: JobEvent['type']): JobEvent {
  const added = {
    id: `${job.id}-${job.events.length}`,
    jobId: job.id,
    type,
    timestamp: job.updatedAt,
  };
  job.events.push(added);
  return added;
}

/** A writer that sends every event but job.created to each of `destinations`. */
function writer(
  maxPending: number,
  woken: { count: number },
  destinations: readonly string[] = ['http://receiver#1'],
): OutboxWriter {
  let counter = 0;
  return {
    maxPending,
    written: () => woken.count++,
    entries: (job, events) =>
      events
        .filter((e) => e.type !== 'job.created')
        .flatMap((e) =>
          destinations.map((destination): OutboxEntry => ({
            id: `msg_${++counter}`,
            destination,
            jobId: job.id,
            type: e.type,
            at: e.timestamp,
            body: JSON.stringify({ type: e.type, jobId: job.id }),
          })),
        ),
  };
}

export function outboxContract(
  open: () => Promise<JobStore & OutboxStore> | (JobStore & OutboxStore),
): void {
  it('writes rows with their change, only once attached', async () => {
    const store = await open();
    try {
      const outbox = store.outbox;
      assert.ok(outbox);
      const before = jobOf('j0');
      await store.create(before);
      await store.update(before, { steps: [], events: [event(before, 'job.completed')] });
      assert.deepEqual(await outbox.listNotifications(10), []);
      const woken = { count: 0 };
      outbox.attachOutbox(writer(100, woken));
      const job = jobOf('j1');
      await store.create(job);
      await store.update(job, { steps: [], events: [event(job, 'approval.requested')] });
      await store.update(job, { steps: [], events: [event(job, 'job.completed')] });
      const rows = await outbox.listNotifications(10);
      assert.deepEqual(
        rows.map((row) => [row.jobId, row.type, row.status, row.attempts]),
        [
          ['j1', 'approval.requested', 'pending', 0],
          ['j1', 'job.completed', 'pending', 0],
        ],
      );
      assert.ok(woken.count >= 2);
    } finally {
      await store.close();
    }
  });

  it('claims the oldest pending row of each job, leased; retries; fails for good', async () => {
    const store = await open();
    try {
      const outbox = store.outbox;
      outbox.attachOutbox(writer(100, { count: 0 }));
      const a = jobOf('a');
      const b = jobOf('b');
      await store.create(a);
      await store.create(b);
      await store.update(a, { steps: [], events: [event(a, 'approval.requested')] });
      await store.update(b, { steps: [], events: [event(b, 'job.completed')] });
      await store.update(a, { steps: [], events: [event(a, 'job.completed')] });
      const now = Date.now();
      const first = await outbox.claimNotifications(now, 1_000, 10);
      assert.deepEqual(
        first.map((row) => [row.jobId, row.type, row.attempts]),
        [
          ['a', 'approval.requested', 1],
          ['b', 'job.completed', 1],
        ],
      );
      // Leased: nothing more to claim now (a's second row waits for its first).
      assert.deepEqual(await outbox.claimNotifications(now, 1_000, 10), []);
      const [aFirst, bFirst] = first as [(typeof first)[0], (typeof first)[0]];
      await outbox.settleNotification(aFirst.seq, {
        delivered: false,
        error: 'HTTP 500',
        nextAt: now + 50,
      });
      await outbox.settleNotification(bFirst.seq, { delivered: true });
      assert.deepEqual(await outbox.claimNotifications(now, 1_000, 10), []);
      const again = await outbox.claimNotifications(now + 50, 1_000, 10);
      assert.deepEqual(
        again.map((row) => [row.id, row.attempts]),
        [[aFirst.id, 2]],
      );
      await outbox.settleNotification(aFirst.seq, {
        delivered: false,
        error: 'attempt 2: HTTP 500',
      });
      // Failed for good: the job's next row goes out.
      const next = await outbox.claimNotifications(now + 50, 1_000, 10);
      assert.deepEqual(
        next.map((row) => [row.jobId, row.type]),
        [['a', 'job.completed']],
      );
      const listed = await outbox.listNotifications(10);
      assert.deepEqual(
        listed.map((row) => [row.type, row.status, row.error]),
        [
          ['approval.requested', 'failed', 'attempt 2: HTTP 500'],
          ['job.completed', 'pending', undefined],
        ],
      );
    } finally {
      await store.close();
    }
  });

  it("claims one destination's rows apart: another's leased rows hold up none of them", async () => {
    const store = await open();
    try {
      const outbox = store.outbox;
      outbox.attachOutbox(writer(100, { count: 0 }, ['http://slow#1', 'http://fast#2']));
      const a = jobOf('a');
      const b = jobOf('b');
      await store.create(a);
      await store.create(b);
      await store.update(a, { steps: [], events: [event(a, 'approval.requested')] });
      await store.update(b, { steps: [], events: [event(b, 'job.completed')] });
      await store.update(a, { steps: [], events: [event(a, 'job.completed')] });
      const now = Date.now();
      const slow = await outbox.claimNotifications(now, 60_000, 10, 'http://slow#1');
      assert.deepEqual(
        slow.map((row) => [row.destination, row.jobId, row.type]),
        [
          ['http://slow#1', 'a', 'approval.requested'],
          ['http://slow#1', 'b', 'job.completed'],
        ],
      );
      // The slow destination's rows stay leased; the fast one's go out, each job in order.
      const fast = await outbox.claimNotifications(now, 60_000, 10, 'http://fast#2');
      assert.deepEqual(
        fast.map((row) => [row.destination, row.jobId, row.type]),
        [
          ['http://fast#2', 'a', 'approval.requested'],
          ['http://fast#2', 'b', 'job.completed'],
        ],
      );
      for (const row of fast) await outbox.settleNotification(row.seq, { delivered: true });
      const next = await outbox.claimNotifications(now, 60_000, 10, 'http://fast#2');
      assert.deepEqual(
        next.map((row) => [row.destination, row.jobId, row.type]),
        [['http://fast#2', 'a', 'job.completed']],
      );
      assert.deepEqual(await outbox.claimNotifications(now, 60_000, 10, 'http://slow#1'), []);
      assert.deepEqual(await outbox.claimNotifications(now, 60_000, 10, 'http://other#3'), []);
    } finally {
      await store.close();
    }
  });

  it('drops the oldest pending rows of a destination beyond maxPending', async () => {
    const store = await open();
    try {
      const outbox = store.outbox;
      outbox.attachOutbox(writer(2, { count: 0 }));
      for (const id of ['x', 'y', 'z']) {
        const job = jobOf(id);
        await store.create(job);
        await store.update(job, { steps: [], events: [event(job, 'job.completed')] });
      }
      const rows = await outbox.listNotifications(10);
      assert.deepEqual(
        rows.map((row) => [row.jobId, row.status]),
        [
          ['x', 'dropped'],
          ['y', 'pending'],
          ['z', 'pending'],
        ],
      );
      assert.match(rows[0]?.error ?? '', /more than 2 notifications pending/);
    } finally {
      await store.close();
    }
  });
}
