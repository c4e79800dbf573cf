/**
 * Store checkpoints (docs/api.md, "Store checkpoints"): the durable stores seal the events
 * committed since the last checkpoint into one record chained to the previous one, so a job
 * deleted, truncated, restored from an older copy or reordered after it was sealed is found by
 * `verifyStore`, even where each job's own chain was rewritten to match.
 *
 * A checkpoint seals, for each job that gained events, one entry `[jobId, events, hash]`: the
 * number of the job's events and the chain hash of its last one (event-chain.ts), which covers
 * every event before it. The entries, sorted by job id, are the leaves of a Merkle tree (RFC 6962
 * shape: leaf = SHA-256(0x00 || JCS(entry)), node = SHA-256(0x01 || left || right), an odd node
 * carried up), whose root the checkpoint holds; an evidence bundle proves one job's entry with
 * its path to the root, without the other jobs. The checkpoint's hash is
 *
 *   hash = 'sha256:' + hex(SHA-256(previous + '\n' + JCS({ seq, previous, root, events, at })))
 *
 * (HMAC-SHA-256 under the audit key, prefix 'hmac-sha256:', as for the event chain), `previous`
 * the previous checkpoint's hash ('' for the first).
 */
import { createHash } from 'node:crypto';
import { canonicalJson, hmacSha256Digest, sha256Digest } from '../json/canonical-json.js';

/** What a checkpoint seals and chains; `hash` is computed over the other fields. */
export interface Checkpoint {
  /** 1, 2, 3, ... in the order they were written. */
  readonly seq: number;
  /** The hash of checkpoint `seq - 1`; '' for the first. */
  readonly previous: string;
  /** The Merkle root of its entries. */
  readonly root: string;
  /** How many events it sealed that no earlier checkpoint had sealed. */
  readonly events: number;
  /** When it was written (ISO 8601). */
  readonly at: string;
  readonly hash: string;
}

/** One job's sealed state: its first `events` events, the last of them with chain hash `hash`. */
export interface CheckpointEntry {
  readonly jobId: string;
  readonly events: number;
  readonly hash: string;
}

/** A step of a Merkle proof: the sibling's hash, and whether it is on the left. */
export interface ProofStep {
  readonly left: boolean;
  readonly hash: string;
}

/** The hash of a checkpoint's fields, chained to `previous` (plain or keyed). */
export function checkpointHash(
  fields: Omit<Checkpoint, 'hash'>,
  auditKey: string | undefined,
): string {
  const { seq, previous, root, events, at } = fields;
  const text = `${previous}\n${canonicalJson({ seq, previous, root, events, at })}`;
  return auditKey === undefined ? sha256Digest(text) : hmacSha256Digest(auditKey, text);
}

function sha256Hex(prefix: number, ...parts: string[]): string {
  const hash = createHash('sha256').update(Buffer.of(prefix));
  for (const part of parts) hash.update(part, 'utf8');
  return hash.digest('hex');
}

/** The Merkle leaf of one entry. */
export function entryLeaf(entry: CheckpointEntry): string {
  return sha256Hex(0, canonicalJson([entry.jobId, entry.events, entry.hash]));
}

/** Entries in leaf order: by job id (UTF-16 code units, as JavaScript sorts). */
export function sortEntries(entries: readonly CheckpointEntry[]): CheckpointEntry[] {
  return [...entries].sort((a, b) => (a.jobId < b.jobId ? -1 : a.jobId > b.jobId ? 1 : 0));
}

/** The levels of the tree over sorted leaves, leaves first, root level last. */
function levels(leaves: readonly string[]): string[][] {
  const all = [[...leaves]];
  let level = all[0] as string[];
  while (level.length > 1) {
    const next: string[] = [];
    for (let index = 0; index < level.length; index += 2) {
      const left = level[index] as string;
      const right = level[index + 1];
      next.push(right === undefined ? left : sha256Hex(1, left, right));
    }
    all.push(next);
    level = next;
  }
  return all;
}

/** The Merkle root of entries (sorted here); 'sha256:' + hex. No entries: the hash of nothing. */
export function merkleRoot(entries: readonly CheckpointEntry[]): string {
  const leaves = sortEntries(entries).map(entryLeaf);
  if (leaves.length === 0) return `sha256:${sha256Hex(0)}`;
  return `sha256:${(levels(leaves).at(-1) as string[])[0] as string}`;
}

/** The path from one job's entry to the root; undefined when no entry has that job id. */
export function merkleProof(
  entries: readonly CheckpointEntry[],
  jobId: string,
): ProofStep[] | undefined {
  const sorted = sortEntries(entries);
  let index = sorted.findIndex((entry) => entry.jobId === jobId);
  if (index < 0) return undefined;
  const proof: ProofStep[] = [];
  for (const level of levels(sorted.map(entryLeaf)).slice(0, -1)) {
    const sibling = index % 2 === 0 ? index + 1 : index - 1;
    const hash = level[sibling];
    if (hash !== undefined) proof.push({ left: sibling < index, hash });
    index = Math.floor(index / 2);
  }
  return proof;
}

/** The root an entry and its proof lead to. */
export function rootOfProof(entry: CheckpointEntry, proof: readonly ProofStep[]): string {
  let hash = entryLeaf(entry);
  for (const step of proof)
    hash = step.left ? sha256Hex(1, step.hash, hash) : sha256Hex(1, hash, step.hash);
  return `sha256:${hash}`;
}

/** An entry with the checkpoint that sealed it. */
export interface SealedEntry extends CheckpointEntry {
  readonly checkpoint: number;
}

/** The head of a store's checkpoint chain: its last checkpoint. */
export interface CheckpointHead {
  readonly seq: number;
  readonly hash: string;
}

/**
 * The checkpoint after `head` sealing `current` (each job's state now) against what earlier
 * checkpoints sealed of the same jobs (`sealed`, by job id); undefined when no job changed.
 */
export function nextCheckpoint(
  head: CheckpointHead | undefined,
  current: readonly CheckpointEntry[],
  sealed: ReadonlyMap<string, CheckpointEntry>,
  at: string,
  auditKey: string | undefined,
): { checkpoint: Checkpoint; entries: CheckpointEntry[] } | undefined {
  const entries: CheckpointEntry[] = [];
  let events = 0;
  for (const entry of current) {
    const before = sealed.get(entry.jobId);
    if (before !== undefined && before.events === entry.events && before.hash === entry.hash)
      continue;
    entries.push(entry);
    events += Math.max(0, entry.events - (before?.events ?? 0));
  }
  if (entries.length === 0) return undefined;
  const fields = {
    seq: (head?.seq ?? 0) + 1,
    previous: head?.hash ?? '',
    root: merkleRoot(entries),
    events,
    at,
  };
  return { checkpoint: { ...fields, hash: checkpointHash(fields, auditKey) }, entries };
}
