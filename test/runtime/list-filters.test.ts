// The checks of `listJobs()` filters (src/runtime/list-filters.ts), through the public runtime.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runtimeWith } from '../support/runtime-fixtures.js';

describe('OperatorRuntime#listJobs() filters', () => {
  it('rejects a malformed filter with JOB_FILTER_INVALID', async () => {
    const runtime = runtimeWith();
    for (const filter of [null, 'x', { limit: -1 }, { limit: 1.5 }, { status: 3 }]) {
      await assert.rejects(runtime.listJobs(filter as never), { code: 'JOB_FILTER_INVALID' });
    }
  });
});
