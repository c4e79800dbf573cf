/**
 * The queue of a runtime with `queue: { engine: 'dbos' }` (docs/api.md, "Workers"): submitted
 * jobs go on DBOS Transact's queue in the store's PostgreSQL database, and the process's worker
 * (`runtime.startWorker()`) takes up jobs any process queued. The engine module, and with it the
 * DBOS SDK, loads on first use.
 */
import { hostname } from 'node:os';
import { listCapabilities } from '../capabilities/descriptors.js';
import { describeValue } from '../errors/describe-value.js';
import { ErrorCode } from '../errors/error-codes.js';
import { createError } from '../errors/warrant-error.js';
import { readField } from '../values/hostile-reads.js';
import { applicationVersion } from '../workers/app-version.js';
import type * as DbosEngine from '../workers/dbos-engine.js';
import type { DbosSubmitter, DbosWorker, RunJobById } from '../workers/dbos-engine.js';

type Engine = typeof DbosEngine;
let engine: Promise<Engine> | undefined;
const loadEngine = (): Promise<Engine> => (engine ??= import('../workers/dbos-engine.js'));

/** Options of `runtime.startWorker()`. */
export interface StartWorkerOptions {
  /**
   * This worker's id: unique among live workers, the same across its restarts (a restart takes
   * up the jobs it had started). Default: the host name.
   */
  id?: string;
  /** Jobs this worker runs at once (the queue's per-worker limit, shared by all). Default 4. */
  concurrency?: number;
  /**
   * Mixed into the application version besides the registered capabilities and their versions,
   * e.g. a digest of the policy file (`warrant worker --policy` passes it).
   */
  version?: string;
}

/** A running worker. */
export interface Worker {
  readonly id: string;
  /** The application version it runs (`warrant-<16 hex>`). */
  readonly version: string;
  /** Stops taking jobs; resolves once DBOS has stopped. Jobs still running are left to peers. */
  stop(): Promise<void>;
}

function invalidWorkerOption(message: string): TypeError {
  return createError(TypeError, ErrorCode.RUNTIME_OPTIONS_INVALID, message);
}

/** `startWorker` options as checked. */
export type WorkerSettings = StartWorkerOptions & { concurrency: number; id: string };

/** `startWorker(options)` checked: `id` a non-empty string of at most 200 characters, `concurrency` 1 to 1,000. */
export function readWorkerOptions(options: unknown, defaultConcurrency: number): WorkerSettings {
  if (typeof options !== 'object' || options === null)
    throw invalidWorkerOption(
      `startWorker() options must be an object, got ${describeValue(options)}`,
    );
  const field = (key: string) =>
    readField(options, key, (problem) =>
      invalidWorkerOption(`startWorker() options.${key} ${problem}`),
    );
  const id = field('id');
  const concurrency = field('concurrency') ?? defaultConcurrency;
  const version = field('version');
  if (id !== undefined && (typeof id !== 'string' || id === '' || id.length > 200))
    throw invalidWorkerOption(
      `startWorker() options.id must be a non-empty string of at most 200 characters, got ${describeValue(id)}`,
    );
  if (
    typeof concurrency !== 'number' ||
    !Number.isSafeInteger(concurrency) ||
    concurrency < 1 ||
    concurrency > 1_000
  )
    throw invalidWorkerOption(
      `startWorker() options.concurrency must be an integer from 1 to 1000, got ${describeValue(concurrency)}`,
    );
  if (version !== undefined && typeof version !== 'string')
    throw invalidWorkerOption(
      `startWorker() options.version must be a string, got ${describeValue(version)}`,
    );
  return {
    concurrency,
    // Default: the host name (docs/api.md, "Workers").
    id: (id as string | undefined) ?? hostname(),
    ...(version !== undefined && { version: version as string }),
  };
}

/** How often a worker queues jobs recorded `queued` with no workflow yet (a crash between). */
const SWEEP_MS = 5_000;

export class DbosQueue {
  readonly #url: string;
  #submitter: Promise<DbosSubmitter> | undefined;
  #worker: DbosWorker | undefined;
  #sweep: ReturnType<typeof setInterval> | undefined;

  constructor(url: string) {
    this.#url = url;
  }

  #client(): Promise<DbosSubmitter> {
    this.#submitter ??= loadEngine().then((loaded) =>
      loaded.createDbosSubmitter({ url: this.#url }),
    );
    return this.#submitter;
  }

  /**
   * Puts a recorded job on the queue under `entryId` (default its id; a job an approval put back
   * has its own, `queueEntryId`); a second call for one entry does nothing.
   */
  async enqueue(jobId: string, entryId: string = jobId): Promise<void> {
    await (await this.#client()).enqueue(jobId, entryId);
  }

  /**
   * Cancels the job's workflow: queued, it never starts (Warrant's cancel record decides).
   * Resolves whether DBOS holds a workflow for the job; in a database no queue ever used, false
   * without making DBOS's tables there.
   */
  async cancel(jobId: string): Promise<boolean> {
    if (this.#submitter === undefined && !(await (await loadEngine()).hasDbosSchema(this.#url)))
      return false;
    return (await this.#client()).cancel(jobId);
  }

  /**
   * Starts this process's worker. `run` takes up one job by id, as the record says; `queued`
   * lists jobs recorded queued for a while, with their entry ids (the sweep queues them again: a
   * second enqueue of an entry does nothing, so this only catches jobs whose enqueue never
   * happened).
   */
  async startWorker(
    options: StartWorkerOptions & { concurrency: number; id: string },
    run: RunJobById,
    queued: () => Promise<readonly { readonly jobId: string; readonly entryId: string }[]>,
    log: (line: string) => void,
  ): Promise<Worker> {
    if (this.#worker !== undefined) throw new Error('this runtime already runs a worker');
    const loaded = await loadEngine();
    const version = applicationVersion(listCapabilities(), options.version);
    const { id } = options;
    const worker = await loaded.startDbosWorker({
      url: this.#url,
      executorId: id,
      appVersion: version,
      concurrency: options.concurrency,
      run,
      log,
    });
    this.#worker = worker;
    const sweep = async () => {
      for (const { jobId, entryId } of await queued()) await this.enqueue(jobId, entryId);
    };
    this.#sweep = setInterval(
      () => void sweep().catch((error: unknown) => log(`queue sweep: ${String(error)}`)),
      SWEEP_MS,
    );
    this.#sweep.unref();
    return {
      id,
      version,
      stop: () => this.#stopWorker(),
    };
  }

  async #stopWorker(): Promise<void> {
    clearInterval(this.#sweep);
    this.#sweep = undefined;
    await this.#worker?.stop();
  }

  async close(): Promise<void> {
    await this.#stopWorker();
    const submitter = this.#submitter;
    this.#submitter = undefined;
    if (submitter !== undefined) await (await submitter.catch(() => undefined))?.close();
  }
}
