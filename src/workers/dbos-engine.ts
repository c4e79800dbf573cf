/**
 * Workers on DBOS Transact (docs/api.md, "Workers"; docs/decisions.md, "Workers on DBOS"). DBOS
 * is the queue and the trigger: one DBOS workflow per Warrant job (its workflow id the job id),
 * holding one DBOS step that hands the job id to Warrant. Warrant's record decides what runs:
 * the step function reads it, claims the job and applies the recovery rules, so DBOS running a
 * step again (it does, after a crash) never runs a capability twice or on a stored allow.
 *
 * What DBOS stores is the job id (the workflow's input) and `{ jobId, status }` (the step's and
 * the workflow's output); an error that reaches DBOS carries a code, never a capability's
 * message (DBOS records errors with their message and stack).
 *
 * This module imports the SDK: load it only where a PostgreSQL queue is used (the light-import
 * test keeps the package root and the SQLite path free of it).
 */
import type * as DbosSdk from '@dbos-inc/dbos-sdk';
import pg from 'pg';
import { ErrorCode } from '../errors/error-codes.js';
import { createError } from '../errors/warrant-error.js';

/**
 * The SDK, loaded by a name bundlers do not follow: bundling Warrant must not pull DBOS and its
 * optional telemetry packages in (test/contract/bundle.test.ts); Node resolves it at run time.
 */
const SDK = '@dbos-inc/dbos-sdk';
let sdk: Promise<typeof DbosSdk> | undefined;
const loadSdk = (): Promise<typeof DbosSdk> => (sdk ??= import(SDK) as Promise<typeof DbosSdk>);

/** The one queue, its workflow and the schema of DBOS's own tables in the store's database. */
export const QUEUE_NAME = 'warrant';
export const WORKFLOW_NAME = 'warrant.job';
export const DBOS_SCHEMA = 'warrant_dbos';
/** The first key of the workers' advisory locks ('WRNT'); the second is hashtext(executor id). */
const LOCK_CLASS = 0x57524e54;
/** The key of the lock launches take turns under ('WRNL'). */
const LAUNCH_LOCK_CLASS = 0x57524e4c;

/** How long a transaction of DBOS's may sit idle before PostgreSQL ends it (DBOS's default). */
const IDLE_TRANSACTION_TIMEOUT_MS = 60_000;

/**
 * The store's URL as DBOS gets it: its connections set `idle_in_transaction_session_timeout`
 * when they open (libpq `options`), not by a `SET` DBOS would queue on each new pooled
 * connection ahead of its first query, which pg reports on stderr as a query sent while another
 * runs (a `DeprecationWarning` on every start of a worker). A URL that sets the timeout itself
 * is kept as it is; one that cannot be parsed gets DBOS's per-connection `SET` turned off.
 */
export function dbosDatabase(url: string): {
  readonly systemDatabaseUrl: string;
  readonly systemDatabaseIdleTransactionTimeoutMs?: number;
} {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { systemDatabaseUrl: url, systemDatabaseIdleTransactionTimeoutMs: 0 };
  }
  const options = parsed.searchParams.get('options') ?? '';
  if (!options.includes('idle_in_transaction_session_timeout')) {
    const timeout = `-c idle_in_transaction_session_timeout=${IDLE_TRANSACTION_TIMEOUT_MS}`;
    parsed.searchParams.set('options', options === '' ? timeout : `${options} ${timeout}`);
  }
  return { systemDatabaseUrl: parsed.toString() };
}

/** What a job ended as, as DBOS may store it. */
export interface WorkflowOutcome {
  readonly jobId: string;
  readonly status: string;
}

/**
 * Runs (or recovers, or leaves) the job `jobId` as Warrant's record says and resolves its status
 * then; `signal` aborts when DBOS cancels the workflow.
 */
export type RunJobById = (jobId: string, signal: AbortSignal | undefined) => Promise<string>;

export interface WorkerSettings {
  /** The PostgreSQL URL of the store; DBOS keeps its tables in schema `warrant_dbos` there. */
  readonly url: string;
  /** Unique among live workers and the same across restarts of one worker. */
  readonly executorId: string;
  /**
   * From `applicationVersion()`: queued jobs go to workers of the latest version (the one last
   * started); a job another version had started is restamped when its worker is gone.
   */
  readonly appVersion: string;
  /** Jobs this worker runs at once (DBOS's `workerConcurrency` of the queue). */
  readonly concurrency: number;
  readonly run: RunJobById;
  /** The queue's polling interval (DBOS's `minPollingIntervalMs`); default 50. */
  readonly pollingMs?: number;
  /**
   * How long a starting worker waits for its own lock (a peer holds it for a moment while taking
   * over the previous life's jobs); default 15,000. Past it, another live worker has this id.
   */
  readonly lockWaitMs?: number;
  /** How often the watchdog probes for dead peers; default 1,000. */
  readonly probeMs?: number;
  /** One line per event worth an operator's attention; never a secret or a value. */
  readonly log?: (line: string) => void;
}

export interface DbosWorker {
  readonly executorId: string;
  /** Stops taking jobs and ends DBOS; running jobs are left to a peer's watchdog. */
  stop(): Promise<void>;
}

let launched = false;

/** The error DBOS may keep: the job and a code, never a message of a capability or a driver. */
function scrubbed(jobId: string, error: unknown): Error {
  const raw =
    typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  const code = typeof raw === 'string' && /^[A-Z][A-Z0-9_]{0,63}$/.test(raw) ? raw : undefined;
  return new Error(`job ${jobId} did not run${code === undefined ? '' : `: ${code}`}`);
}

/** DBOS's log lines go through `log` at warn and error only (its info lines are chatter). */
function dbosLogger(log: (line: string) => void) {
  const line = (level: string, entry: unknown) => {
    const text = entry instanceof Error ? entry.message : String(entry);
    log(`dbos ${level}: ${text.split('\n', 1)[0] ?? ''}`);
  };
  return {
    info() {},
    debug() {},
    warn: (entry: unknown) => line('warn', entry),
    error: (entry: unknown) => line('error', entry),
  };
}

/**
 * Takes the launch lock, trying again every 50 ms (for at most 120 s): a blocking lock would be
 * an open statement that DBOS's `CREATE INDEX CONCURRENTLY` in the holder's migration waits for.
 */
async function takeTurn(client: pg.Client): Promise<void> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const { rows } = await client.query<{ got: boolean }>(
      'SELECT pg_try_advisory_lock($1, 0) AS got',
      [LAUNCH_LOCK_CLASS],
    );
    if (rows[0]?.got === true) return;
    if (Date.now() > deadline)
      throw new Error('DBOS Transact did not finish migrating within 120 s');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function takeOwnLock(client: pg.Client, executorId: string, waitMs: number): Promise<void> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const { rows } = await client.query<{ got: boolean }>(
      'SELECT pg_try_advisory_lock($1, hashtext($2)) AS got',
      [LOCK_CLASS, executorId],
    );
    if (rows[0]?.got === true) return;
    if (Date.now() > deadline) {
      throw createError(
        Error,
        ErrorCode.WORKER_ALREADY_RUNNING,
        `worker ${JSON.stringify(executorId)} is already running (its lock is held); each worker needs its own --worker-id`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Starts this process's worker: takes the worker's liveness lock (a session-level advisory lock
 * held for the worker's life), launches DBOS (which first resumes this worker's own unfinished
 * workflows, as a restart with the same executor id does), and probes peers every `probeMs`: a
 * peer with unfinished workflows whose lock can be taken is gone, and its workflows are put back
 * on the queue while the lock is held (so two peers never take up the same one).
 */
export async function startDbosWorker(settings: WorkerSettings): Promise<DbosWorker> {
  if (launched) throw new Error('one worker per process: DBOS Transact is launched once');
  launched = true;
  const { DBOS } = await loadSdk();
  const log = settings.log ?? (() => {});
  const own = new pg.Client({ connectionString: settings.url });
  const probe = new pg.Client({ connectionString: settings.url });
  // A connection error of either client is logged; losing the own lock is reported below.
  own.on('error', (error) => log(`worker lock connection lost: ${error.message}`));
  probe.on('error', (error) => log(`worker probe connection lost: ${error.message}`));
  try {
    await own.connect();
    await probe.connect();
    await takeOwnLock(own, settings.executorId, settings.lockWaitMs ?? 15_000);
  } catch (error) {
    // Nothing launched yet: the connections close (the process is free to exit) and a later
    // start in this process may try again.
    await Promise.all([own.end().catch(() => {}), probe.end().catch(() => {})]);
    launched = false;
    throw error;
  }

  DBOS.setConfig({
    name: 'warrant',
    ...dbosDatabase(settings.url),
    systemDatabaseSchemaName: DBOS_SCHEMA,
    executorID: settings.executorId,
    applicationVersion: settings.appVersion,
    logger: dbosLogger(log),
    enableOTLP: false,
  });
  const step = (jobId: string): Promise<WorkflowOutcome> =>
    DBOS.runStep(
      async () => {
        try {
          return { jobId, status: await settings.run(jobId, DBOS.stepStatus?.cancelSignal) };
        } catch (error) {
          throw scrubbed(jobId, error);
        }
      },
      { name: 'warrant.run' },
    );
  DBOS.registerWorkflow(step, { name: WORKFLOW_NAME });
  // Launch creates or migrates DBOS's schema: workers starting together would deadlock in it,
  // so launches take turns under a transaction-free advisory lock on the liveness connection.
  try {
    await takeTurn(own);
    try {
      await DBOS.launch();
    } finally {
      await own.query('SELECT pg_advisory_unlock($1, 0)', [LAUNCH_LOCK_CLASS]);
    }
    // Jobs are queued without a version and DBOS hands those to workers of the latest version:
    // the last worker started is the current deployment (a rollback included).
    await DBOS.setLatestApplicationVersion(settings.appVersion);
    await DBOS.registerQueue(QUEUE_NAME, {
      workerConcurrency: settings.concurrency,
      minPollingIntervalMs: settings.pollingMs ?? 50,
      onConflict: 'always_update',
    });
  } catch (error) {
    // A worker that did not start holds nothing: DBOS ends, this worker's lock is released.
    await DBOS.shutdown().catch(() => {});
    await Promise.all([own.end().catch(() => {}), probe.end().catch(() => {})]);
    throw error;
  }

  let probing: Promise<void> | undefined;
  const takeOver = async (): Promise<void> => {
    const pending = await DBOS.listWorkflows({
      status: 'PENDING',
      queueName: QUEUE_NAME,
      loadInput: false,
      loadOutput: false,
    });
    const peers = new Set<string>();
    for (const workflow of pending) {
      const executor = workflow.executorId;
      if (executor !== undefined && executor !== settings.executorId) peers.add(executor);
    }
    for (const peer of peers) {
      const { rows } = await probe.query<{ got: boolean }>(
        'SELECT pg_try_advisory_lock($1, hashtext($2)) AS got',
        [LOCK_CLASS, peer],
      );
      if (rows[0]?.got !== true) continue;
      try {
        const theirs = await DBOS.listWorkflows({
          status: 'PENDING',
          executorId: peer,
          queueName: QUEUE_NAME,
          loadInput: false,
          loadOutput: false,
        });
        for (const workflow of theirs) {
          if (workflow.applicationVersion === settings.appVersion) {
            await DBOS.resumeWorkflow(workflow.workflowID, { queueName: QUEUE_NAME });
          } else {
            // A job a worker of another deployment had started: no worker of that version may be
            // left, so it is restamped with this one's (DBOS rewinds only ended workflows, hence
            // the cancel first). This worker re-admits the job's recorded plan: it runs, or fails
            // naming what differs; never stranded (docs/decisions.md, "Workers on DBOS").
            await DBOS.cancelWorkflow(workflow.workflowID);
            await DBOS.rewindWorkflow(workflow.workflowID, {
              applicationVersion: settings.appVersion,
              queueName: QUEUE_NAME,
            });
          }
        }
        if (theirs.length > 0) {
          log(`worker ${JSON.stringify(peer)} is gone: ${theirs.length} job(s) back on the queue`);
        }
      } finally {
        await probe.query('SELECT pg_advisory_unlock($1, hashtext($2))', [LOCK_CLASS, peer]);
      }
    }
  };
  const timer = setInterval(() => {
    if (probing !== undefined) return;
    probing = takeOver()
      .catch((error: unknown) => log(`worker watchdog: ${(error as Error).message}`))
      .finally(() => {
        probing = undefined;
      });
  }, settings.probeMs ?? 1_000);
  timer.unref();

  let stopped = false;
  return {
    executorId: settings.executorId,
    async stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      await probing;
      await DBOS.shutdown();
      await probe.end().catch(() => {});
      await own.end().catch(() => {});
    },
  };
}

/** What a submitting process holds: it puts jobs on the queue and cancels them, runs none. */
export interface DbosSubmitter {
  /**
   * Queues the job under the workflow id `workflowId` (default the job id; a job an approval put
   * back on the queue has its own): a second enqueue of one workflow id does nothing.
   */
  enqueue(jobId: string, workflowId?: string): Promise<void>;
  /**
   * Cancels the job's workflow: a queued one never starts, a running one's signal aborts.
   * Resolves whether DBOS holds a workflow for the job (false: it was never queued here).
   */
  cancel(jobId: string): Promise<boolean>;
  close(): Promise<void>;
}

/**
 * Whether DBOS's schema is in the database at `url`: a process with no queue of its own looks
 * before it cancels a workflow, so a database no queue ever used gets no DBOS tables.
 */
export async function hasDbosSchema(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => {});
  await client.connect();
  try {
    const { rows } = await client.query<{ present: boolean }>(
      'SELECT to_regnamespace($1) IS NOT NULL AS present',
      [DBOS_SCHEMA],
    );
    return rows[0]?.present === true;
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * Jobs are queued with no application version: DBOS gives them to workers of the latest one, and
 * the worker re-admits each job's recorded plan against its own capabilities.
 */
export async function createDbosSubmitter(options: {
  readonly url: string;
}): Promise<DbosSubmitter> {
  const { DBOS, DBOSClient } = await loadSdk();
  // A submitter may come first (a server started before any worker): DBOS's tables are made
  // here too, taking turns with launching workers (migrations running together deadlock).
  const lock = new pg.Client({ connectionString: options.url });
  lock.on('error', () => {});
  await lock.connect();
  try {
    await takeTurn(lock);
    await DBOS.migrate(options.url, { schemaName: DBOS_SCHEMA });
  } finally {
    await lock.end().catch(() => {});
  }
  const client = await DBOSClient.create({
    ...dbosDatabase(options.url),
    systemDatabaseSchemaName: DBOS_SCHEMA,
    applicationName: 'warrant',
  });
  return {
    async enqueue(jobId, workflowId = jobId) {
      await client.enqueue(
        {
          queueName: QUEUE_NAME,
          workflowName: WORKFLOW_NAME,
          workflowID: workflowId,
        },
        jobId,
      );
    },
    async cancel(jobId) {
      await client.cancelWorkflow(jobId);
      return (await client.getWorkflow(jobId)) !== undefined;
    },
    async close() {
      await client.destroy();
    },
  };
}
