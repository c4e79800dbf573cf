/**
 * The PostgreSQL store read a page at a time for `verifyStore` (docs/api.md, "Stores": the
 * `SealScanStore` part): each page of jobs is one statement, so one round trip and one snapshot,
 * whose rows are the page's jobs, steps, events, sealed entries and consumed requests ordered by
 * job, then kind, then position (one pass decodes them); the checkpoints' entries by
 * `(checkpoint, job_id)` from where the last page ended. Memory holds a page, never every job
 * or entry.
 */
import type pg from 'pg';
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
export const SCAN_PAGE = 200;

/** What the store reads in the snapshot that begins a scan, with the jobs it counts. */
export type ScanHead = Omit<StoreScan, 'chains' | 'entries'> & {
  /** The seq of the last job counted (text: a BIGINT); '0' for none. */
  readonly last: string;
};

/** The kinds of row of a page, in the order they come for each job. */
const JOB = 0;
const STEP = 1;
const EVENT = 2;
const SEALED = 3;
const CONSUMED = 4;

/**
 * [kind, seq, n, m, a, b, c, d, e, f, g]: a job (a..g: id, status, goal, created_at, updated_at,
 * fixed, state), a step at position n (a..e: capability, status, fixed, state, decision), an
 * event at position n (a, b: event, hash), an entry of checkpoint n sealing m events (a, b: job
 * id, hash), a consumed request at position n (a, b: step id, decision).
 */
type PageRow = [
  kind: number,
  seq: string,
  n: number,
  m: number,
  a: string,
  b: string | null,
  c: string | null,
  d: string | null,
  e: string | null,
  f: string | null,
  g: string | null,
];

const PAGE = `
WITH page AS (
  SELECT seq, id, status, goal, created_at, updated_at, fixed, state FROM warrant_jobs
  WHERE seq > $1::bigint AND seq <= $2::bigint ORDER BY seq LIMIT $3
), span AS (SELECT min(seq) AS first, max(seq) AS last FROM page)
SELECT ${JOB}, seq, 0, 0, id, status, goal, created_at, updated_at, fixed, state FROM page
UNION ALL
SELECT ${STEP}, s.job_seq, s.position, 0, s.capability, s.status, s.fixed, s.state, s.decision,
  NULL, NULL
FROM warrant_job_steps s, span WHERE s.job_seq BETWEEN span.first AND span.last
UNION ALL
SELECT ${EVENT}, e.job_seq, e.position, 0, e.event, e.hash, NULL, NULL, NULL, NULL, NULL
FROM warrant_job_events e, span WHERE e.job_seq BETWEEN span.first AND span.last
UNION ALL
SELECT ${SEALED}, p.seq, c.checkpoint, c.events, c.job_id, c.hash, NULL, NULL, NULL, NULL, NULL
FROM page p JOIN warrant_checkpoint_entries c ON c.job_id = p.id
UNION ALL
SELECT ${CONSUMED}, p.seq, l.request_position, 0, l.step_id, l.decision, NULL, NULL, NULL, NULL,
  NULL
FROM page p JOIN warrant_approval_ledger l ON l.job_id = p.id
ORDER BY 2, 1, 3`;

const ENTRIES = `
SELECT c.checkpoint, c.job_id, c.events, c.hash, j.seq IS NOT NULL
FROM warrant_checkpoint_entries c LEFT JOIN warrant_jobs j ON j.id = c.job_id
WHERE (c.checkpoint, c.job_id) > ($1, $2) ORDER BY c.checkpoint, c.job_id LIMIT $3`;

type EntryRow = [checkpoint: number, jobId: string, events: number, hash: string, stored: boolean];

/** A read of the store, retried on a lost connection (the store's own). */
export type ReadRows = (config: pg.QueryConfig) => Promise<pg.QueryResult>;

/** A statement whose rows come as arrays (pg passes `rowMode` through to the result). */
function inArrays(name: string, text: string, values: unknown[]): pg.QueryConfig {
  const config: pg.QueryArrayConfig = { name, text, values, rowMode: 'array' };
  return config as unknown as pg.QueryConfig;
}

/** The message of a record that cannot be read; any other error is thrown. */
function unreadable(error: unknown): string {
  if ((error as { code?: unknown } | null)?.code !== ErrorCode.JOB_RECORD_UNREADABLE) throw error;
  return (error as Error).message;
}

/** One job from its rows (`rows[from]` is its job row, `to` past its last). */
function scanned(rows: readonly PageRow[], from: number, to: number): ScannedJob {
  const [, , , , id, status, goal, createdAt, updatedAt, fixed, state] = rows[from] as PageRow;
  const sealed: SealedEntry[] = [];
  const consumed: ConsumedApproval[] = [];
  for (let at = from + 1; at < to; at++) {
    const row = rows[at] as PageRow;
    if (row[0] === SEALED)
      sealed.push({ checkpoint: row[2], jobId: row[4], events: row[3], hash: row[5] as string });
    else if (row[0] === CONSUMED)
      consumed.push({ position: row[2], stepId: row[4], decision: row[5] as string });
  }
  try {
    const steps: JobStep[] = [];
    const events: JobEvent[] = [];
    const hashes: (string | null)[] = [];
    for (let at = from + 1; at < to; at++) {
      const row = rows[at] as PageRow;
      if (row[0] === STEP) {
        steps.push(
          decodeStep(row[4], row[5] as string, row[6] as string, row[7] as string, row[8]),
        );
      } else if (row[0] === EVENT) {
        events.push(decodeEvent(row[4]));
        hashes.push(row[5]);
      }
    }
    const job = decodeJob(
      id,
      status as string,
      goal as string,
      createdAt as string,
      updatedAt as string,
      fixed as string,
      state as string,
      steps,
      events,
    );
    return { id, chain: { job, hashes, consumed }, sealed };
  } catch (error) {
    return { id, chain: undefined, unreadable: unreadable(error), sealed };
  }
}

/** The jobs of a page's rows: each job's row first, then its other rows. */
function pageOf(rows: readonly PageRow[]): ScannedJob[] {
  const page: ScannedJob[] = [];
  let from = 0;
  while (from < rows.length) {
    const seq = (rows[from] as PageRow)[1];
    let to = from + 1;
    while (to < rows.length && (rows[to] as PageRow)[1] === seq) to++;
    // Rows of a seq with no job (a job row deleted, not its steps) are no job's: skipped.
    if ((rows[from] as PageRow)[0] === JOB) page.push(scanned(rows, from, to));
    from = to;
  }
  return page;
}

/** A scan from `head` (read by the store in one snapshot), reading through `read`. */
export function postgresScan(read: ReadRows, head: ScanHead, page = SCAN_PAGE): StoreScan {
  const size = Number.isSafeInteger(page) && page > 0 ? page : SCAN_PAGE;
  const { last, ...scan } = head;
  return {
    ...scan,
    async *chains() {
      const pageAfter = (after: string) => {
        const reading = read(inArrays('warrant_scan_page', PAGE, [after, last, size]));
        // Awaited below; a scan left early leaves it unawaited, and its failure is nobody's.
        reading.catch(() => {});
        return reading;
      };
      // The next page is read while this one is checked: the server and this process overlap.
      let reading = pageAfter('0');
      for (;;) {
        const { rows } = await reading;
        if (rows.length === 0) return;
        // The last row is of the page's last job (rows come by seq).
        reading = pageAfter((rows.at(-1) as PageRow)[1]);
        yield pageOf(rows as PageRow[]);
      }
    },
    async *entries() {
      let after: [number, string] = [0, ''];
      for (;;) {
        const { rows } = await read(
          inArrays('warrant_scan_entries', ENTRIES, [after[0], after[1], size * 10]),
        );
        if (rows.length === 0) return;
        yield (rows as EntryRow[]).map(
          ([checkpoint, jobId, events, hash, stored]): ScannedEntry => ({
            checkpoint,
            jobId,
            events,
            hash,
            stored,
          }),
        );
        const lastRow = rows.at(-1) as EntryRow;
        after = [lastRow[0], lastRow[1]];
      }
    },
  };
}
