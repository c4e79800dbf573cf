/**
 * The summary table `warrant run` prints when the job stops (docs/guide/cli.md, "Progress of
 * `warrant run`"): a row per step, or, for a plan of more than MAX_FULL_ROWS steps, the first and
 * last few rows and every step that did not complete, with the rows left out counted, and a count
 * per status.
 */
import type { Job } from '../index.js';
import { formatTable } from './format-table.js';
import { printable } from './run-progress.js';

/** Plans with at most this many steps get a row per step. */
export const MAX_FULL_ROWS = 20;

/** Rows shown at each end of a longer plan. */
export const END_ROWS = 5;

/** Most steps shown, beyond both ends, because they did not complete. */
export const MAX_NOTABLE_ROWS = 10;

const HEADER = ['step', 'capability', 'decision', 'status', 'duration'] as const;

/** Steps whose row is worth showing in a long plan: they did not simply complete or skip. */
function notable(status: string): boolean {
  return status !== 'completed' && status !== 'skipped';
}

function stepRow(step: Job['steps'][number], durations: ReadonlyMap<string, number>): string[] {
  const took = durations.get(step.id);
  return [
    printable(step.id, 60),
    printable(step.capability, 60),
    step.decision?.outcome ?? '-',
    step.status,
    took === undefined ? '-' : `${took.toFixed(1)} ms`,
  ];
}

/** The indexes of the steps a long plan shows, in order. */
function shownIndexes(statuses: readonly string[]): number[] {
  const count = statuses.length;
  if (count <= MAX_FULL_ROWS) return statuses.map((_, index) => index);
  const shown = new Set<number>();
  for (let index = 0; index < END_ROWS; index += 1) shown.add(index);
  let notables = 0;
  for (let index = END_ROWS; index < count - END_ROWS && notables < MAX_NOTABLE_ROWS; index += 1) {
    if (notable(statuses[index] as string)) {
      shown.add(index);
      notables += 1;
    }
  }
  for (let index = count - END_ROWS; index < count; index += 1) shown.add(index);
  return [...shown].sort((a, b) => a - b);
}

/** `199 completed, 1 failed`: how many steps ended in each status, in order of first appearance. */
export function statusCounts(statuses: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const status of statuses) counts.set(status, (counts.get(status) ?? 0) + 1);
  return [...counts].map(([status, count]) => `${count} ${status}`).join(', ');
}

/** The table (and for a long plan the counts line) for a finished, failed or waiting job. */
export function summaryTable(job: Job, durations: ReadonlyMap<string, number>): string {
  const statuses = job.steps.map((step) => step.status as string);
  const rows: string[][] = [];
  let previous = -1;
  for (const index of shownIndexes(statuses)) {
    const left = index - previous - 1;
    if (left > 0) rows.push([`... ${left} more`, '', '', '', '']);
    rows.push(stepRow(job.steps[index] as Job['steps'][number], durations));
    previous = index;
  }
  const table = formatTable(HEADER, rows);
  if (statuses.length <= MAX_FULL_ROWS) return table;
  return `${table}\n\n${statuses.length} steps: ${statusCounts(statuses)}`;
}
