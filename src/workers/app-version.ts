/**
 * The application version a worker gives DBOS Transact (docs/api.md, "Workers"): a digest of the
 * capabilities it serves (names and versions) and of its policy file, if any. Workers with the
 * same version run the same jobs the same way; a worker whose capabilities differ does not take
 * up a job it could not run as it was admitted (docs/decisions.md, "Workers on DBOS").
 */
import { createHash } from 'node:crypto';

export interface VersionedCapability {
  readonly name: string;
  readonly version: string;
}

/** `warrant-<16 hex>`: the same set in any order gives the same version. */
export function applicationVersion(
  capabilities: readonly VersionedCapability[],
  policyDigest?: string,
): string {
  const lines = capabilities.map(({ name, version }) => JSON.stringify([name, version])).sort();
  const hash = createHash('sha256');
  for (const line of lines) hash.update(`${line}\n`);
  if (policyDigest !== undefined) hash.update(`policy ${policyDigest}\n`);
  return `warrant-${hash.digest('hex').slice(0, 16)}`;
}
