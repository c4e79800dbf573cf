/**
 * Evidence bundles (docs/api.md, "runtime.exportJob"): one job's record exported as one JSON
 * document that anyone can check offline, with no store: the record, the chain hash of each of its
 * events, the chain head, the checkpoint that sealed it with the Merkle path of the job's entry to
 * the checkpoint's root (checkpoint.ts), and, with a signing key, an Ed25519 signature (Node's own
 * crypto) over the digests of those parts, so a changed part is named.
 */
import { createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import { ErrorCode } from '../errors/error-codes.js';
import { createError } from '../errors/warrant-error.js';
import { describeThrown } from '../errors/describe-value.js';
import { canonicalJson, digestJson } from '../json/canonical-json.js';
import { toJsonSafe } from '../json/json-value.js';
import { checkpointHash, rootOfProof, type ProofStep } from './checkpoint.js';
import { KEYED_PREFIX } from './event-chain.js';
import { KEYED_BUNDLE_WITHOUT_KEY } from './missing-key.js';
import type { Job } from '../jobs/job.js';
import type { Checkpoint, CheckpointEntry } from '../jobs/job-store.js';
import { verifyRecord } from './verify-record.js';

export const EVIDENCE_FORMAT = 'warrant.evidence/1';

/** The checkpoint that sealed the job, and the proof of the job's entry in it. */
export interface EvidenceCheckpoint extends Checkpoint {
  readonly entry: CheckpointEntry;
  readonly proof: readonly ProofStep[];
}

export interface EvidenceSignature {
  readonly algorithm: 'ed25519';
  /** The signer's public key (SPKI PEM), for reference: trust the key you were given. */
  readonly publicKey: string;
  /** The digest of each part as signed. */
  readonly digests: { readonly job: string; readonly hashes: string; readonly checkpoint: string };
  /** Base64 Ed25519 signature over the JCS of `{ format, exportedAt, head, digests }`. */
  readonly value: string;
}

export interface EvidenceBundle {
  readonly format: typeof EVIDENCE_FORMAT;
  readonly exportedAt: string;
  /** The record as `getJob` returns it. */
  readonly job: Job;
  /** The chain hash of each event of `job.events`, in order (null: recorded before the chain). */
  readonly hashes: readonly (string | null)[];
  /** The last of `hashes`. */
  readonly head: string | null;
  /** Absent when no checkpoint has sealed the job (the memory store keeps none). */
  readonly checkpoint?: EvidenceCheckpoint;
  readonly signature?: EvidenceSignature;
}

export interface EvidenceProblem {
  /** The part that changed: `job`, `hashes`, `head`, `checkpoint`, `signature` or `format`. */
  readonly part: string;
  readonly reason: string;
}

export interface EvidenceVerification {
  readonly ok: boolean;
  /** What was checked: the chain recomputed, the checkpoint, the signature. */
  readonly chain: 'recomputed' | 'keyed (no audit key: not recomputed)';
  readonly checkpoint: 'verified' | 'absent' | 'keyed (no audit key: not recomputed)';
  readonly signature: 'verified' | 'absent' | 'not checked (no public key)';
  readonly problems: readonly EvidenceProblem[];
}

export interface VerifyEvidenceOptions {
  /** The signer's Ed25519 public key (PEM); the bundle must then carry a valid signature. */
  readonly publicKey?: string | undefined;
  /** The store's audit key, to recompute a keyed (HMAC) chain and checkpoint. */
  readonly auditKey?: string | undefined;
}

function keyInvalid(message: string, cause?: unknown): TypeError {
  return createError(TypeError, ErrorCode.EVIDENCE_KEY_INVALID, message, cause);
}

function ed25519Key(pem: unknown, kind: 'private' | 'public'): KeyObject {
  let key: KeyObject;
  try {
    if (typeof pem !== 'string') throw new TypeError('not a string');
    key = kind === 'private' ? createPrivateKey(pem) : createPublicKey(pem);
  } catch (error) {
    throw keyInvalid(`The ${kind} key is not a PEM key: ${describeThrown(error)}`, error);
  }
  if (key.asymmetricKeyType !== 'ed25519')
    throw keyInvalid(`The ${kind} key is ${String(key.asymmetricKeyType)}, not Ed25519`);
  return key;
}

function partDigests(bundle: EvidenceBundle): EvidenceSignature['digests'] {
  return {
    job: digestJson(bundle.job),
    hashes: digestJson(bundle.hashes),
    checkpoint: digestJson(bundle.checkpoint ?? null),
  };
}

function signedText(bundle: EvidenceBundle, digests: EvidenceSignature['digests']): Buffer {
  const { format, exportedAt, head } = bundle;
  return Buffer.from(canonicalJson({ format, exportedAt, head, digests }), 'utf8');
}

/** Assembles a bundle (signed when a key is given); the parts come from the store. */
export function buildEvidence(
  job: Job,
  hashes: readonly (string | null)[],
  checkpoint: EvidenceCheckpoint | undefined,
  signingKey: string | undefined,
): EvidenceBundle {
  const privateKey = signingKey === undefined ? undefined : ed25519Key(signingKey, 'private');
  const bundle: EvidenceBundle = {
    format: EVIDENCE_FORMAT,
    exportedAt: new Date().toISOString(),
    job: toJsonSafe(job) as Job,
    hashes: [...hashes],
    head: hashes.at(-1) ?? null,
    ...(checkpoint === undefined ? {} : { checkpoint }),
  };
  if (privateKey === undefined) return bundle;
  const digests = partDigests(bundle);
  const signature: EvidenceSignature = {
    algorithm: 'ed25519',
    publicKey: createPublicKey(privateKey).export({ type: 'spki', format: 'pem' }).toString(),
    digests,
    value: sign(null, signedText(bundle, digests), privateKey).toString('base64'),
  };
  return { ...bundle, signature };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function checkSignature(
  bundle: EvidenceBundle,
  publicKey: KeyObject,
  problems: EvidenceProblem[],
): boolean {
  const { signature } = bundle;
  if (!isObject(signature) || !isObject(signature.digests)) {
    problems.push({ part: 'signature', reason: 'the bundle is not signed' });
    return false;
  }
  if (signature.algorithm !== 'ed25519') {
    problems.push({ part: 'signature', reason: 'the signature algorithm is not ed25519' });
    return false;
  }
  let valid: boolean;
  try {
    valid = verify(
      null,
      signedText(bundle, signature.digests),
      publicKey,
      Buffer.from(String(signature.value), 'base64'),
    );
  } catch {
    valid = false;
  }
  if (!valid) {
    problems.push({
      part: 'signature',
      reason:
        'the signature does not match this key: the signature, format, exportedAt, head or signed digests were changed, or another key signed it',
    });
    return false;
  }
  const digests = partDigests(bundle);
  for (const part of ['job', 'hashes', 'checkpoint'] as const) {
    if (digests[part] !== signature.digests[part])
      problems.push({ part, reason: `the ${part} is not what was signed: it was changed` });
  }
  return true;
}

function checkCheckpoint(
  bundle: EvidenceBundle,
  auditKey: string | undefined,
  problems: EvidenceProblem[],
): EvidenceVerification['checkpoint'] {
  const { checkpoint } = bundle;
  if (checkpoint === undefined) return 'absent';
  if (!isObject(checkpoint) || !isObject(checkpoint.entry) || !Array.isArray(checkpoint.proof)) {
    problems.push({ part: 'checkpoint', reason: 'the checkpoint is malformed' });
    return 'verified';
  }
  const { entry } = checkpoint;
  const jobId = (bundle.job as { id?: unknown }).id;
  if (entry.jobId !== jobId)
    problems.push({ part: 'checkpoint', reason: `the checkpoint's entry is for another job` });
  if (bundle.hashes[entry.events - 1] !== entry.hash || entry.events > bundle.hashes.length)
    problems.push({
      part: 'checkpoint',
      reason: `event ${entry.events - 1} is not the one the checkpoint sealed (its hash differs)`,
    });
  let root: string | undefined;
  try {
    root = rootOfProof(entry, checkpoint.proof);
  } catch {
    root = undefined;
  }
  if (root !== checkpoint.root)
    problems.push({
      part: 'checkpoint',
      reason: "the job's entry and proof do not lead to the checkpoint's root",
    });
  const keyed = String(checkpoint.hash).startsWith(KEYED_PREFIX);
  if (keyed && auditKey === undefined) return 'keyed (no audit key: not recomputed)';
  let hash: string | undefined;
  try {
    hash = checkpointHash(checkpoint, auditKey);
  } catch {
    hash = undefined;
  }
  if (hash !== checkpoint.hash)
    problems.push({
      part: 'checkpoint',
      reason: `checkpoint ${String(checkpoint.seq)} does not match its hash (seq, previous, root, events or at was changed)`,
    });
  return 'verified';
}

/**
 * Checks a bundle offline (docs/api.md, "verifyEvidence"): the chain recomputed from the events,
 * the record against its events' digests, the head, the checkpoint (entry, proof, root, hash),
 * and the signature with `publicKey`. Every problem found is reported, naming the part. Never
 * throws for a changed bundle; throws EVIDENCE_KEY_INVALID for a key that is not Ed25519 PEM.
 */
export function verifyEvidence(
  bundle: unknown,
  options: VerifyEvidenceOptions = {},
): EvidenceVerification {
  const publicKey =
    options.publicKey === undefined ? undefined : ed25519Key(options.publicKey, 'public');
  const auditKey = options.auditKey;
  const problems: EvidenceProblem[] = [];
  const refused = (part: string, reason: string): EvidenceVerification => ({
    ok: false,
    chain: 'recomputed',
    checkpoint: 'absent',
    signature: 'absent',
    problems: [{ part, reason }],
  });
  if (!isObject(bundle)) return refused('format', 'the bundle is not a JSON object');
  if (bundle.format !== EVIDENCE_FORMAT)
    return refused('format', `the format is not ${EVIDENCE_FORMAT}`);
  const job = bundle.job;
  const hashes = bundle.hashes;
  if (!isObject(job) || !Array.isArray(job.events))
    return refused('job', 'the job is not a record');
  if (!Array.isArray(hashes) || hashes.some((hash) => hash !== null && typeof hash !== 'string'))
    return refused('hashes', 'the hashes are not a list of chain hashes');
  const evidence = bundle as unknown as EvidenceBundle;

  let signature: EvidenceVerification['signature'] = 'absent';
  if (publicKey !== undefined) {
    if (checkSignature(evidence, publicKey, problems)) signature = 'verified';
  } else if (bundle.signature !== undefined) {
    signature = 'not checked (no public key)';
  }

  const keyed = hashes.some((hash) => typeof hash === 'string' && hash.startsWith(KEYED_PREFIX));
  const recompute = !keyed || auditKey !== undefined;
  const record = verifyRecord(
    evidence.job,
    recompute ? (hashes as (string | null)[]) : undefined,
    auditKey,
  );
  if (!record.ok) {
    const at = record.eventIndex === undefined ? '' : ` (event ${record.eventIndex})`;
    const part = /hash|chain|keyed/.test(record.reason) ? 'hashes' : 'job';
    problems.push({ part, reason: `${record.reason}${at}` });
  }
  if (!recompute && signature !== 'verified')
    problems.push({
      part: 'hashes',
      reason: KEYED_BUNDLE_WITHOUT_KEY,
    });
  if (evidence.head !== (hashes.at(-1) ?? null))
    problems.push({ part: 'head', reason: 'the head is not the last chain hash' });
  const checkpoint = checkCheckpoint(evidence, auditKey, problems);
  return {
    ok: problems.length === 0,
    chain: recompute ? 'recomputed' : 'keyed (no audit key: not recomputed)',
    checkpoint,
    signature,
    problems,
  };
}
