// docs/api.md, "Store outages": a store that stays unavailable through its retries is answered
// 503 with Retry-After and STORE_UNAVAILABLE before the job exists, and with the job's id once it
// does; never a bare 500, never the driver's text. The real SQLite store, its writes failed by
// the store's test seam (`faults`, src/stores/shared/write-retry.ts).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { createHttpServer } from '../../src/http/server.js';
import { SqliteJobStore } from '../../src/stores/sqlite/sqlite-store.js';
import { runtimeOnStore } from '../../src/runtime/operator-runtime.js';
import { register } from '../support/runtime-fixtures.js';

const locked = () => Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });

describe('HTTP answers while the store is unavailable', () => {
  const directory = mkdtempSync(join(tmpdir(), 'warrant-store-outage-'));
  after(() => rmSync(directory, { recursive: true, force: true }));

  /** A server whose store's writes fail from write `from` on (1 = the job's creation). */
  async function serverFailingFrom(from: number) {
    let writes = 0;
    const store = new SqliteJobStore(join(directory, `${from}.db`), {
      faults: (phase) => (phase === 'before' && (writes += 1) >= from ? locked() : undefined),
    });
    const runtime = runtimeOnStore(store);
    const [name] = register(runtime, { execute: () => ({ ok: true }) });
    const app = createHttpServer(runtime);
    const plan = {
      version: '1.0',
      goal: 'outage',
      steps: [{ id: 'a', capability: name as string, input: {} }],
    };
    return { app, runtime, plan };
  }

  it('503 STORE_UNAVAILABLE with Retry-After when the job cannot be created', async () => {
    const { app, runtime, plan } = await serverFailingFrom(1);
    try {
      const reply = await app.inject({ method: 'POST', url: '/api/plans', payload: plan });
      assert.equal(reply.statusCode, 503);
      assert.equal(reply.headers['retry-after'], '5');
      const body = reply.json() as { code: string; error: string; jobId?: string };
      assert.equal(body.code, 'STORE_UNAVAILABLE');
      assert.equal(body.jobId, undefined);
      assert.doesNotMatch(body.error, /SQLITE|locked/);
    } finally {
      await app.close();
      await runtime.close();
    }
  });

  it('503 JOB_STORE_FAILED with the job id and its recorded state once the job exists', async () => {
    const { app, runtime, plan } = await serverFailingFrom(2);
    try {
      const reply = await app.inject({ method: 'POST', url: '/api/plans', payload: plan });
      assert.equal(reply.statusCode, 503);
      assert.equal(reply.headers['retry-after'], '5');
      const body = reply.json() as { code: string; jobId: string; job?: { status: string } };
      assert.equal(body.code, 'JOB_STORE_FAILED');
      assert.equal(typeof body.jobId, 'string');
      // Reads still answer: the job as last recorded (created, executing).
      assert.equal(body.job?.status, 'executing');
    } finally {
      await app.close();
      await runtime.close();
    }
  });
});
