/**
 * The reasons a keyed (HMAC) record gives when it is checked without its audit key: a missing
 * key, which says nothing of tampering. The CLI tells them from a changed record by these, and
 * exits 2 rather than print NOT INTACT (docs/api.md, "runtime.verifyJob").
 */

/** The end of the reason of a keyed chain or checkpoint verified without the audit key. */
export const KEYED_WITHOUT_KEY =
  'keyed (hmac-sha256): verify with its audit key (auditKey or WARRANT_AUDIT_KEY)';

/** Whether a verification reason (a job's, or a store problem's) says only that the key was missing. */
export function isKeyedWithoutKey(reason: string): boolean {
  return reason.endsWith(KEYED_WITHOUT_KEY);
}

/** The problem of a keyed evidence bundle checked with neither its audit key nor a signature. */
export const KEYED_BUNDLE_WITHOUT_KEY =
  'the chain is keyed (hmac-sha256): give the audit key, or the public key of a signed bundle';
