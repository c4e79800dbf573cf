/** `warrant evidence verify <file>`: checks an evidence bundle offline, with no store. */
import { writeOut } from '../output.js';
import { readFileSync } from 'node:fs';
import { verifyEvidence, type EvidenceVerification } from '../../index.js';
import { parseCommand, text } from '../parse.js';
import { UsageError } from '../usage-error.js';
import { missingAuditKey, readKey } from './jobs.js';
import { KEYED_BUNDLE_WITHOUT_KEY } from '../../record/missing-key.js';

export const evidenceHelp = `Usage: warrant evidence verify <file> [--public-key <pem file>] [--json]

Checks an evidence bundle (warrant jobs export) offline, with no store: the event chain
recomputed (a keyed chain with WARRANT_AUDIT_KEY), the record against its events' digests, the
checkpoint that sealed it, and, with --public-key (Ed25519, PEM), its signature. Every change
found is named.
Exit codes: 0 intact; 1 not intact; 2 bad usage (an unreadable file or key, a file that is not
JSON, a keyed bundle with neither WARRANT_AUDIT_KEY nor a verified signature).`;

function summary(file: string, verification: EvidenceVerification, jobId: unknown): string {
  if (!verification.ok)
    return verification.problems
      .map((problem) => `evidence ${file}: NOT INTACT: ${problem.part}: ${problem.reason}`)
      .join('\n');
  return `evidence ${file}: intact (job ${String(jobId)}; chain ${verification.chain}; checkpoint ${verification.checkpoint}; signature ${verification.signature})`;
}

export function evidenceCommand(args: readonly string[]): Promise<number> {
  const { values, positionals } = parseCommand(args, {
    'public-key': { type: 'string' },
    json: { type: 'boolean' },
  });
  if (values.help) {
    console.log(evidenceHelp);
    return Promise.resolve(0);
  }
  const [action, file, extra] = positionals;
  if (action !== 'verify' || file === undefined || extra !== undefined)
    throw new UsageError('expected: warrant evidence verify <file>');
  const keyFile = text(values, 'public-key');
  const publicKey = keyFile === undefined ? undefined : readKey(keyFile);
  let bundle: unknown;
  try {
    bundle = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new UsageError(
      `cannot read ${JSON.stringify(file)} as JSON: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    );
  }
  const auditKey = process.env.WARRANT_AUDIT_KEY;
  let verification: EvidenceVerification;
  try {
    verification = verifyEvidence(bundle, {
      publicKey,
      auditKey: auditKey === '' ? undefined : auditKey,
    });
  } catch (error) {
    throw new UsageError(`--public-key: ${(error as Error).message}`);
  }
  // Only the missing key stands between the bundle and a verdict: exit 2, not NOT INTACT.
  if (
    verification.problems.length > 0 &&
    verification.problems.every((problem) => problem.reason === KEYED_BUNDLE_WITHOUT_KEY)
  )
    throw missingAuditKey(`evidence ${file}`);
  writeOut(
    values.json
      ? `${JSON.stringify(verification, null, 2)}\n`
      : `${summary(file, verification, (bundle as { job?: { id?: unknown } }).job?.id)}\n`,
  );
  return Promise.resolve(verification.ok ? 0 : 1);
}
