// Workers on DBOS Transact (docs/api.md, "Workers"), with a real PostgreSQL (embedded) and the
// real SDK: a submitter queues jobs and a worker hands each job id to its runner once; DBOS's
// tables hold ids and statuses only; a cancel aborts the running job's signal; a worker's lock
// refuses a second process with the same id; jobs go to the latest version's workers; a SIGKILLed
// worker's job is taken up by a live one, of another version too. The runner here stands for Warrant's step function (wired in src/runtime), which
// test/workers/worker.test.ts drives end to end.
import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';
import { Changes, waitFor } from '../support/wait.js';
import {
  createDbosSubmitter,
  DBOS_SCHEMA,
  startDbosWorker,
  type DbosSubmitter,
  type DbosWorker,
} from '../../src/workers/dbos-engine.js';
import { TS_LOADER } from '../support/ts-loader.js';

const ROOT = resolve(import.meta.dirname, '../..');
const CHILD = resolve(ROOT, 'test/workers/fixtures/dbos-worker-child.ts');
const VERSION = 'warrant-test-v1';
/** The peer is the previous deployment: once this one started, it takes no new job. */
const OLD_VERSION = 'warrant-test-v0';
const SECRET = 'do-not-store-me';

describe('DBOS workers', { timeout: 120_000 }, () => {
  let postgres: TestPostgres;
  let url: string;
  let submitter: DbosSubmitter;
  let worker: DbosWorker;
  let peer: ChildProcessWithoutNullStreams;
  let peerOut = '';
  const ran: string[] = [];
  const aborted = new Map<string, number>();
  const secrets: string[] = [];
  /** What this process sees change: a job run or aborted here, a line from the peer. */
  const changes = new Changes();
  const until = (check: () => boolean, timeoutMs: number, what: string) =>
    changes.until(check, { timeoutMs, what });

  before(async () => {
    postgres = await startTestPostgres();
    url = await postgres.createDatabase();
    submitter = await createDbosSubmitter({ url });
    // A peer worker in its own process takes the first job and blocks on it.
    peer = spawn(process.execPath, [...TS_LOADER, CHILD, url, 'peer', OLD_VERSION], {
      cwd: ROOT,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    for (const stream of [peer.stdout, peer.stderr])
      stream.setEncoding('utf8').on('data', (chunk: string) => {
        peerOut += chunk;
        changes.changed();
      });
    await until(() => peerOut.includes('ready'), 60_000, 'the peer worker');
    await submitter.enqueue('held-by-peer');
    await until(() => peerOut.includes('started held-by-peer'), 30_000, 'the peer to start');
    worker = await startDbosWorker({
      url,
      executorId: 'local-test',
      appVersion: VERSION,
      concurrency: 4,
      probeMs: 200,
      run: async (jobId, signal) => {
        ran.push(jobId);
        changes.changed();
        if (jobId.startsWith('slow')) {
          await new Promise<void>((resolveAbort) => {
            signal?.addEventListener('abort', () => {
              aborted.set(jobId, Date.now());
              changes.changed();
              resolveAbort();
            });
          });
          return 'cancelled';
        }
        if (jobId.startsWith('secret')) throw new Error(`capability failed with ${SECRET}`);
        secrets.push(SECRET);
        return 'completed';
      },
    });
  });

  after(async () => {
    if (peer !== undefined && peer.exitCode === null) peer.kill('SIGKILL');
    await worker?.stop();
    await submitter?.close();
    await postgres?.stop();
  });

  /** How often a job started, here or in the peer. */
  const starts = (id: string) =>
    ran.filter((ranId) => ranId === id).length +
    peerOut.split('\n').filter((line) => line === `started ${id}`).length;

  it('runs each queued job once, however often it is queued', async () => {
    for (const id of ['job-1', 'job-2', 'job-3']) await submitter.enqueue(id);
    await submitter.enqueue('job-1');
    await until(() => ['job-1', 'job-2', 'job-3'].every((id) => starts(id) > 0), 30_000, 'jobs');
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(starts('job-1'), 1);
    // The peer runs the previous version: new jobs went to this one.
    assert.ok(['job-1', 'job-2', 'job-3'].every((id) => ran.includes(id)));
  });

  it('keeps ids and statuses only in its tables, never a message of a capability', async () => {
    // Both workers fail `secret-*` jobs with the secret in the message.
    await submitter.enqueue('secret-1');
    await until(() => starts('secret-1') > 0, 30_000, 'the failing job');
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      /** Every row of the DBOS tables, as JSON text, by table. */
      const tablesText = async () => {
        const tables = await client.query<{ table_name: string }>(
          'SELECT table_name FROM information_schema.tables WHERE table_schema = $1',
          [DBOS_SCHEMA],
        );
        assert.ok(tables.rows.length > 0);
        const texts = new Map<string, string>();
        for (const { table_name } of tables.rows) {
          const { rows } = await client.query(`SELECT * FROM ${DBOS_SCHEMA}."${table_name}"`);
          texts.set(table_name, JSON.stringify(rows));
        }
        return texts;
      };
      // The failure itself is recorded (by the worker, in the database), scrubbed: the job,
      // nothing of the capability's message.
      const texts = await waitFor(
        async () => {
          const read = await tablesText();
          return [...read.values()].join('').includes('job secret-1 did not run') && read;
        },
        { timeoutMs: 30_000, what: 'the failure of secret-1 in the DBOS tables' },
      );
      for (const [table, text] of texts)
        assert.ok(!text.includes(SECRET), `${table} holds a secret`);
    } finally {
      await client.end();
    }
  });

  it('aborts a running job’s signal when its workflow is cancelled', async () => {
    await submitter.enqueue('slow-1');
    await until(() => starts('slow-1') > 0, 30_000, 'the slow job');
    await submitter.cancel('slow-1');
    await until(
      () => aborted.has('slow-1') || peerOut.includes('aborted slow-1'),
      20_000,
      'the abort',
    );
  });

  it('refuses a second worker with an id that is alive', async () => {
    const second = spawn(process.execPath, [...TS_LOADER, CHILD, url, 'local-test', VERSION], {
      cwd: ROOT,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let output = '';
    second.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const code = await new Promise<number | null>((resolveExit) => {
      const timer = setTimeout(() => second.kill('SIGKILL'), 60_000);
      second.once('exit', (exitCode) => {
        clearTimeout(timer);
        resolveExit(exitCode);
      });
    });
    assert.notEqual(code, 0);
    assert.match(output, /already running/);
  });

  it('takes up the jobs of a killed worker of another version', async () => {
    assert.ok(!ran.includes('held-by-peer'));
    const held = peerOut
      .split('\n')
      .filter((line) => line.startsWith('started ') && !/slow|secret/.test(line))
      .map((line) => line.slice('started '.length));
    peer.kill('SIGKILL');
    await until(() => held.every((id) => ran.includes(id)), 10_000, 'the take-over');
  });
});
