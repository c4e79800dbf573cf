/**
 * `npm run quality -- --base <commit>`: compares a base commit with the working tree and prints
 * a review report. Reads only: it runs no project code, installs and writes nothing.
 *
 * Exit codes: 0 clean; 1 review required; 2 failure (bad arguments, a base that is not a commit,
 * unreadable or malformed inputs, syntax errors, dynamic access the analyser cannot judge).
 * The work is runHarness (harness.ts); this file only prints its result.
 */
import { runHarness } from './harness.js';

try {
  const result = await runHarness(process.argv.slice(2), { cwd: process.cwd(), env: process.env });
  process.stdout.write(result.stdout);
  process.stderr.write(result.stderr);
  process.exitCode = result.code;
} catch (error) {
  // An unexpected fault is still a failure (exit 2), never a pass.
  const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
  process.stderr.write(`quality: error: internal error: ${message}\n`);
  process.exitCode = 2;
}
