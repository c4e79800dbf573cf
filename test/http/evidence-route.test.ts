// GET /api/jobs/:id/evidence (docs/api.md, "runtime.exportJob"), over a socket, on SQLite.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createHttpServer } from '../../src/http/server.js';
import { OperatorRuntime, verifyEvidence, type EvidenceBundle } from '../../src/index.js';
import { register } from '../support/runtime-fixtures.js';

describe('GET /api/jobs/:id/evidence', () => {
  it('answers 200 with a bundle that verifies offline, 404 for an unknown job, 401 without the token', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'warrant-evidence-route-')), 'jobs.db');
    const runtime = new OperatorRuntime({ store: `sqlite:${file}` });
    const [name] = register(runtime, {
      execute: () => {
        throw new Error('first line\nsecond line');
      },
    });
    const app = createHttpServer(runtime, { token: 'secret' });
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    const get = (path: string, token = 'secret') =>
      fetch(`${url}${path}`, { headers: { authorization: `Bearer ${token}` } });
    try {
      const job = await runtime.executePlan(
        {
          version: '1.0',
          steps: [{ id: 'fail', capability: name as string }],
        },
        { caller: { id: 'token' } },
      ); // the token mode's caller reads its own job
      const answer = await get(`/api/jobs/${job.id}/evidence`);
      assert.equal(answer.status, 200);
      const bundle = (await answer.json()) as EvidenceBundle;
      assert.equal(bundle.job.id, job.id);
      assert.equal(bundle.checkpoint?.entry.events, job.events.length, 'sealed whole');
      // The error as recorded: the events must hash as they were chained.
      assert.match(String(bundle.job.error), /second line/);
      assert.equal(verifyEvidence(bundle).ok, true);

      const unknown = await get('/api/jobs/no-such-job/evidence');
      assert.equal(unknown.status, 404);
      assert.deepEqual(await unknown.json(), { error: 'Unknown job: no-such-job' });
      assert.equal((await get(`/api/jobs/${job.id}/evidence`, 'wrong')).status, 401);
    } finally {
      await app.close();
      await runtime.close();
    }
  });
});
