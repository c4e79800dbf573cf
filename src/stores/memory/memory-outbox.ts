import type { Job, JobEvent } from '../../jobs/job.js';
import type {
  JobStoreOutbox,
  OutboxEntry,
  OutboxRecord,
  OutboxWriter,
} from '../../jobs/job-store.js';

type Row = { -readonly [K in keyof OutboxRecord]: OutboxRecord[K] } & { leasedUntil: number };

/**
 * The notification outbox of the memory store (docs/api.md, "Notifications"): rows in process,
 * written synchronously with the change that causes them, so with it or not at all; gone with
 * the process, like the jobs.
 */
export class MemoryOutbox implements JobStoreOutbox {
  #writer: OutboxWriter | undefined;
  readonly #rows: Row[] = [];
  #seq = 0;

  attachOutbox(writer: OutboxWriter): void {
    this.#writer = writer;
  }

  /** Writes the entries `events` cause; nothing without a writer attached. */
  record(job: Job, events: readonly JobEvent[]): void {
    const writer = this.#writer;
    if (writer === undefined) return;
    const entries = writer.entries(job, events);
    if (entries === undefined || entries.length === 0) return;
    for (const entry of entries) this.#insert(entry, writer.maxPending);
    writer.written();
  }

  #insert(entry: OutboxEntry, maxPending: number): void {
    this.#rows.push({
      ...entry,
      seq: ++this.#seq,
      status: 'pending',
      attempts: 0,
      nextAt: 0,
      leasedUntil: 0,
    });
    const pending = this.#rows.filter(
      (row) => row.destination === entry.destination && row.status === 'pending',
    );
    for (const row of pending.slice(0, Math.max(0, pending.length - maxPending))) {
      row.status = 'dropped';
      row.error = `dropped: more than ${maxPending} notifications pending for this destination`;
    }
  }

  claimNotifications(
    now: number,
    leaseMs: number,
    limit: number,
    destination?: string,
  ): OutboxRecord[] {
    const seen = new Set<string>();
    const claimed: OutboxRecord[] = [];
    for (const row of this.#rows) {
      if (claimed.length >= limit) break;
      if (row.status !== 'pending') continue;
      if (destination !== undefined && row.destination !== destination) continue;
      const key = `${row.destination}\n${row.jobId}`;
      if (seen.has(key)) continue;
      seen.add(key);
      if (row.nextAt > now || row.leasedUntil > now) continue;
      row.attempts++;
      row.leasedUntil = now + leaseMs;
      claimed.push(publicRow(row));
    }
    return claimed;
  }

  settleNotification(
    seq: number,
    outcome: { delivered: true } | { delivered: false; error: string; nextAt?: number },
  ): void {
    const index = this.#rows.findIndex((row) => row.seq === seq);
    const row = this.#rows[index];
    if (row === undefined || row.status !== 'pending') return;
    if (outcome.delivered) {
      this.#rows.splice(index, 1);
      return;
    }
    row.error = outcome.error;
    row.leasedUntil = 0;
    if (outcome.nextAt === undefined) row.status = 'failed';
    else row.nextAt = outcome.nextAt;
  }

  listNotifications(limit: number, after = 0): OutboxRecord[] {
    const first = after === 0 ? 0 : this.#rows.findIndex((row) => row.seq > after);
    if (first < 0) return [];
    return this.#rows.slice(first, first + limit).map(publicRow);
  }
}

function publicRow(row: Row): OutboxRecord {
  const record: Partial<Row> = { ...row };
  delete record.leasedUntil;
  return record as OutboxRecord;
}
