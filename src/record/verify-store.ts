/**
 * Verification of a whole durable store (docs/api.md, "runtime.verifyStore"): the checkpoint
 * chain recomputed, every event a checkpoint sealed found unchanged in its job, and every job's
 * own record verified (verify-record.ts). Every problem found is reported, not only the first;
 * nothing here throws for a broken store.
 */
import { ErrorCode } from '../errors/error-codes.js';
import { KEYED_PREFIX } from './event-chain.js';
import {
  checkpointHash,
  ledgerLeaf,
  merkleRoot,
  MISSING_ENTRY,
  UNCHAINED_ENTRY,
  type CheckpointHead,
} from './checkpoint.js';
import type { Job } from '../jobs/job.js';
import type {
  Checkpoint,
  ConsumedApproval,
  LedgerEntry,
  SealedApproval,
  SealedEntry,
  StoreSeals,
} from '../jobs/job-store.js';
import { NO_CHAIN, verifyRecord } from './verify-record.js';
import { KEYED_WITHOUT_KEY } from './missing-key.js';

export interface StoreProblem {
  /**
   * What is wrong: a `checkpoint` of the chain, a `since` head not in it, a job `gone` that a
   * checkpoint sealed, a job whose `sealed` events are not as sealed, a job's `record` (its own
   * chain, events and digests, as verifyJob reports it), an entry of the `ledger` of consumed
   * approvals removed or changed after a checkpoint sealed it.
   */
  readonly kind: 'checkpoint' | 'since' | 'gone' | 'sealed' | 'record' | 'ledger';
  readonly reason: string;
  readonly jobId?: string;
  readonly checkpoint?: number;
  /** For a `record` problem: as verifyJob reports it. */
  readonly eventIndex?: number;
  readonly stepId?: string;
}

export interface StoreVerification {
  /** True when no problem was found. */
  readonly ok: boolean;
  /** The last checkpoint stored; absent before the first. */
  readonly head?: CheckpointHead;
  readonly checkpoints: number;
  /** Jobs stored. */
  readonly jobs: number;
  /** Events sealed by the checkpoints. */
  readonly sealedEvents: number;
  /** Jobs with events committed since the last checkpoint (not yet sealed). */
  readonly unsealed: number;
  /**
   * Jobs recorded before the event chain (schema version 1 or 2), as the store's chain origin
   * sealed them: nothing to check them with. Any other job without a chain is a problem.
   */
  readonly unchained: number;
  readonly problems: readonly StoreProblem[];
}

export interface VerifyStoreOptions {
  /** A head kept elsewhere earlier: it must still be a checkpoint of this store. */
  readonly since?: CheckpointHead;
}

function problem(
  kind: StoreProblem['kind'],
  reason: string,
  jobId?: string,
  checkpoint?: number,
): StoreProblem {
  return {
    kind,
    reason,
    ...(jobId === undefined ? {} : { jobId }),
    ...(checkpoint === undefined ? {} : { checkpoint }),
  };
}

function checkCheckpoints(
  checkpoints: readonly Checkpoint[],
  entriesOf: ReadonlyMap<number, SealedEntry[]>,
  approvalsOf: ReadonlyMap<number, SealedApproval[]>,
  auditKey: string | undefined,
): StoreProblem[] {
  const problems: StoreProblem[] = [];
  checkpoints.forEach((checkpoint, index) => {
    const { seq } = checkpoint;
    const previous = index === 0 ? '' : (checkpoints[index - 1] as Checkpoint).hash;
    if (seq !== index + 1) {
      problems.push(
        problem(
          'checkpoint',
          `checkpoint ${index + 1} is missing (found ${seq} in its place): checkpoints were deleted`,
          undefined,
          seq,
        ),
      );
    }
    if (checkpoint.previous !== previous)
      problems.push(
        problem(
          'checkpoint',
          `checkpoint ${seq} does not follow the checkpoint before it`,
          undefined,
          seq,
        ),
      );
    if (merkleRoot(entriesOf.get(seq) ?? [], approvalsOf.get(seq)) !== checkpoint.root)
      problems.push(
        problem(
          'checkpoint',
          `the entries of checkpoint ${seq} do not match its root: they were changed, added or removed`,
          undefined,
          seq,
        ),
      );
    const keyed = checkpoint.hash.startsWith(KEYED_PREFIX);
    if (keyed && auditKey === undefined) {
      problems.push(
        problem('checkpoint', `checkpoint ${seq} is ${KEYED_WITHOUT_KEY}`, undefined, seq),
      );
    } else if (!keyed && auditKey !== undefined) {
      problems.push(
        problem(
          'checkpoint',
          `checkpoint ${seq} is not keyed: it was written without the audit key, or rewritten`,
          undefined,
          seq,
        ),
      );
    } else if (checkpointHash(checkpoint, auditKey) !== checkpoint.hash) {
      problems.push(
        problem('checkpoint', `checkpoint ${seq} does not match its hash`, undefined, seq),
      );
    }
  });
  return problems;
}

/**
 * The store's chain origin (checkpoint.ts): the first checkpoint with no leaves but the jobs it
 * seals as recorded before the chain, and those jobs with their numbers of events. A second one
 * is a problem: the store's mark of its origin was removed and the store opened again, so that
 * jobs without a chain written since would pass as recorded before it.
 */
function findOrigin(
  checkpoints: readonly Checkpoint[],
  entriesOf: ReadonlyMap<number, SealedEntry[]>,
  approvalsOf: ReadonlyMap<number, SealedApproval[]>,
): { origin: number | undefined; unchained: Map<string, number>; problems: StoreProblem[] } {
  let origin: number | undefined;
  const unchained = new Map<string, number>();
  const problems: StoreProblem[] = [];
  for (const { seq, root } of checkpoints) {
    const entries = entriesOf.get(seq) ?? [];
    if ((approvalsOf.get(seq)?.length ?? 0) > 0) continue;
    if (!entries.every((entry) => entry.hash === UNCHAINED_ENTRY)) continue;
    // A checkpoint whose entries were deleted is reported by its root, not taken as an origin.
    if (merkleRoot(entries) !== root) continue;
    if (origin === undefined) {
      origin = seq;
      for (const entry of entries) unchained.set(entry.jobId, entry.events);
    } else {
      problems.push(
        problem(
          'checkpoint',
          `checkpoint ${seq} is a second chain origin (the first is checkpoint ${origin}): the store's mark of its origin was removed and the store opened again; only the jobs checkpoint ${origin} sealed are taken as recorded before the chain`,
          undefined,
          seq,
        ),
      );
    }
  }
  return { origin, unchained, problems };
}

/** Why a job without a chain that the origin did not seal as it is now is not intact. */
function notChained(origin: number | undefined, before: number | undefined): string {
  if (before !== undefined)
    return `no chain, and events the store's chain origin (checkpoint ${origin}) did not seal: the job had ${before} when the store began keeping chains; events without a hash were added`;
  const since =
    origin === undefined ? 'keeps chains' : `has kept chains since checkpoint ${origin}`;
  return `no chain: its events carry no hash, and it was not recorded before the chain (the store ${since}): not written by Warrant (copied or forged), or its hashes were removed`;
}

/** The first sealed event of a job that is not as its checkpoint sealed it. */
function checkSealed(
  jobId: string,
  entries: readonly SealedEntry[],
  hashes: readonly (string | null)[],
): StoreProblem | undefined {
  for (const entry of entries) {
    if (hashes.length < entry.events) {
      return problem(
        'sealed',
        `job ${jobId} has ${hashes.length} events, checkpoint ${entry.checkpoint} sealed ${entry.events}: events were removed, or an older copy restored`,
        jobId,
        entry.checkpoint,
      );
    }
    // Recorded before the chain: no hash to compare (findOrigin says which origin counts).
    if (entry.hash === UNCHAINED_ENTRY) continue;
    if (entry.hash === MISSING_ENTRY) {
      return problem(
        'sealed',
        `event ${entry.events - 1} of job ${jobId} had no chain hash when checkpoint ${entry.checkpoint} sealed it: the store keeps chains, so it was not written by Warrant (copied or forged), or its hash was removed`,
        jobId,
        entry.checkpoint,
      );
    }
    if (hashes[entry.events - 1] !== entry.hash) {
      return problem(
        'sealed',
        `event ${entry.events - 1} of job ${jobId} is not the one checkpoint ${entry.checkpoint} sealed: events were changed, reordered or restored from an older copy`,
        jobId,
        entry.checkpoint,
      );
    }
  }
  return undefined;
}

/** Every ledger entry a checkpoint sealed is in the ledger, unchanged. */
function checkLedger(
  sealed: readonly SealedApproval[],
  ledger: readonly LedgerEntry[],
): StoreProblem[] {
  const held = new Map(ledger.map((entry) => [`${entry.jobId}\n${entry.position}`, entry]));
  const problems: StoreProblem[] = [];
  for (const approval of sealed) {
    const { jobId, position, checkpoint } = approval;
    const entry = held.get(`${jobId}\n${position}`);
    const what = `the ledger entry of the approval request at event ${position} of job ${jobId}, sealed by checkpoint ${checkpoint},`;
    if (entry === undefined) {
      problems.push(
        problem('ledger', `${what} is gone: a consumed approval was removed`, jobId, checkpoint),
      );
    } else if (ledgerLeaf(entry) !== approval.hash) {
      problems.push(
        problem('ledger', `${what} was changed: it is not as sealed`, jobId, checkpoint),
      );
    }
  }
  return problems;
}

/** A job as `verifySeals` reads it: the record, its chain hashes and its consumed requests. */
export interface ReadJobChain {
  readonly job: Job;
  readonly hashes: readonly (string | null)[] | undefined;
  readonly consumed?: readonly ConsumedApproval[] | undefined;
}

/**
 * Verifies a store from its seals; `readChain` reads one job with its chain hashes. A record
 * that cannot be read (JOB_RECORD_UNREADABLE) is a problem; any other error rejects.
 */
export async function verifySeals(
  seals: StoreSeals,
  readChain: (id: string) => Promise<ReadJobChain | undefined>,
  auditKey: string | undefined,
  options: VerifyStoreOptions = {},
): Promise<StoreVerification> {
  const { checkpoints } = seals;
  const entriesOf = new Map<number, SealedEntry[]>();
  const sealedOf = new Map<string, SealedEntry[]>();
  for (const entry of seals.entries) {
    const byCheckpoint = entriesOf.get(entry.checkpoint);
    if (byCheckpoint === undefined) entriesOf.set(entry.checkpoint, [entry]);
    else byCheckpoint.push(entry);
    const byJob = sealedOf.get(entry.jobId);
    if (byJob === undefined) sealedOf.set(entry.jobId, [entry]);
    else byJob.push(entry);
  }
  const approvalsOf = new Map<number, SealedApproval[]>();
  for (const approval of seals.approvals ?? []) {
    const byCheckpoint = approvalsOf.get(approval.checkpoint);
    if (byCheckpoint === undefined) approvalsOf.set(approval.checkpoint, [approval]);
    else byCheckpoint.push(approval);
  }
  const problems = checkCheckpoints(checkpoints, entriesOf, approvalsOf, auditKey);
  const origin = findOrigin(checkpoints, entriesOf, approvalsOf);
  problems.push(...origin.problems);
  problems.push(...checkLedger(seals.approvals ?? [], seals.ledger ?? []));
  const last = checkpoints.at(-1);
  const head = last === undefined ? undefined : { seq: last.seq, hash: last.hash };
  if (options.since !== undefined) {
    const { seq, hash } = options.since;
    const kept = checkpoints.find((checkpoint) => checkpoint.seq === seq);
    if (kept === undefined) {
      problems.push(
        problem(
          'since',
          `checkpoint ${seq} (the head kept) is not in the store, whose head is ${head === undefined ? 'none' : head.seq}: the store was rolled back`,
          undefined,
          seq,
        ),
      );
    } else if (kept.hash !== hash) {
      problems.push(
        problem(
          'since',
          `checkpoint ${seq} is not the head kept: the store was rolled back or its checkpoints rewritten`,
          undefined,
          seq,
        ),
      );
    }
  }

  let unchained = 0;
  const stored = new Set(seals.jobIds);
  for (const jobId of sealedOf.keys()) {
    if (!stored.has(jobId)) {
      const first = (sealedOf.get(jobId) as SealedEntry[])[0] as SealedEntry;
      problems.push(
        problem(
          'gone',
          `job ${jobId} is gone: checkpoint ${first.checkpoint} sealed ${first.events} of its events`,
          jobId,
          first.checkpoint,
        ),
      );
    }
  }
  for (const jobId of seals.jobIds) {
    let read: ReadJobChain | undefined;
    try {
      read = await readChain(jobId);
    } catch (error) {
      if ((error as { code?: unknown } | null)?.code !== ErrorCode.JOB_RECORD_UNREADABLE)
        throw error;
      problems.push(problem('record', (error as Error).message, jobId));
      continue;
    }
    const sealed = sealedOf.get(jobId);
    if (read === undefined) {
      if (sealed !== undefined)
        problems.push(problem('gone', `job ${jobId} is gone while it was being verified`, jobId));
      continue;
    }
    const sealedProblem =
      sealed === undefined ? undefined : checkSealed(jobId, sealed, read.hashes ?? []);
    if (sealedProblem !== undefined) {
      problems.push(sealedProblem);
      continue;
    }
    const verification = verifyRecord(read.job, read.hashes, auditKey, read.consumed);
    if (verification.ok) continue;
    if (verification.reason === NO_CHAIN) {
      const before = origin.unchained.get(jobId);
      if (before !== undefined && before === read.hashes?.length) {
        unchained++;
      } else {
        problems.push(problem('record', notChained(origin.origin, before), jobId));
      }
      continue;
    }
    problems.push({
      ...problem('record', verification.reason, jobId),
      ...(verification.eventIndex === undefined ? {} : { eventIndex: verification.eventIndex }),
      ...(verification.stepId === undefined ? {} : { stepId: verification.stepId }),
    });
  }
  return {
    ok: problems.length === 0,
    ...(head === undefined ? {} : { head }),
    checkpoints: checkpoints.length,
    jobs: seals.jobIds.length,
    sealedEvents: checkpoints.reduce((sum, checkpoint) => sum + checkpoint.events, 0),
    unsealed: seals.unsealed,
    unchained,
    problems,
  };
}
