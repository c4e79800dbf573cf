// The input check at step time (docs/api.md, "Input schemas"): schemas that answer with a
// promise, never settle, reject, or report more issues than a message can hold.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { handMade, plan, setup } from '../support/standard-schema-fixtures.js';

describe('checkStepInput: asynchronous Standard Schema validation', () => {
  it('an asynchronous validate is checked at step time, not at admission', async () => {
    const { runtime, received, add } = setup();
    let calls = 0;
    const name = add(
      handMade(async (value) => {
        calls += 1;
        return (value as { ok?: unknown }).ok === true
          ? { value: { checked: true } }
          : { issues: [{ message: 'not ok', path: [{ key: 'ok' }] }] };
      }),
    );
    const failed = await runtime.executePlan(plan({ id: 'a', capability: name, input: {} }));
    assert.equal(failed.status, 'failed', 'admitted: admission does not wait for a promise');
    assert.equal(failed.steps[0]?.error, 'Input validation failed: input.ok: not ok');
    const done = await runtime.executePlan(
      plan({ id: 'a', capability: name, input: { ok: true } }),
    );
    assert.equal(done.status, 'completed');
    assert.deepEqual(received, [{ checked: true }]);
    assert.equal(calls, 4, 'once at admission (not awaited), once at step time, per plan');
    await runtime.close();
  });

  it("a validate that never settles is bounded by the capability's timeoutMs", async () => {
    const { runtime, asked, add } = setup({ timeoutMs: 50 });
    const name = add(handMade(() => new Promise(() => {})));
    const job = await runtime.executePlan(plan({ id: 'a', capability: name, input: {} }));
    assert.equal(job.status, 'failed');
    assert.equal(job.steps[0]?.error, 'Input validation timed out after 50ms');
    assert.equal(asked.length, 0, 'never authorized');
    await runtime.close();
  });

  it('a validate whose promise rejects fails the step with the reason', async () => {
    const { runtime, add } = setup();
    const name = add(handMade(() => Promise.reject(new Error('async boom'))));
    const job = await runtime.executePlan(plan({ id: 'a', capability: name, input: {} }));
    assert.equal(
      job.steps[0]?.error,
      'Input validation failed: input: the schema threw: async boom',
    );
    await runtime.close();
  });

  it('the failure message stays bounded however many issues a schema returns', async () => {
    const { runtime, add } = setup();
    const message = 'x'.repeat(10_000);
    const many = Array.from({ length: 10_000 }, (_, index) => ({
      message,
      path: [`field${index}`],
    }));
    const name = add(handMade(async () => ({ issues: many })));
    const job = await runtime.executePlan(plan({ id: 'a', capability: name, input: {} }));
    const error = job.steps[0]?.error ?? '';
    assert.match(error, /^Input validation failed: input\.field0: x+\.\.\.; /);
    assert.match(error, /; and 80 more issues$/);
    assert.ok(error.length < 5_000, `${error.length} characters`);
    await runtime.close();
  });
});
