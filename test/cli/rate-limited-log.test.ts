// The stderr log of the servers (issue 14 item 8): every failure is accounted for, with at most
// one line per interval, and a count for the lines left out.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createRateLimitedLog } from '../../src/cli/rate-limited-log.js';
import { Changes } from '../support/wait.js';

/** A scheduler the test fires by hand. */
function manualTimers() {
  const pending: { callback: () => void; ms: number; cancelled: boolean }[] = [];
  return {
    pending,
    schedule: (callback: () => void, ms: number) => {
      const timer = { callback, ms, cancelled: false };
      pending.push(timer);
      return () => (timer.cancelled = true);
    },
    fire: () => {
      const timer = pending.shift();
      assert.ok(timer && !timer.cancelled, 'a live timer');
      timer.callback();
    },
  };
}

describe('createRateLimitedLog(emit, options)', () => {
  it('writes the first line at once, counts the rest of the interval, then writes the count', () => {
    const lines: string[] = [];
    const timers = manualTimers();
    const log = createRateLimitedLog((line) => lines.push(line), {
      intervalMs: 1000,
      schedule: timers.schedule,
      suppressed: (count) => `${count} more`,
    });
    log.write('first');
    log.write('second');
    log.write('third');
    assert.deepEqual(lines, ['first']);
    assert.equal(timers.pending[0]?.ms, 1000);
    timers.fire();
    assert.deepEqual(lines, ['first', '2 more']);
    // The count started a new interval: a failure in it is counted too.
    log.write('fourth');
    assert.deepEqual(lines, ['first', '2 more']);
    timers.fire();
    assert.deepEqual(lines, ['first', '2 more', '1 more']);
    // A quiet interval ends the window: the next line is written at once.
    timers.fire();
    assert.deepEqual(lines, ['first', '2 more', '1 more']);
    assert.equal(timers.pending.length, 0);
    log.write('fifth');
    assert.deepEqual(lines, ['first', '2 more', '1 more', 'fifth']);
  });

  it('writes the pending count on close and stops its timer', () => {
    const lines: string[] = [];
    const timers = manualTimers();
    const log = createRateLimitedLog((line) => lines.push(line), {
      schedule: timers.schedule,
      suppressed: (count) => `${count} more`,
    });
    log.write('a');
    log.write('b');
    log.close();
    assert.deepEqual(lines, ['a', '1 more']);
    assert.equal(timers.pending[0]?.cancelled, true);
    log.close();
    assert.deepEqual(lines, ['a', '1 more'], 'nothing twice');
  });

  it('writes the count in its default wording with real timers', async () => {
    const lines: string[] = [];
    const changes = new Changes();
    const log = createRateLimitedLog(
      (line) => {
        lines.push(line);
        changes.changed();
      },
      { intervalMs: 20 },
    );
    log.write('one');
    log.write('two');
    await changes.until(() => lines.length >= 2, { what: 'the count of the suppressed line' });
    assert.equal(lines[0], 'one');
    assert.match(lines[1] ?? '', /^1 more line suppressed/);
    log.close();
  });
});
