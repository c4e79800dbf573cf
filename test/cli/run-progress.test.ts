// `warrant run` progress (issue 19 item 5): the job id first, a line when each step starts, a
// live line with the elapsed time on a terminal (redrawn at most every 100 ms), a summary for
// long plans. The renderer is driven with fake events, a fake clock and a fake stream: nothing
// here depends on real time.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { RuntimeEvent } from '../../src/index.js';
import {
  REDRAW_MS,
  RunProgress,
  printable,
  type ProgressStream,
} from '../../src/cli/run-progress.js';

const CLEAR = '\r\x1b[2K';

class FakeStream implements ProgressStream {
  readonly chunks: string[] = [];
  constructor(
    readonly isTTY: boolean,
    readonly columns = 80,
  ) {}
  write(text: string): boolean {
    this.chunks.push(text);
    return true;
  }
  get text(): string {
    return this.chunks.join('');
  }
}

/** A fake clock and timer: `advance(ms)` moves the clock and fires the timer. */
function fakeTime() {
  let now = 0;
  let tick: (() => void) | undefined;
  let stops = 0;
  return {
    now: () => now,
    every: (_ms: number, fn: () => void) => {
      tick = fn;
      return () => {
        tick = undefined;
        stops += 1;
      };
    },
    advance(ms: number) {
      now += ms;
      tick?.();
    },
    get running() {
      return tick !== undefined;
    },
    get stops() {
      return stops;
    },
  };
}

let sequence = 0;
function event(
  type: RuntimeEvent['type'],
  stepId?: string,
  data?: Record<string, unknown>,
): RuntimeEvent {
  sequence += 1;
  const value: { -readonly [K in keyof RuntimeEvent]: RuntimeEvent[K] } = {
    id: `e${sequence}`,
    type,
    timestamp: new Date(0).toISOString(),
    jobId: 'job-1',
  };
  if (stepId !== undefined) value.stepId = stepId;
  if (data !== undefined) value.data = data;
  return value;
}

const started = (stepId: string, capability: string) =>
  event('capability.started', stepId, { stepId, capability });
const completed = (stepId: string, capability: string) =>
  event('capability.completed', stepId, { stepId, capability });

describe('RunProgress on a pipe (not a terminal)', () => {
  it('prints the job id first, then one line per step start, and the steps that did not complete', () => {
    const stream = new FakeStream(false);
    const time = fakeTime();
    const progress = new RunProgress({ stream, stepIds: ['a', 'b', 'c'], ...time });
    progress.observe(event('job.created', undefined, { goal: 'g' }));
    progress.observe(event('execution.started'));
    progress.observe(started('a', 'fs.read'));
    time.advance(5);
    progress.observe(completed('a', 'fs.read'));
    progress.observe(started('b', 'mail.send'));
    time.advance(2);
    progress.observe(
      event('capability.failed', 'b', { capability: 'mail.send', error: 'smtp down' }),
    );
    progress.observe(
      event('capability.denied', 'c', { capability: 'fs.write', reason: 'no scope' }),
    );
    progress.finish();
    assert.equal(
      stream.text,
      [
        'job job-1: 3 steps',
        '[1/3] running fs.read (a) ...',
        '[2/3] running mail.send (b) ...',
        '  ✖ [2/3] b (mail.send) failed in 2.0 ms: smtp down',
        '  ✖ [3/3] c (fs.write) denied: no scope',
        '',
      ].join('\n'),
    );
    assert.equal(time.running, false, 'no timer off a terminal');
    assert.deepEqual(
      [...progress.durations],
      [
        ['a', 5],
        ['b', 2],
      ],
    );
  });

  it('shows texts from the plan and the capability printable: no escape sequence reaches the terminal', () => {
    const stream = new FakeStream(false);
    const progress = new RunProgress({ stream, stepIds: ['\x1b[2Jx'], ...fakeTime() });
    progress.observe(started('\x1b[2Jx', 'evil\ncap'));
    progress.observe(
      event('capability.failed', '\x1b[2Jx', { capability: 'c', error: 'a\rb\u202ec' }),
    );
    for (const unsafe of ['\x1b', '\r', '\u202e'])
      assert.ok(!stream.text.includes(unsafe), JSON.stringify(unsafe));
    assert.match(stream.text, /running evil\\ncap \(\\u001b\[2Jx\)/);
    assert.match(stream.text, /failed in 0.0 ms: a\\rb\\u202ec/);
    assert.equal(printable('x'.repeat(200), 10), 'xxxxxxx...');
  });
});

describe('RunProgress on a terminal', () => {
  it('keeps one live line with the elapsed time, redrawn at most every REDRAW_MS', () => {
    const stream = new FakeStream(true);
    const time = fakeTime();
    const progress = new RunProgress({ stream, stepIds: ['a', 'b', 'c'], ...time });
    progress.observe(event('job.created'));
    assert.equal(stream.chunks.pop(), 'job job-1: 3 steps\n');
    progress.observe(started('a', 'fs.read'));
    assert.equal(stream.chunks.pop(), `${CLEAR}[1/3] running fs.read (a) 0.0s`);
    assert.ok(time.running, 'a timer redraws the line');
    time.advance(REDRAW_MS / 2);
    assert.equal(stream.chunks.length, 0, 'not redrawn sooner than REDRAW_MS');
    time.advance(150);
    assert.equal(stream.chunks.pop(), `${CLEAR}[1/3] running fs.read (a) 0.2s`);
    progress.observe(completed('a', 'fs.read'));
    progress.observe(started('b', 'fs.read'));
    assert.equal(stream.chunks.length, 0, 'a step starting within REDRAW_MS waits for the timer');
    time.advance(REDRAW_MS);
    assert.equal(stream.chunks.pop(), `${CLEAR}[2/3] running fs.read (b) 0.1s`);
    time.advance(1_200);
    assert.equal(stream.chunks.pop(), `${CLEAR}[2/3] running fs.read (b) 1.3s`);
    progress.observe(event('approval.requested', 'b', { capability: 'fs.read', reason: 'ask' }));
    assert.deepEqual(stream.chunks.splice(0), [
      CLEAR,
      '  ⏸ [2/3] b (fs.read) awaits approval: ask\n',
    ]);
    progress.finish();
    assert.equal(time.stops, 1, 'the timer is stopped');
    assert.deepEqual(stream.chunks, [], 'nothing left to clear');
  });

  it('never writes a live line wider than the terminal, and clears it when the job stops', () => {
    const stream = new FakeStream(true, 20);
    const time = fakeTime();
    const progress = new RunProgress({ stream, stepIds: ['a-long-step-id'], ...time });
    progress.observe(started('a-long-step-id', 'some.capability'));
    const line = stream.chunks.pop() as string;
    assert.equal(line, `${CLEAR}[1/1] running some.`);
    assert.equal(line.length - CLEAR.length, 19);
    progress.finish();
    assert.deepEqual(stream.chunks, [CLEAR]);
  });
});
