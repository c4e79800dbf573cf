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
  ScannedJob,
  SealedApproval,
  SealedEntry,
  StoreScan,
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

/**
 * The checks of the chain of checkpoints, each checkpoint's in turn: in its place, after the one
 * before, its root (`rootOf`: the root of its entries as stored) and its hash.
 */
function checkCheckpoints(
  checkpoints: readonly Checkpoint[],
  rootOf: (seq: number) => string,
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
    if (rootOf(seq) !== checkpoint.root)
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

/** What the entries of one checkpoint give: their root, and whether they are all unchained. */
interface EntriesSeen {
  readonly root: string;
  /** The jobs and events of its entries when every one is unchained (an origin's). */
  readonly unchained: Map<string, number> | undefined;
}

/** The root of a checkpoint's entries, and the jobs it seals as unchained when all are. */
function seeEntries(
  entries: readonly SealedEntry[],
  approvals: readonly SealedApproval[] | undefined,
): EntriesSeen {
  const root = merkleRoot(entries, approvals);
  if (!entries.every((entry) => entry.hash === UNCHAINED_ENTRY))
    return { root, unchained: undefined };
  return { root, unchained: new Map(entries.map((entry) => [entry.jobId, entry.events])) };
}

/**
 * The store's chain origin (checkpoint.ts): the first checkpoint with no leaves but the jobs it
 * seals as recorded before the chain, and those jobs with their numbers of events. A second one
 * is a problem: the store's mark of its origin was removed and the store opened again, so that
 * jobs without a chain written since would pass as recorded before it.
 */
function findOrigin(
  checkpoints: readonly Checkpoint[],
  seen: (seq: number) => EntriesSeen,
  approvalsOf: ReadonlyMap<number, SealedApproval[]>,
): { origin: number | undefined; unchained: Map<string, number>; problems: StoreProblem[] } {
  let origin: number | undefined;
  let unchained = new Map<string, number>();
  const problems: StoreProblem[] = [];
  for (const { seq, root } of checkpoints) {
    if ((approvalsOf.get(seq)?.length ?? 0) > 0) continue;
    const entries = seen(seq);
    if (entries.unchained === undefined) continue;
    // A checkpoint whose entries were deleted is reported by its root, not taken as an origin.
    if (entries.root !== root) continue;
    if (origin === undefined) {
      origin = seq;
      unchained = entries.unchained;
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

/** A job as verifyScan reads it: a scanned job, or one of a store that keeps no chain. */
type JobRead = Omit<ScannedJob, 'chain'> & { readonly chain: ReadJobChain | undefined };

/** A scan, or the seals of a store without one read as a scan (verifySeals). */
interface ScanOf extends Omit<StoreScan, 'chains'> {
  chains(): AsyncIterable<readonly JobRead[]> | Iterable<readonly JobRead[]>;
}

/** A job without a chain, told apart once the origin is known (after the entries are read). */
interface WithoutChain {
  readonly jobId: string;
  readonly events: number | undefined;
}

/** The checks of one job read by the scan; a job without a chain waits for the origin. */
function checkJob(
  scanned: JobRead,
  auditKey: string | undefined,
): StoreProblem | WithoutChain | undefined {
  const { id: jobId, chain, sealed } = scanned;
  if (scanned.unreadable !== undefined) return problem('record', scanned.unreadable, jobId);
  if (chain === undefined) {
    return sealed.length > 0
      ? problem('gone', `job ${jobId} is gone while it was being verified`, jobId)
      : undefined;
  }
  const sealedProblem =
    sealed.length === 0 ? undefined : checkSealed(jobId, sealed, chain.hashes ?? []);
  if (sealedProblem !== undefined) return sealedProblem;
  const verification = verifyRecord(chain.job, chain.hashes, auditKey, chain.consumed);
  if (verification.ok) return undefined;
  if (verification.reason === NO_CHAIN) return { jobId, events: chain.hashes?.length };
  return {
    ...problem('record', verification.reason, jobId),
    ...(verification.eventIndex === undefined ? {} : { eventIndex: verification.eventIndex }),
    ...(verification.stepId === undefined ? {} : { stepId: verification.stepId }),
  };
}

/**
 * Verifies a store read by a scan (job-store.ts, `StoreScan`): the jobs a page at a time, each
 * checked as read, then the checkpoints' entries a page at a time, each checkpoint's root computed
 * as its last entry is read. Memory holds a page, the checkpoints, the ledger and the problems
 * found, never every job or entry. A record that cannot be read (JOB_RECORD_UNREADABLE) is a
 * problem; any other error rejects.
 */
export async function verifyScan(
  scan: ScanOf,
  auditKey: string | undefined,
  options: VerifyStoreOptions = {},
): Promise<StoreVerification> {
  const { checkpoints } = scan;
  const approvalsOf = new Map<number, SealedApproval[]>();
  for (const approval of scan.approvals ?? []) {
    const byCheckpoint = approvalsOf.get(approval.checkpoint);
    if (byCheckpoint === undefined) approvalsOf.set(approval.checkpoint, [approval]);
    else byCheckpoint.push(approval);
  }

  const records: (StoreProblem | WithoutChain)[] = [];
  for await (const page of scan.chains()) {
    for (const scanned of page) {
      const found = checkJob(scanned, auditKey);
      if (found !== undefined) records.push(found);
    }
  }

  // The entries, by checkpoint: each checkpoint's root once its last entry is read.
  const listed = new Set(checkpoints.map((checkpoint) => checkpoint.seq));
  const seenOf = new Map<number, EntriesSeen>();
  const gone: StoreProblem[] = [];
  const goneIds = new Set<string>();
  let current: number | undefined;
  let group: SealedEntry[] = [];
  const close = () => {
    if (current !== undefined && listed.has(current))
      seenOf.set(current, seeEntries(group, approvalsOf.get(current)));
    group = [];
  };
  for await (const page of scan.entries()) {
    for (const entry of page) {
      if (entry.checkpoint !== current) {
        close();
        current = entry.checkpoint;
      }
      group.push(entry);
      if (!entry.stored && !goneIds.has(entry.jobId)) {
        goneIds.add(entry.jobId);
        gone.push(
          problem(
            'gone',
            `job ${entry.jobId} is gone: checkpoint ${entry.checkpoint} sealed ${entry.events} of its events`,
            entry.jobId,
            entry.checkpoint,
          ),
        );
      }
    }
  }
  close();
  const seen = (seq: number): EntriesSeen =>
    seenOf.get(seq) ?? seeEntries([], approvalsOf.get(seq));

  const problems = checkCheckpoints(checkpoints, (seq) => seen(seq).root, auditKey);
  const origin = findOrigin(checkpoints, seen, approvalsOf);
  problems.push(...origin.problems);
  problems.push(...checkLedger(scan.approvals ?? [], scan.ledger ?? []));
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
  problems.push(...gone);

  let unchained = 0;
  for (const found of records) {
    if ('kind' in found) {
      problems.push(found);
      continue;
    }
    // Recorded before the chain, as the origin sealed it; any other job without a chain is not.
    const before = origin.unchained.get(found.jobId);
    if (before !== undefined && before === found.events) unchained++;
    else problems.push(problem('record', notChained(origin.origin, before), found.jobId));
  }
  return {
    ok: problems.length === 0,
    ...(head === undefined ? {} : { head }),
    checkpoints: checkpoints.length,
    jobs: scan.jobs,
    sealedEvents: checkpoints.reduce((sum, checkpoint) => sum + checkpoint.events, 0),
    unsealed: scan.unsealed,
    unchained,
    problems,
  };
}

/**
 * Verifies a store from its seals read whole; `readChain` reads one job with its chain hashes
 * (a store without `scanSeals`: store-audit.ts). The same checks as verifyScan, which it feeds.
 */
export async function verifySeals(
  seals: StoreSeals,
  readChain: (id: string) => Promise<ReadJobChain | undefined>,
  auditKey: string | undefined,
  options: VerifyStoreOptions = {},
): Promise<StoreVerification> {
  const sealedOf = new Map<string, SealedEntry[]>();
  for (const entry of seals.entries) {
    const byJob = sealedOf.get(entry.jobId);
    if (byJob === undefined) sealedOf.set(entry.jobId, [entry]);
    else byJob.push(entry);
  }
  const stored = new Set(seals.jobIds);
  async function* chains(): AsyncGenerator<JobRead[]> {
    for (const id of seals.jobIds) {
      const sealed = sealedOf.get(id) ?? [];
      try {
        const read = await readChain(id);
        yield [{ id, chain: read, sealed }];
      } catch (error) {
        if ((error as { code?: unknown } | null)?.code !== ErrorCode.JOB_RECORD_UNREADABLE)
          throw error;
        yield [{ id, chain: undefined, unreadable: (error as Error).message, sealed }];
      }
    }
  }
  return verifyScan(
    {
      checkpoints: seals.checkpoints,
      jobs: seals.jobIds.length,
      unsealed: seals.unsealed,
      ...(seals.approvals === undefined ? {} : { approvals: seals.approvals }),
      ...(seals.ledger === undefined ? {} : { ledger: seals.ledger }),
      chains,
      entries: () => [
        seals.entries.map((entry) => ({ ...entry, stored: stored.has(entry.jobId) })),
      ],
    },
    auditKey,
    options,
  );
}
