/**
 * `npm run quality -- --base <commit>`: compares a base commit with the working tree and prints
 * a review report. Reads only: it runs no project code, installs and writes nothing.
 *
 * Exit codes: 0 clean; 1 review required; 2 failure (bad arguments, a base that is not a commit,
 * unreadable or malformed inputs, syntax errors, dynamic access the analyser cannot judge).
 */
import type { Report } from './analyze.js';
import { QualityFailure } from './failure.js';

const USAGE = `Usage: npm run quality -- --base <commit> [--json]

Compares <commit> with the working tree (tracked files and untracked files git does not
ignore) and reports, in order: direct dependency changes, the lockfile, growth of src/, test/
and tools/quality/, verification-control changes, and governance sites (capability execute
and executor calls) against tools/quality/governance-baseline.json as committed in <commit>.

Options:
  --base <commit>   the commit to compare with (required), e.g. origin/main or HEAD
  --json            print the report as JSON instead of text
  -h, --help        print this help

Exit codes: 0 clean, 1 review required, 2 failure (never a pass; the reason is on stderr).
`;

interface Arguments {
  readonly base?: string;
  readonly json: boolean;
  readonly help: boolean;
}

function parseArguments(argv: readonly string[]): Arguments {
  let base: string | undefined;
  let json = false;
  let help = false;
  for (let index = 0; index < argv.length; index++) {
    const argument = argv[index] as string;
    if (argument === '--help' || argument === '-h') help = true;
    else if (argument === '--json') json = true;
    else if (argument === '--base' || argument.startsWith('--base=')) {
      if (base !== undefined) throw new QualityFailure('--base given more than once');
      const value = argument === '--base' ? argv[++index] : argument.slice('--base='.length);
      if (value === undefined || value === '' || value.startsWith('-')) {
        throw new QualityFailure('--base needs a commit, e.g. --base origin/main');
      }
      base = value;
    } else if (argument.startsWith('-')) {
      throw new QualityFailure(`unknown option ${argument}`);
    } else {
      throw new QualityFailure(`unexpected argument ${JSON.stringify(argument)}`);
    }
  }
  return { base, json, help };
}

function fail(message: string): void {
  process.stderr.write(`quality: error: ${message}\n`);
  process.exitCode = 2;
}

async function main(argv: readonly string[]): Promise<void> {
  let args: Arguments;
  try {
    args = parseArguments(argv);
  } catch (error) {
    if (!(error instanceof QualityFailure)) throw error;
    fail(`${error.message}\n\n${USAGE}`);
    return;
  }
  if (args.help) {
    process.stdout.write(USAGE);
    return;
  }
  if (args.base === undefined) {
    fail(`--base <commit> is required\n\n${USAGE}`);
    return;
  }
  // Loaded only now: the analysis brings in the TypeScript compiler, which --help does not need.
  const { analyze } = await import('./analyze.js');
  const { renderText } = await import('./report.js');
  let report: Report;
  try {
    report = analyze(process.cwd(), args.base);
  } catch (error) {
    if (!(error instanceof QualityFailure)) throw error;
    fail(error.message);
    return;
  }
  process.stdout.write(args.json ? `${JSON.stringify(report, null, 2)}\n` : renderText(report));
  for (const failure of report.failures) process.stderr.write(`quality: error: ${failure}\n`);
  process.exitCode = report.exitCode;
}

try {
  await main(process.argv.slice(2));
} catch (error) {
  // An unexpected fault is still a failure (exit 2), never a pass.
  const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
  fail(`internal error: ${message}`);
}
