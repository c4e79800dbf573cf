import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GroupCommit, type QueuedChange } from '../../../src/stores/shared/group-commit.js';

interface Change {
  readonly job: string;
  readonly n: number;
}

/** One turn of the event loop: what setImmediate scheduled before has run. */
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Settles a promise into 'ok' or the message it rejected with, for comparing outcomes. */
const outcome = (promise: Promise<void>): Promise<string> =>
  promise.then(
    () => 'ok',
    (error: unknown) => (error as Error).message,
  );

/** A synchronous writer that records each batch and fails the changes named in `failing`. */
function recordingQueue(failing: readonly number[] = [], keyed = false) {
  const batches: number[][] = [];
  const forgotten: string[] = [];
  const queue: GroupCommit<Change> = new GroupCommit<Change>({
    write: (batch: readonly QueuedChange<Change>[]) => {
      batches.push(batch.map((queued) => queued.change.n));
      for (const queued of batch) {
        if (failing.includes(queued.change.n))
          queue.fail(queued, new Error(`failed ${queued.change.n}`));
        else queued.resolve();
      }
    },
    ...(keyed && { keyOf: (change: Change) => change.job }),
    forget: (change) => forgotten.push(change.job),
  });
  return { queue, batches, forgotten };
}

/** An asynchronous writer: each batch is committed when the test calls its `written` entry. */
function asynchronousQueue(keyed = false) {
  const batches: number[][] = [];
  const written: (() => void)[] = [];
  const queue = new GroupCommit<Change>({
    write: (batch) =>
      new Promise<void>((done) => {
        batches.push(batch.map((queued) => queued.change.n));
        written.push(() => {
          for (const queued of batch) queued.resolve();
          done();
        });
      }),
    ...(keyed && { keyOf: (change: Change) => change.job }),
    forget: () => {},
  });
  return { queue, batches, written };
}

describe('the group commit of the durable stores', () => {
  it('writes the changes of one turn together, in order, on the next turn', async () => {
    const { queue, batches } = recordingQueue();
    const settled = [1, 2, 3].map((n) => queue.add({ job: `j${n}`, n }));
    assert.deepEqual(batches, [], 'nothing is written in the turn the changes are reported');
    assert.equal(queue.busy, true);
    await nextTurn();
    assert.deepEqual(batches, [[1, 2, 3]]);
    assert.deepEqual(await Promise.all(settled.map(outcome)), ['ok', 'ok', 'ok']);
    assert.equal(queue.busy, false);
  });

  it('waits for the next turn even for a change alone, and writes a later turn apart', async () => {
    const { queue, batches } = recordingQueue();
    const first = queue.add({ job: 'j', n: 1 });
    await Promise.resolve();
    assert.deepEqual(batches, [], 'a microtask is not the next turn');
    await first;
    const second = queue.add({ job: 'j', n: 2 });
    await second;
    assert.deepEqual(batches, [[1], [2]]);
  });

  it('fails one change alone: the others of its batch commit, and only its job is forgotten', async () => {
    const { queue, forgotten } = recordingQueue([2]);
    const settled = [1, 2, 3].map((n) => queue.add({ job: `j${n}`, n }));
    const results = await Promise.all(settled.map(outcome));
    assert.deepEqual(results, ['ok', 'failed 2', 'ok']);
    assert.deepEqual(forgotten, ['j2']);
  });

  it('forgets a failed change before its promise rejects', async () => {
    const { queue, forgotten } = recordingQueue([1]);
    await assert.rejects(
      queue.add({ job: 'j', n: 1 }).catch((error: unknown) => {
        assert.deepEqual(forgotten, ['j'], 'forgotten when the rejection is seen');
        throw error;
      }),
      /failed 1/,
    );
  });

  it('with a key, puts a second change of a job in the next batch, keeping its order', async () => {
    const { queue, batches } = recordingQueue([], true);
    const settled = [
      queue.add({ job: 'a', n: 1 }),
      queue.add({ job: 'b', n: 2 }),
      queue.add({ job: 'a', n: 3 }),
      queue.add({ job: 'c', n: 4 }),
      queue.add({ job: 'a', n: 5 }),
    ];
    await Promise.all(settled);
    assert.deepEqual(batches, [[1, 2], [3, 4], [5]]);
  });

  it('without a key, keeps every change of a turn in one batch', async () => {
    const { queue, batches } = recordingQueue();
    await Promise.all([queue.add({ job: 'a', n: 1 }), queue.add({ job: 'a', n: 2 })]);
    assert.deepEqual(batches, [[1, 2]]);
  });

  it('flush writes the gathered batch at once, and the scheduled turn then finds nothing', async () => {
    const { queue, batches } = recordingQueue();
    const first = queue.add({ job: 'j', n: 1 });
    const second = queue.add({ job: 'k', n: 2 });
    queue.flush();
    assert.deepEqual(batches, [[1, 2]], 'written synchronously');
    assert.equal(queue.busy, false);
    queue.flush();
    await Promise.all([first, second]);
    await nextTurn();
    assert.deepEqual(batches, [[1, 2]], 'nothing written twice, no empty batch');
  });

  it('writes one asynchronous batch at a time; the next gathers meanwhile', async () => {
    const { queue, batches, written } = asynchronousQueue();
    const first = queue.add({ job: 'a', n: 1 });
    await nextTurn();
    assert.deepEqual(batches, [[1]]);
    const later = [queue.add({ job: 'b', n: 2 }), queue.add({ job: 'c', n: 3 })];
    await nextTurn();
    await nextTurn();
    assert.deepEqual(batches, [[1]], 'the next batch waits while one is being written');
    assert.equal(queue.busy, true);
    written[0]?.();
    await first;
    await nextTurn();
    await nextTurn();
    assert.deepEqual(batches, [[1], [2, 3]]);
    written[1]?.();
    await Promise.all(later);
    await nextTurn();
    assert.equal(queue.busy, false);
  });

  it('settled waits for the changes queued before it, not for those a steady flow adds later', async () => {
    const { queue, batches, written } = asynchronousQueue(true);
    let idle = false;
    void queue.settled().then(() => (idle = true));
    await Promise.resolve();
    assert.equal(idle, true, 'nothing queued: settled at once');
    void queue.add({ job: 'a', n: 1 });
    await nextTurn();
    void queue.add({ job: 'a', n: 2 });
    let settled = false;
    void queue.settled().then(() => (settled = true));
    // The flow never stops: each batch written brings another change.
    written[0]?.();
    await nextTurn();
    await nextTurn();
    assert.deepEqual(batches, [[1], [2]]);
    void queue.add({ job: 'a', n: 3 });
    assert.equal(settled, false, 'change 2 is not written yet');
    written[1]?.();
    await nextTurn();
    assert.equal(settled, true, 'changes 1 and 2 are written, 3 is not waited for');
    assert.equal(queue.busy, true);
    await nextTurn();
    assert.deepEqual(batches, [[1], [2], [3]]);
    written[2]?.();
    await queue.settled();
    assert.equal(queue.busy, false);
  });
});
