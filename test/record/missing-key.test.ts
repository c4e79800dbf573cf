// The reasons of a keyed record checked without its audit key (docs/api.md, "runtime.verifyJob"):
// the job's, a checkpoint's, and nothing else; the CLI runs of them are in
// test/cli/commands/jobs-verify.test.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isKeyedWithoutKey, KEYED_WITHOUT_KEY } from '../../src/record/missing-key.js';

describe('isKeyedWithoutKey(reason)', () => {
  it('is true for the reasons of a missing key only', () => {
    assert.equal(isKeyedWithoutKey(`the chain is ${KEYED_WITHOUT_KEY}`), true);
    assert.equal(isKeyedWithoutKey(`checkpoint 3 is ${KEYED_WITHOUT_KEY}`), true);
    for (const reason of [
      'event 0 is not keyed: the chain was written without the audit key, or rewritten',
      'event 2 (capability.completed) does not match its hash: it or an earlier event was changed, removed or reordered',
      'checkpoint 3 does not match its hash',
    ])
      assert.equal(isKeyedWithoutKey(reason), false, reason);
  });
});
