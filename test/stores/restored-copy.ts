// A restored copy of a job (docs/api.md, "Approvals": a request is consumed once, and a copy
// restored from before the decision cannot be decided again): what someone with access to the
// database does, shared by the approvals and plan-warrant contract suites.
import type { Job } from '../../src/index.js';
import type { StoreUnderTest } from './contract.js';

type Sql = NonNullable<StoreUnderTest['sql']>;

const SEQ = '(SELECT seq FROM {jobs} WHERE id = ?)';

/**
 * Keeps the job's row and step rows as stored now; the function returned puts them back and
 * deletes the events recorded since (the job as it was when kept).
 */
export async function keepJobRows(
  sql: Sql,
  option: string,
  job: Job,
): Promise<() => Promise<void>> {
  const [jobRow] = await sql(option, 'SELECT status, updated_at, state FROM {jobs} WHERE id = ?', [
    job.id,
  ]);
  const stepRows = await sql(
    option,
    `SELECT position, status, state, decision FROM {job_steps} WHERE job_seq = ${SEQ} ORDER BY position`,
    [job.id],
  );
  return async () => {
    await sql(option, `DELETE FROM {job_events} WHERE job_seq = ${SEQ} AND position >= ?`, [
      job.id,
      job.events.length,
    ]);
    for (const row of stepRows) {
      await sql(
        option,
        `UPDATE {job_steps} SET status = ?, state = ?, decision = ? WHERE job_seq = ${SEQ} AND position = ?`,
        [row.status, row.state, row.decision, job.id, Number(row.position)],
      );
    }
    await sql(option, 'UPDATE {jobs} SET status = ?, updated_at = ?, state = ? WHERE id = ?', [
      jobRow?.status,
      jobRow?.updated_at,
      jobRow?.state,
      job.id,
    ]);
  };
}
