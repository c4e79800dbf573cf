// GET /api/jobs/:id/verify (docs/api.md, "runtime.verifyJob"), over a socket, on SQLite.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Database } from '../../src/stores/sqlite/sqlite-driver.cjs';
import { createHttpServer } from '../../src/http/server.js';
import { OperatorRuntime } from '../../src/index.js';
import { register } from '../support/runtime-fixtures.js';

describe('GET /api/jobs/:id/verify', () => {
  it('answers 200 with the verification, intact or not, 404 for an unknown job, 401 without the token', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'warrant-verify-route-')), 'jobs.db');
    const runtime = new OperatorRuntime({ store: `sqlite:${file}` });
    const [name] = register(runtime, { execute: () => ({ amount: 10 }) });
    const app = createHttpServer(runtime, { token: 'secret' });
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    const get = (path: string, token = 'secret') =>
      fetch(`${url}${path}`, { headers: { authorization: `Bearer ${token}` } });
    try {
      const job = await runtime.executePlan(
        {
          version: '1.0',
          steps: [{ id: 'pay', capability: name as string }],
        },
        { caller: { id: 'token' } },
      ); // the token mode's caller reads its own job
      const intact = await get(`/api/jobs/${job.id}/verify`);
      assert.equal(intact.status, 200);
      assert.deepEqual(await intact.json(), { ok: true, events: 5 });

      const db = new Database(file);
      db.prepare("UPDATE job_steps SET state = replace(state, '10', '99')").run();
      db.close();
      const edited = await get(`/api/jobs/${job.id}/verify`);
      assert.equal(edited.status, 200);
      assert.deepEqual(await edited.json(), {
        ok: false,
        reason: 'the result of step pay does not match its digest',
        eventIndex: 3,
        stepId: 'pay',
      });

      const unknown = await get('/api/jobs/no-such-job/verify');
      assert.equal(unknown.status, 404);
      assert.deepEqual(await unknown.json(), { error: 'Unknown job: no-such-job' });
      assert.equal((await get(`/api/jobs/${job.id}/verify`, 'wrong')).status, 401);
    } finally {
      await app.close();
      await runtime.close();
    }
  });
});
