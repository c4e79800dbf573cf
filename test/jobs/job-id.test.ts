import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { newJobId } from '../../src/jobs/job-id.js';
import { createCapability, OperatorRuntime } from '../../src/index.js';

/** RFC 9562 version 4, lowercase: version nibble 4, variant bits 10. */
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('newJobId()', () => {
  it('returns distinct version 4 UUIDs, past several refills of its random pool', () => {
    // 256 ids a pool: 2,000 ids span eight refills.
    const ids = Array.from({ length: 2000 }, () => newJobId());
    for (const id of ids) assert.match(id, UUID_V4);
    assert.equal(new Set(ids).size, ids.length);
  });

  it('draws every hexadecimal digit at every random position', () => {
    // A position stuck at one value (a constant byte, a missed refill) shows here: 2,000 draws
    // of 16 values leave a digit unseen with probability about 16 * (15/16)^2000.
    const ids = Array.from({ length: 2000 }, () => newJobId().replaceAll('-', ''));
    for (let position = 0; position < 32; position++) {
      const seen = new Set(ids.map((id) => id[position]));
      const expected = position === 12 ? 1 : position === 16 ? 4 : 16;
      assert.equal(seen.size, expected, `digit ${position}`);
    }
  });
});

describe('job ids', () => {
  it('are version 4 UUIDs, one per job', async () => {
    const runtime = new OperatorRuntime();
    runtime.use({
      manifest: { name: 'ids', version: '1.0.0', capabilities: ['ids.one'] },
      capabilities: [
        createCapability({
          name: 'ids.one',
          version: '1.0.0',
          description: 'returns 1',
          risk: 'read',
          lifecycleLogging: false,
          execute: () => 1,
        }),
      ],
    });
    const plan = { version: '1.0' as const, steps: [{ id: 'a', capability: 'ids.one' }] };
    const jobs = await Promise.all(Array.from({ length: 300 }, () => runtime.executePlan(plan)));
    for (const job of jobs) assert.match(job.id, UUID_V4);
    assert.equal(new Set(jobs.map((job) => job.id)).size, jobs.length);
    assert.equal(jobs[0]?.events[0]?.id, `${jobs[0]?.id}:1`);
    await runtime.close();
  });
});
