// `POST /api/plans` and a repeated idempotency key (docs/api.md, "Idempotency"): the runtime says
// which submission replayed and waits for the first job; the route answers 200 with
// `Idempotent-Replayed: true` as soon as the first job ends, without reading the store meanwhile
// (no polling of its own). Also exercised over a socket by test/http/server.test.ts and
// test/http/job-life-routes.test.ts.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { createHttpServer } from '../../../src/http/server.js';
import type { JobStore } from '../../../src/jobs/job-store.js';
import { runtimeOnStore } from '../../../src/runtime/operator-runtime.js';
import { MemoryJobStore } from '../../../src/stores/memory/memory-store.js';
import { gate, register } from '../../support/runtime-fixtures.js';
import { Changes } from '../../support/wait.js';

const closers: (() => Promise<unknown>)[] = [];
after(async () => {
  for (const close of closers.reverse()) await close();
});

/** A real memory store that tells the test of each key claim and counts its job reads. */
function observedStore() {
  const changes = new Changes();
  const seen = { claims: 0, reads: 0 };
  const inner = new MemoryJobStore(1000);
  const store = new Proxy(inner, {
    get(target, key) {
      const value: unknown = Reflect.get(target, key, target);
      if (typeof value !== 'function') return value;
      const method = value as (...args: unknown[]) => unknown;
      if (key === 'get')
        return (...args: unknown[]) => {
          seen.reads += 1;
          return method.apply(target, args);
        };
      if (key === 'claimIdempotency')
        return (...args: unknown[]) => {
          const holder = method.apply(target, args);
          seen.claims += 1;
          changes.changed();
          return holder;
        };
      return method.bind(target);
    },
  }) as JobStore;
  return { store, seen, changes };
}

async function post(url: string, body: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${url}/api/plans`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(20_000),
  });
  return {
    status: response.status,
    headers: response.headers,
    body: (await response.json()) as Record<string, unknown>,
  };
}

describe('POST /api/plans: a repeated idempotency key', () => {
  it('answers the replay of a job still running at its end, never reading it while it runs', async () => {
    const observed = observedStore();
    const runtime = runtimeOnStore(observed.store);
    const held = gate();
    const [cap] = register(runtime, held.definition) as [string];
    const app = createHttpServer(runtime, { resolveCaller: () => ({ id: 'alice' }) });
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    closers.push(async () => (await app.close(), await runtime.close()));
    const plan = {
      version: '1.0',
      idempotencyKey: 'order-7',
      steps: [{ id: 'a', capability: cap, input: {} }],
    };

    const first = post(url, plan);
    await held.entered(1);
    const again = post(url, plan);
    await observed.changes.until(() => observed.seen.claims >= 2, {
      what: "the replay's claim of the key",
    });
    const readsBefore = observed.seen.reads;
    // Everything the replay does after its claim without I/O has happened after one turn.
    await new Promise(setImmediate);
    const readWhileRunning = observed.seen.reads - readsBefore;
    held.release(0);
    assert.equal(readWhileRunning, 0, 'the running first job was read (polled)');

    const [answered, replayed] = await Promise.all([first, again]);
    assert.equal(answered.status, 201);
    assert.equal(answered.headers.get('idempotent-replayed'), null);
    assert.equal(replayed.status, 200);
    assert.equal(replayed.headers.get('idempotent-replayed'), 'true');
    assert.equal(replayed.headers.get('location'), `/api/jobs/${String(answered.body.id)}`);
    assert.equal(replayed.body.id, answered.body.id);
    assert.equal(replayed.body.status, 'completed');
    // One read: the first job once it ended.
    assert.equal(observed.seen.reads, readsBefore + 1);
    assert.equal(held.seen.length, 1);
  });

  it('answers a replay with Prefer: respond-async 200 with the first job as it stands', async () => {
    const observed = observedStore();
    const runtime = runtimeOnStore(observed.store);
    const held = gate();
    const [cap] = register(runtime, held.definition) as [string];
    const app = createHttpServer(runtime, { resolveCaller: () => ({ id: 'alice' }) });
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    closers.push(async () => (await app.close(), await runtime.close()));
    const plan = {
      version: '1.0',
      idempotencyKey: 'order-8',
      steps: [{ id: 'a', capability: cap, input: {} }],
    };
    const first = post(url, plan);
    await held.entered(1);
    const replayed = await post(url, plan, { prefer: 'respond-async' });
    assert.equal(replayed.status, 200);
    assert.equal(replayed.headers.get('idempotent-replayed'), 'true');
    assert.equal(replayed.body.status, 'executing');
    held.release(0);
    const answered = await first;
    assert.equal(answered.status, 201);
    assert.equal(replayed.body.id, answered.body.id);
  });
});
