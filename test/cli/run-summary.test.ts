// The summary table of `warrant run` (issue 19 item 5): a row per step for a short plan; for a
// long one both ends, the steps that did not complete, and a count per status.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Job } from '../../src/index.js';
import { summaryTable } from '../../src/cli/run-summary.js';

function jobOf(statuses: string[]): Job {
  return {
    id: 'job-1',
    steps: statuses.map((status, index) => ({
      id: `s${index + 1}`,
      capability: 'fs.read',
      status,
      ...(status === 'skipped'
        ? {}
        : { decision: { outcome: status === 'failed' ? 'deny' : 'allow' } }),
    })),
  } as unknown as Job;
}

describe('summaryTable', () => {
  it('has a row per step for a short plan', () => {
    const table = summaryTable(jobOf(['completed', 'failed', 'skipped']), new Map([['s1', 1.25]]));
    assert.deepEqual(table.split('\n'), [
      'step  capability  decision  status     duration',
      '----  ----------  --------  ---------  --------',
      's1    fs.read     allow     completed  1.3 ms',
      's2    fs.read     deny      failed     -',
      's3    fs.read     -         skipped    -',
    ]);
  });

  it('summarises a long plan: both ends, the steps that did not complete, and counts per status', () => {
    const statuses = Array.from({ length: 200 }, (_, index) =>
      index < 100 ? 'completed' : index === 100 ? 'failed' : 'skipped',
    );
    const lines = summaryTable(jobOf(statuses), new Map()).split('\n');
    const steps = lines.slice(2, -2).map((line) => line.split(/\s+/)[0] as string);
    assert.deepEqual(steps, [
      's1',
      's2',
      's3',
      's4',
      's5',
      '...',
      's101',
      '...',
      's196',
      's197',
      's198',
      's199',
      's200',
    ]);
    assert.match(lines[7] as string, /^\.\.\. 95 more/);
    assert.match(lines[9] as string, /^\.\.\. 94 more/);
    assert.equal(lines.at(-1), '200 steps: 100 completed, 1 failed, 99 skipped');
    assert.ok(lines.length < 20);
  });
});
