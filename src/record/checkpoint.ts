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
 *
 * A checkpoint also seals the approvals entered in the store's ledger of consumed approvals since
 * the last one (stores/shared/approval-ledger.ts): each is one more leaf, SHA-256(0x00 ||
 * JCS(['approval', jobId, position, stepId, inputDigest, requestHash, decision, at])), after the
 * job entries' leaves, in (jobId, position) order. A checkpoint with no approvals has the root it
 * had before the ledger was sealed, so earlier checkpoints and evidence bundles verify as they did.
 *
 * A store's chain origin (docs/decisions.md, "Jobs without a chain") is the checkpoint written
 * once, when the store is created or first opened by a version that writes one: its entries are
 * the jobs recorded before the event chain (schema version 1 or 2), `[jobId, events,
 * 'unchained']`, and a store created with chains has none (the one checkpoint with no leaves).
 * Every other job must have a chain: a seal that finds a job whose last event has no hash seals
 * it as `[jobId, events, 'no hash']`, which `verifyStore` reports.
 */
import { hash as oneShotHash } from 'node:crypto';
import { canonicalJson, hmacSha256Digest, sha256Digest } from '../json/canonical-json.js';
import type { ApprovalLeaf, Checkpoint, CheckpointEntry, LedgerEntry } from '../jobs/job-store.js';

/** The hash of a chain origin's entry: a job recorded before the event chain (schema version 3). */
export const UNCHAINED_ENTRY = 'unchained';

/** The hash of an entry sealing a job whose last event has no chain hash (not written by Warrant). */
export const MISSING_ENTRY = 'no hash';

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

/** The leaf hash of a text: SHA-256(0x00 || UTF-8 of text), hex (one-shot: no hash object). */
function leafHex(text: string): string {
  return oneShotHash('sha256', `\u0000${text}`, 'hex');
}

/** The hash of an inner node over its children's hex: SHA-256(0x01 || left || right), hex. */
function nodeHex(left: string, right: string): string {
  return oneShotHash('sha256', `\u0001${left}${right}`, 'hex');
}

/** The leaf of one ledger entry ('sha256:' + hex). */
export function ledgerLeaf(entry: LedgerEntry): string {
  const { jobId, position, stepId, inputDigest, requestHash, decision, at } = entry;
  return `sha256:${leafHex(canonicalJson(['approval', jobId, position, stepId, inputDigest, requestHash, decision, at]))}`;
}

/** The leaves of ledger entries in tree order (jobId, then position), without their prefix. */
function approvalLeaves(approvals: readonly ApprovalLeaf[]): string[] {
  return [...approvals]
    .sort((a, b) => (a.jobId < b.jobId ? -1 : a.jobId > b.jobId ? 1 : a.position - b.position))
    .map((approval) => approval.hash.slice('sha256:'.length));
}

/** The Merkle leaf of one entry. */
export function entryLeaf(entry: CheckpointEntry): string {
  const { jobId, events, hash } = entry;
  // JCS of two strings and an integer is JSON.stringify's text (canonical-json.ts): the same
  // leaf, without walking the array; anything else (a malformed bundle) goes through JCS.
  const text =
    typeof jobId === 'string' && typeof hash === 'string' && Number.isSafeInteger(events)
      ? JSON.stringify([jobId, events, hash])
      : canonicalJson([jobId, events, hash]);
  return leafHex(text);
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
      next.push(right === undefined ? left : nodeHex(left, right));
    }
    all.push(next);
    level = next;
  }
  return all;
}

/**
 * The Merkle root of entries (sorted here) and ledger leaves; 'sha256:' + hex. No leaves: the hash
 * of nothing.
 */
export function merkleRoot(
  entries: readonly CheckpointEntry[],
  approvals: readonly ApprovalLeaf[] = [],
): string {
  const leaves = sortEntries(entries).map(entryLeaf);
  if (approvals.length > 0) leaves.push(...approvalLeaves(approvals));
  if (leaves.length === 0) return `sha256:${leafHex('')}`;
  return `sha256:${(levels(leaves).at(-1) as string[])[0] as string}`;
}

/** The path from one job's entry to the root; undefined when no entry has that job id. */
export function merkleProof(
  entries: readonly CheckpointEntry[],
  jobId: string,
  approvals: readonly ApprovalLeaf[] = [],
): ProofStep[] | undefined {
  const sorted = sortEntries(entries);
  let index = sorted.findIndex((entry) => entry.jobId === jobId);
  if (index < 0) return undefined;
  const proof: ProofStep[] = [];
  const leaves = sorted.map(entryLeaf);
  if (approvals.length > 0) leaves.push(...approvalLeaves(approvals));
  for (const level of levels(leaves).slice(0, -1)) {
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
  for (const step of proof) hash = step.left ? nodeHex(step.hash, hash) : nodeHex(hash, step.hash);
  return `sha256:${hash}`;
}

/** The head of a store's checkpoint chain: its last checkpoint. */
export interface CheckpointHead {
  readonly seq: number;
  readonly hash: string;
}

/**
 * The checkpoint after `head` sealing `current` (each job's state now) against what earlier
 * checkpoints sealed of the same jobs (`sealed`, by job id), and the ledger entries `approvals`
 * entered since the last one; undefined when no job changed and no approval was entered.
 */
export function nextCheckpoint(
  head: CheckpointHead | undefined,
  current: readonly CheckpointEntry[],
  sealed: ReadonlyMap<string, CheckpointEntry>,
  at: string,
  auditKey: string | undefined,
  approvals: readonly ApprovalLeaf[] = [],
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
  if (entries.length === 0 && approvals.length === 0) return undefined;
  const fields = {
    seq: (head?.seq ?? 0) + 1,
    previous: head?.hash ?? '',
    root: merkleRoot(entries, approvals),
    events,
    at,
  };
  return { checkpoint: { ...fields, hash: checkpointHash(fields, auditKey) }, entries };
}

/**
 * The chain origin after `head`: a checkpoint sealing the jobs recorded before the event chain,
 * each with its number of events (none in a store created with chains). It seals no chained
 * event (`events` 0) and is the only checkpoint that can have no leaves.
 */
export function originCheckpoint(
  head: CheckpointHead | undefined,
  unchained: readonly { readonly jobId: string; readonly events: number }[],
  at: string,
  auditKey: string | undefined,
): { checkpoint: Checkpoint; entries: CheckpointEntry[] } {
  const entries = unchained.map(({ jobId, events }) => ({ jobId, events, hash: UNCHAINED_ENTRY }));
  const fields = {
    seq: (head?.seq ?? 0) + 1,
    previous: head?.hash ?? '',
    root: merkleRoot(entries),
    events: 0,
    at,
  };
  return { checkpoint: { ...fields, hash: checkpointHash(fields, auditKey) }, entries };
}
