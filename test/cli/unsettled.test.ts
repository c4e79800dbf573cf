// What a command waits for, named when the event loop drains before it settles. The executable
// is covered by test/cli/exit-codes.test.ts (`warrant run` exits 1 with this line).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { unsettledLine, waitingFor } from '../../src/cli/unsettled.js';

describe('unsettled work', () => {
  it('names the latest thing waited for, computed only when asked, as one line', () => {
    assert.equal(unsettledLine(), 'the command never settled');
    waitingFor('--module x.mjs never finished loading');
    assert.equal(unsettledLine(), '--module x.mjs never finished loading');
    let step = 'a';
    waitingFor(() => `step ${step} is still running\nsecond line`);
    step = 'b';
    assert.equal(unsettledLine(), 'step b is still running');
    waitingFor(() => {
      throw new Error('broken description');
    });
    assert.equal(unsettledLine(), 'the command never settled');
  });
});
