/**
 * Tamper evidence for the durable stores (docs/api.md, "The decision record"): each stored event
 * carries a hash over the previous event's hash and its own canonical text, so an edited,
 * removed or reordered event breaks the chain from that event on:
 *
 *   hash = 'sha256:' + hex(SHA-256(previous + '\n' + JCS(event)))
 *
 * `previous` is the previous event's whole hash text ('' for a job's first event), the event is
 * the `JobEvent` as `getJob` returns it. With an audit key the hash is HMAC-SHA-256 under the
 * key's UTF-8 bytes, prefix 'hmac-sha256:', so a database writer without the key cannot forge a
 * chain.
 */
import { canonicalJson, hmacSha256Digest, sha256Digest } from '../json/canonical-json.js';
import type { JobEvent } from '../jobs/job.js';

export const KEYED_PREFIX = 'hmac-sha256:';

export function chainHash(previous: string, event: JobEvent, auditKey: string | undefined): string {
  const text = `${previous}\n${canonicalJson(event)}`;
  return auditKey === undefined ? sha256Digest(text) : hmacSha256Digest(auditKey, text);
}

/** The hashes of events appended after `previous`, in order. */
export function chainHashes(
  previous: string,
  events: readonly JobEvent[],
  auditKey: string | undefined,
): string[] {
  const hashes: string[] = [];
  let last = previous;
  for (const event of events) {
    last = chainHash(last, event, auditKey);
    hashes.push(last);
  }
  return hashes;
}
