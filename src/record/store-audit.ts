/**
 * The store-wide checks behind `runtime.verifyStore` (docs/api.md): whichever store it is given.
 * A durable store's checkpoints and sealed events are checked (verify-store.ts); the memory store
 * keeps no checkpoints (it lives and dies with its process), so its jobs' digests alone.
 */
import { ErrorCode } from '../errors/error-codes.js';
import { createError } from '../errors/warrant-error.js';
import { merkleProof, type CheckpointHead } from './checkpoint.js';
import { chainHashes } from './event-chain.js';
import { buildEvidence, type EvidenceBundle, type EvidenceCheckpoint } from './evidence.js';
import type { JobStore, StoreSeals } from '../jobs/job-store.js';
import { hasCheckpoints, hasSealScan } from '../jobs/store-parts.js';
import { verifyScan, verifySeals, type StoreVerification } from './verify-store.js';

/** `'<seq>:<hash>'`, as `verify --all` prints it (`head: <seq> <hash>`) with a colon. */
export function parseHead(text: unknown): CheckpointHead {
  const match = typeof text === 'string' ? /^([1-9]\d{0,15}):(\S+)$/.exec(text) : null;
  if (match === null)
    throw createError(
      TypeError,
      ErrorCode.STORE_HEAD_INVALID,
      'A kept head must be <seq>:<hash>, as `warrant jobs verify --all` prints it',
    );
  return { seq: Number(match[1]), hash: match[2] as string };
}

export async function verifyStoreOf(
  store: JobStore,
  auditKey: string | undefined,
  since: CheckpointHead | undefined,
): Promise<StoreVerification> {
  const options = since === undefined ? {} : { since };
  if (!hasCheckpoints(store)) {
    const jobs = await store.list({});
    const seals: StoreSeals = {
      checkpoints: [],
      entries: [],
      jobIds: jobs.map((job) => job.id),
      unsealed: 0,
    };
    const byId = new Map(jobs.map((job) => [job.id, job]));
    return verifySeals(
      seals,
      (id) => {
        const job = byId.get(id);
        return Promise.resolve(job === undefined ? undefined : { job, hashes: undefined });
      },
      auditKey,
      options,
    );
  }
  // A store that reads its seals a page at a time: memory bounded by a page (docs/api.md, "Stores").
  if (hasSealScan(store)) return verifyScan(await store.scanSeals(), auditKey, options);
  const readChain = store.readChain.bind(store);
  const seals = await store.readSeals();
  return verifySeals(seals, async (id) => readChain(id), auditKey, options);
}

/**
 * One job's evidence bundle (evidence.ts); undefined for an unknown id. A durable store seals
 * what is unsealed first, so the bundle carries the checkpoint that covers the whole record.
 */
export async function exportJobOf(
  store: JobStore,
  id: string,
  auditKey: string | undefined,
  signingKey: string | undefined,
): Promise<EvidenceBundle | undefined> {
  if (!hasCheckpoints(store)) {
    const job = await store.get(id);
    if (job === undefined) return undefined;
    return buildEvidence(job, chainHashes('', job.events, auditKey), undefined, signingKey);
  }
  await store.seal();
  const read = await store.readChain(id);
  if (read === undefined) return undefined;
  const seal = await store.readSeal(id);
  const entry = seal?.entries.find((sealed) => sealed.jobId === id);
  let checkpoint: EvidenceCheckpoint | undefined;
  if (seal !== undefined && entry !== undefined) {
    const { seq, previous, root, events, at, hash } = seal.checkpoint;
    checkpoint = {
      seq,
      previous,
      root,
      events,
      at,
      hash,
      entry: { jobId: entry.jobId, events: entry.events, hash: entry.hash },
      proof: merkleProof(seal.entries, id, seal.approvals) ?? [],
    };
  }
  return buildEvidence(read.job, read.hashes, checkpoint, signingKey);
}
