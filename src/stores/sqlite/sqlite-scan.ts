/**
 * The SQLite store read a page at a time for `verifyStore` (docs/api.md, "Stores": the
 * `SealScanStore` part): the jobs by `seq`, each page read in one transaction by one statement per
 * table over the page's range of `seq` (not seven statements and a transaction per job), the
 * checkpoints' entries by `(checkpoint, job_id)` from where the last page ended. Memory holds a
 * page, never every job or entry; the event loop runs between pages.
 */
import type Sqlite from 'better-sqlite3';
import { ErrorCode } from '../../errors/error-codes.js';
import type { JobEvent, JobStep } from '../../jobs/job.js';
import type {
  ConsumedApproval,
  ScannedEntry,
  ScannedJob,
  SealedEntry,
  StoreScan,
} from '../../jobs/job-store.js';
import { decodeEvent, decodeJob, decodeStep } from '../shared/record-columns.js';

/** Jobs read at a time by default; entries ten times that. */
export const SCAN_PAGE = 100;

/** What the store reads in the transaction that begins a scan: all but the jobs and entries. */
export type ScanHead = Omit<StoreScan, 'jobs' | 'chains' | 'entries'>;

type JobRow = [
  seq: number,
  id: string,
  status: string,
  goal: string,
  createdAt: string,
  updatedAt: string,
  fixed: string,
  state: string,
];
type StepRow = [
  seq: number,
  capability: string,
  status: string,
  fixed: string,
  state: string,
  decision: string | null,
];
type EventRow = [seq: number, event: string, hash: string | null];
type SealedRow = [seq: number, checkpoint: number, jobId: string, events: number, hash: string];
type ConsumedRow = [seq: number, position: number, stepId: string, decision: string];
type EntryRow = [checkpoint: number, jobId: string, events: number, hash: string, stored: number];

const JOBS = `SELECT seq, id, status, goal, created_at, updated_at, fixed, state FROM jobs
  WHERE seq > ? AND seq <= ? ORDER BY seq LIMIT ?`;
// The rows of a page's jobs: every job of the page's range of seq is in the page.
const STEPS = `SELECT job_seq, capability, status, fixed, state, decision FROM job_steps
  WHERE job_seq BETWEEN ? AND ? ORDER BY job_seq, position`;
const EVENTS = `SELECT job_seq, event, hash FROM job_events
  WHERE job_seq BETWEEN ? AND ? ORDER BY job_seq, position`;
const SEALED = `SELECT j.seq, e.checkpoint, e.job_id, e.events, e.hash
  FROM jobs j JOIN checkpoint_entries e ON e.job_id = j.id
  WHERE j.seq BETWEEN ? AND ? ORDER BY j.seq, e.checkpoint`;
const CONSUMED = `SELECT j.seq, l.request_position, l.step_id, l.decision
  FROM jobs j JOIN approval_ledger l ON l.job_id = j.id
  WHERE j.seq BETWEEN ? AND ? ORDER BY j.seq, l.request_position`;
const ENTRIES = `SELECT e.checkpoint, e.job_id, e.events, e.hash, j.seq IS NOT NULL
  FROM checkpoint_entries e LEFT JOIN jobs j ON j.id = e.job_id
  WHERE (e.checkpoint, e.job_id) > (?, ?) ORDER BY e.checkpoint, e.job_id LIMIT ?`;
/** How many jobs a scan reads, and the last one's seq: read with the head. */
const BOUND = 'SELECT count(*), coalesce(max(seq), 0) FROM jobs';

/** Lets the event loop run (timers, requests, the seal) between two pages. */
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** The message of a record that cannot be read; any other error is thrown. */
function unreadable(error: unknown): string {
  if ((error as { code?: unknown } | null)?.code !== ErrorCode.JOB_RECORD_UNREADABLE) throw error;
  return (error as Error).message;
}

/** The jobs of one page, decoded; rows of every table come ordered by seq. */
function pageOf(
  jobs: readonly JobRow[],
  steps: readonly StepRow[],
  events: readonly EventRow[],
  sealed: readonly SealedRow[],
  consumed: readonly ConsumedRow[],
): ScannedJob[] {
  const page: ScannedJob[] = [];
  let step = 0;
  let event = 0;
  let seal = 0;
  let consume = 0;
  for (const [seq, id, status, goal, createdAt, updatedAt, fixed, state] of jobs) {
    // Rows of a seq with no job (a job row deleted, not its steps) are no job's: skipped.
    while (step < steps.length && (steps[step] as StepRow)[0] < seq) step++;
    while (event < events.length && (events[event] as EventRow)[0] < seq) event++;
    const entries: SealedEntry[] = [];
    for (; seal < sealed.length && (sealed[seal] as SealedRow)[0] === seq; seal++) {
      const [, checkpoint, jobId, count, hash] = sealed[seal] as SealedRow;
      entries.push({ checkpoint, jobId, events: count, hash });
    }
    const requests: ConsumedApproval[] = [];
    for (; consume < consumed.length && (consumed[consume] as ConsumedRow)[0] === seq; consume++) {
      const [, position, stepId, decision] = consumed[consume] as ConsumedRow;
      requests.push({ position, stepId, decision });
    }
    const stepsFrom = step;
    while (step < steps.length && (steps[step] as StepRow)[0] === seq) step++;
    const eventsFrom = event;
    while (event < events.length && (events[event] as EventRow)[0] === seq) event++;
    try {
      const jobSteps: JobStep[] = [];
      for (let at = stepsFrom; at < step; at++) {
        const [, capability, stepStatus, stepFixed, stepState, decision] = steps[at] as StepRow;
        jobSteps.push(decodeStep(capability, stepStatus, stepFixed, stepState, decision));
      }
      const jobEvents: JobEvent[] = [];
      const hashes: (string | null)[] = [];
      for (let at = eventsFrom; at < event; at++) {
        const row = events[at] as EventRow;
        jobEvents.push(decodeEvent(row[1]));
        hashes.push(row[2]);
      }
      const job = decodeJob(
        id,
        status,
        goal,
        createdAt,
        updatedAt,
        fixed,
        state,
        jobSteps,
        jobEvents,
      );
      page.push({ id, chain: { job, hashes, consumed: requests }, sealed: entries });
    } catch (error) {
      page.push({ id, chain: undefined, unreadable: unreadable(error), sealed: entries });
    }
  }
  return page;
}

/**
 * A scan of the store on `db`: `readHead` reads what begins it (in one transaction with the
 * number of jobs), `flush` commits the changes queued (a page sees every change reported before
 * it is read).
 */
export function sqliteScan(
  db: Sqlite.Database,
  readHead: () => ScanHead,
  flush: () => void,
  page = SCAN_PAGE,
): StoreScan {
  const size = Number.isSafeInteger(page) && page > 0 ? page : SCAN_PAGE;
  flush();
  const bound = db.prepare(BOUND).raw();
  const [head, jobs, last] = db.transaction((): [ScanHead, number, number] => {
    const [count, max] = bound.get() as [number, number];
    return [readHead(), count, max];
  })();
  const statements = {
    jobs: db.prepare(JOBS).raw(),
    steps: db.prepare(STEPS).raw(),
    events: db.prepare(EVENTS).raw(),
    sealed: db.prepare(SEALED).raw(),
    consumed: db.prepare(CONSUMED).raw(),
    entries: db.prepare(ENTRIES).raw(),
  };
  const readPage = db.transaction((after: number): [ScannedJob[], number] => {
    const rows = statements.jobs.all(after, last, size) as JobRow[];
    if (rows.length === 0) return [[], after];
    const from = (rows[0] as JobRow)[0];
    const to = (rows.at(-1) as JobRow)[0];
    const read = pageOf(
      rows,
      statements.steps.all(from, to) as StepRow[],
      statements.events.all(from, to) as EventRow[],
      statements.sealed.all(from, to) as SealedRow[],
      statements.consumed.all(from, to) as ConsumedRow[],
    );
    return [read, to];
  });
  const entryPage = size * 10;
  return {
    ...head,
    jobs,
    async *chains() {
      let after = 0;
      for (;;) {
        flush();
        const [read, to] = readPage(after);
        if (read.length === 0) return;
        yield read;
        after = to;
        await turn();
      }
    },
    async *entries() {
      let after: [number, string] = [0, ''];
      for (;;) {
        const rows = statements.entries.all(after[0], after[1], entryPage) as EntryRow[];
        if (rows.length === 0) return;
        yield rows.map(([checkpoint, jobId, events, hash, stored]): ScannedEntry => ({
          checkpoint,
          jobId,
          events,
          hash,
          stored: stored === 1,
        }));
        const lastRow = rows.at(-1) as EntryRow;
        after = [lastRow[0], lastRow[1]];
        await turn();
      }
    },
  };
}
